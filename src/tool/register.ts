// Registers the pi_fold_context tool with Pi.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { runFoldAction } from "./dispatch.ts";
import type { ToolEnv } from "./env.ts";
import type { FoldToolDetails } from "./result.ts";
import { FOLD_TOOL_NAME, foldToolParameters } from "./schema.ts";

export function registerFoldTool(pi: ExtensionAPI, env: ToolEnv): void {
	pi.registerTool<typeof foldToolParameters, FoldToolDetails>({
		name: FOLD_TOOL_NAME,
		label: "pi-fold",
		description:
			"Inspect pi-fold, the lossless context folding for this session. " +
			'action "status" reports the pi-fold version, its WebAssembly core (version, self-check) and the Pi version.',
		promptSnippet: "Report pi-fold's lossless context-folding state",
		parameters: foldToolParameters,
		// Actions will share mutable fold state; one call at a time keeps them simple and ordered.
		executionMode: "sequential",
		execute: (_toolCallId, params) => runFoldAction(params, env),
	});
}
