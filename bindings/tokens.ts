// Placeholder: filled in by the token-estimation work.
import type { CoreInstance } from "./instance.ts";

// biome-ignore lint/complexity/noBannedTypes: placeholder until the token API lands
export type TokensApi = {};

export function tokensApi(_core: CoreInstance): TokensApi {
	return {};
}
