// pi-fold's Pi extension entry (package.json "pi.extensions"). Pi loads it with jiti, so the
// bindings' .ts sources and the .wasm next to them are used straight from the installed package.
import { fileURLToPath } from "node:url";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import * as piHost from "@earendil-works/pi-coding-agent";
import { CORE_WASM_URL, nodeCore } from "../bindings/node.ts";
import { registerFoldSettingsCommand } from "./commands/fold-settings.ts";
import { registerFoldCommands } from "./commands/register.ts";
import { coreLoader } from "./core.ts";
import { type RuntimeHandle, registerRuntimeHooks } from "./host/hooks.ts";
import { type PiFoldOptions, parseOptions } from "./host/options.ts";
import { checkHost } from "./host/version-guard.ts";
import { hostPiVersion, packageVersion } from "./host/versions.ts";
import {
	type CandidateContext,
	type ProjectionCandidate,
	projectionCandidateProvider,
} from "./operations/projection-candidates.ts";
import { LiveSettings } from "./settings/live-settings.ts";
import { settingsPath } from "./settings/settings-file.ts";
import { registerFoldTool } from "./tool/register.ts";
import { registerFoldBar } from "./ui/fold-bar.ts";
import { registerNoticeRenderers } from "./ui/notice-renderers.ts";
import { registerCleanChat } from "./ui/tool-renderer.ts";

export type { PiFoldOptions } from "./host/options.ts";
export type { ProjectionCandidate } from "./operations/projection-candidates.ts";

export interface PiFold {
	/** The folding runtime of this extension instance (undefined until the core loads, or if it cannot). */
	runtime: RuntimeHandle;
	/** One record per fold the window shows collapsed, in window order; [] with no open session. Never throws. */
	projectionCandidates: (ctx?: CandidateContext) => ProjectionCandidate[];
}

/**
 * Register pi-fold with explicit options. Refuses invalid options by name, and a Pi without
 * context_edit support by the version it needs (both throw at load).
 * Thresholds: `options.thresholds` when given (they win for this session; /fold-settings still saves
 * to the file), else the user's settings file (~/.config/pi-fold/settings.json, see
 * src/settings/settings-file.ts), else the defaults.
 */
export function registerPiFold(pi: ExtensionAPI, options: PiFoldOptions = {}): PiFold {
	// At load time, before any hook exists: a Pi without context_edit gets a named refusal.
	const host = checkHost(piHost);
	if (!host.ok) throw new Error(host.reason);
	const parsed = parseOptions(options);
	if (!parsed.ok) throw new Error(`pi-fold: invalid options: ${parsed.problems.join("; ")}`);
	// Loaded on first use, not here: Pi runs extension factories also for commands that start no session.
	const core = coreLoader(nodeCore, fileURLToPath(CORE_WASM_URL));
	// Puts the settings file's thresholds into parsed.settings unless the options fixed them.
	const live = new LiveSettings(parsed.settings, settingsPath(), options.thresholds !== undefined);
	const runtime = registerRuntimeHooks(pi, core, parsed.settings);
	registerFoldSettingsCommand(pi, { live, runtime });
	// After the runtime hooks: its work for each turn runs in the runtime's handler, after the runtime's.
	const bar = registerFoldBar(pi, runtime);
	registerFoldCommands(pi, runtime, bar);
	registerNoticeRenderers(pi);
	registerFoldTool(pi, {
		core,
		packageVersion,
		piVersion: hostPiVersion,
		runtime: () => runtime.get()?.status(),
		actions: () => runtime.actions(),
	});
	registerCleanChat(pi, runtime);
	return { runtime, projectionCandidates: projectionCandidateProvider(() => runtime.get()) };
}

export default function piFold(pi: ExtensionAPI): void {
	registerPiFold(pi);
}
