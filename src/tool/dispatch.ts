// Routes one pi_fold_context call to its action module. Never throws: a bad argument becomes a
// refusal and an unexpected failure becomes an error result, so Pi's agent loop is never broken.

import { errorMessage } from "../vocabulary.ts";
import { briefAction } from "./brief.ts";
import type { ToolCall, ToolEnv } from "./env.ts";
import { reboundaryAction, unmarkAction } from "./marks.ts";
import { peekAction } from "./peek.ts";
import { pinAction, unpinAction } from "./pins.ts";
import { closeRefusal, type FoldToolResult, refuse } from "./result.ts";
import { type ActionName, type FoldToolArgs, parseFoldArgs } from "./schema.ts";
import { searchAction } from "./search.ts";
import { statusAction } from "./status.ts";
import { windowEditAction } from "./window-edits.ts";

type ActionHandler = (args: FoldToolArgs, env: ToolEnv, call: ToolCall) => FoldToolResult | Promise<FoldToolResult>;

/** One entry per action; the Record type makes the compiler demand a handler for each name. */
const HANDLERS: Record<ActionName, ActionHandler> = {
	status: statusAction,
	peek: peekAction,
	search: searchAction,
	brief: briefAction,
	expand: windowEditAction("expand"),
	refold: windowEditAction("refold"),
	pin: pinAction,
	unpin: unpinAction,
	reboundary: reboundaryAction,
	unmark: unmarkAction,
};

export async function runFoldAction(
	raw: unknown,
	env: ToolEnv,
	call: ToolCall = { toolCallId: "" },
): Promise<FoldToolResult> {
	const parsed = parseFoldArgs(raw);
	if (!parsed.ok) return closed(refuse(parsed.action, parsed.reason), env, call);
	const { action } = parsed.args;
	try {
		return closed(await HANDLERS[action](parsed.args, env, call), env, call);
	} catch (err) {
		const reason = errorMessage(err);
		return closed(refuse(action, `action ${JSON.stringify(action)} failed inside pi-fold: ${reason}`), env, call);
	}
}

/** Every answer ends with the arithmetic, refusals too; closing it must not fail the call either. */
function closed(result: FoldToolResult, env: ToolEnv, call: ToolCall): FoldToolResult {
	try {
		return closeRefusal(result, env, call);
	} catch {
		return result;
	}
}
