// Placeholder: filled in by the lattice work.
import type { CoreInstance } from "./instance.ts";

// biome-ignore lint/complexity/noBannedTypes: placeholder until the lattice API lands
export type LatticeApi = {};

export function latticeApi(_core: CoreInstance): LatticeApi {
	return {};
}
