// pi-fold's Pi extension entry (package.json "pi.extensions"). Pi loads it with jiti, so the
// bindings' .ts sources and the .wasm next to them are used straight from the installed package.
import { fileURLToPath } from "node:url";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import * as piHost from "@earendil-works/pi-coding-agent";
import { CORE_WASM_URL, nodeCore } from "../bindings/node.ts";
import { coreLoader } from "./core.ts";
import { type RuntimeHandle, registerRuntimeHooks } from "./runtime/hooks.ts";
import { type PiFoldOptions, parseOptions } from "./runtime/options.ts";
import { checkHost } from "./runtime/version-guard.ts";
import { registerFoldTool } from "./tool/register.ts";
import { hostPiVersion, packageVersion } from "./versions.ts";

export type { PiFoldOptions } from "./runtime/options.ts";

export interface PiFold {
	/** The folding runtime of this extension instance (undefined until the core loads, or if it cannot). */
	runtime: RuntimeHandle;
}

/**
 * Register pi-fold with explicit options (SPEC 8). Refuses invalid options by name, and a Pi without
 * context_edit support by the version it needs (both throw at load).
 */
export function registerPiFold(pi: ExtensionAPI, options: PiFoldOptions = {}): PiFold {
	// At load time, before any hook exists: a Pi without context_edit gets a named refusal.
	const host = checkHost(piHost);
	if (!host.ok) throw new Error(host.reason);
	const parsed = parseOptions(options);
	if (!parsed.ok) throw new Error(`pi-fold: invalid options: ${parsed.problems.join("; ")}`);
	// Loaded on first use, not here: Pi runs extension factories also for commands that start no session.
	const core = coreLoader(nodeCore, fileURLToPath(CORE_WASM_URL));
	const runtime = registerRuntimeHooks(pi, core, parsed.settings);
	registerFoldTool(pi, {
		core,
		packageVersion,
		piVersion: hostPiVersion,
		runtime: () => runtime.get()?.status(),
	});
	return { runtime };
}

export default function piFold(pi: ExtensionAPI): void {
	registerPiFold(pi);
}
