// Loads the Wasm core once for the extension and turns a load failure into data: a tool call
// must be able to report why the core is missing instead of throwing into Pi's agent loop.
import type { PiFoldCore } from "../bindings/index.ts";
import { errorMessage } from "./vocabulary.ts";

export type CoreState =
	| { ok: true; core: PiFoldCore /** Where the .wasm came from (proves which copy loaded). */; source: string }
	| { ok: false; source: string; reason: string };

/** A memoized, non-throwing loader: the first call loads, later calls return the same state. */
export function coreLoader(load: () => PiFoldCore, source: string): () => CoreState {
	let state: CoreState | undefined;
	return () => {
		if (state) return state;
		try {
			state = { ok: true, core: load(), source };
		} catch (err) {
			state = { ok: false, source, reason: errorMessage(err) };
		}
		return state;
	};
}
