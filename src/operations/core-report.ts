// The Wasm core as status reports it: which core answered, from which file, whether its own
// known-answer checks pass, and a probe hashed and estimated by it, which anyone can check.
import { toHex } from "../../bindings/index.ts";
import type { CoreState } from "../core.ts";

export type { CoreState } from "../core.ts";

/** A fixed text the core hashes on every status call, so a reader can check the digest anywhere. */
export const STATUS_PROBE = "pi-fold status probe: the WebAssembly core answered";

export interface CoreReport {
	version: string;
	selfCheck: { ok: boolean; failed: string[] };
	/** The .wasm file the core was instantiated from. */
	source: string;
	probe: { text: string; sha256: string; tokens: number };
}

/** The report of a loaded core (its checks run now). */
export function coreReport(state: Extract<CoreState, { ok: true }>): CoreReport {
	const { core } = state;
	// core.sha256 is the Wasm one-shot digest (the Node entry reroutes only hashSpans to node:crypto).
	const probe = {
		text: STATUS_PROBE,
		sha256: toHex(core.sha256(STATUS_PROBE)),
		tokens: core.estimateTokens(STATUS_PROBE),
	};
	return { version: core.version, selfCheck: core.selfCheck(), source: state.source, probe };
}
