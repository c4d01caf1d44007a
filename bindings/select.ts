// Placeholder: filled in by the select work.
import type { CoreInstance } from "./instance.ts";

// biome-ignore lint/complexity/noBannedTypes: placeholder until the select API lands
export type SelectApi = {};

export function selectApi(_core: CoreInstance): SelectApi {
	return {};
}
