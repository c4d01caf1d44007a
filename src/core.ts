// Loads the Wasm core once for the extension and turns a load failure into data: a tool call
// must be able to report why the core is missing instead of throwing into Pi's agent loop, and
// a person must learn how to get it back (the command, and the folder to run it in).
import { existsSync } from "node:fs";
import { basename, dirname, join, relative } from "node:path";
import type { PiFoldCore } from "../bindings/index.ts";
import { errorMessage } from "./vocabulary.ts";

export type CoreState =
	| { ok: true; core: PiFoldCore /** Where the .wasm came from (proves which copy loaded). */; source: string }
	| {
			ok: false;
			source: string;
			reason: string;
			/** How to get the core back, for a person: the command and the folder. */
			fix: string;
	  };

/** The command that compiles the core from assembly/ (package.json's build:wasm). */
export const BUILD_CORE = "npm run build:wasm";

/**
 * How to get a core back that did not load from `source` (<package>/wasm/pi-fold-core.wasm). A
 * source checkout (a git clone, a local folder) rebuilds it from assembly/, installing the compiler
 * first when the checkout has only its runtime dependencies (as after a git install); the build is
 * deterministic, so this gives the committed bytes. An installed package has no sources: it is
 * installed again.
 */
export function coreFix(source: string): string {
	const root = dirname(dirname(source));
	const after = "then /reload or restart Pi";
	if (existsSync(join(root, "assembly"))) {
		const compiler = existsSync(join(root, "node_modules", "assemblyscript"));
		return `run \`${compiler ? BUILD_CORE : `npm install && ${BUILD_CORE}`}\` in ${root}, ${after}`;
	}
	const modules = dirname(root);
	if (basename(modules) === "node_modules") {
		return `reinstall pi-fold: remove ${root} and run \`npm install\` in ${dirname(modules)}, ${after}`;
	}
	return `reinstall pi-fold (${relative(root, source)} is missing or damaged in ${root}), ${after}`;
}

/** A memoized, non-throwing loader: the first call loads, later calls return the same state. */
export function coreLoader(load: () => PiFoldCore, source: string): () => CoreState {
	let state: CoreState | undefined;
	return () => {
		if (state) return state;
		try {
			state = { ok: true, core: load(), source };
		} catch (err) {
			state = { ok: false, source, reason: errorMessage(err), fix: coreFix(source) };
		}
		return state;
	};
}
