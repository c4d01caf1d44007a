// Registers the pi_fold_context tool with Pi.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { AUTOMATED_NOTICE_TAG, FOLD_TOOL_NAME } from "../vocabulary.ts";
import { runFoldAction } from "./dispatch.ts";
import type { ToolEnv } from "./env.ts";
import type { FoldToolDetails } from "./result.ts";
import { foldToolParameters } from "./schema.ts";

export function registerFoldTool(pi: ExtensionAPI, env: ToolEnv): void {
	pi.registerTool<typeof foldToolParameters, FoldToolDetails>({
		name: FOLD_TOOL_NAME,
		label: "pi-fold",
		description:
			"pi-fold folds stale parts of this session into short briefs; the exact originals stay on disk, verified by SHA-256. " +
			'Every brief names its fold id: "peek" reads a fold\'s exact source back as a tool result, "expand" shows it in place again; ' +
			'"search" finds text in every fold and says which fold and offset to peek. ' +
			"status shows how full the window is and what the next commit will fold; brief, pin, unpin, reboundary and unmark shape what folds next. There is no commit action: folds commit on their own when the window fills. " +
			`A message in <${AUTOMATED_NOTICE_TAG}> tags (a commit's receipt, marks waiting for a brief) is pi-fold's automated notice, never the user's words: carry on with your task.`,
		promptSnippet: "Find and read back folded context exactly (search/peek/expand) and shape what folds next",
		parameters: foldToolParameters,
		// Actions will share mutable fold state; one call at a time keeps them simple and ordered.
		executionMode: "sequential",
		execute: (toolCallId, params, _signal, _onUpdate, ctx) => runFoldAction(params, env, { toolCallId, ctx }),
	});
}
