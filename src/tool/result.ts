// The shapes every pi_fold_context answer shares: model-facing text plus typed details.
import type { AgentToolResult, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { FoldActions } from "../operations/actions.ts";
import type { Arithmetic } from "../operations/overview.ts";
import { arithmeticText } from "./arithmetic-text.ts";
import type { ToolCall, ToolEnv } from "./env.ts";
import type { ActionName } from "./schema.ts";
import type { StatusDetails } from "./status.ts";

/** Details of a refused call or an internal failure: nothing changed. */
interface RefusalDetails {
	ok: false;
	action: string | null;
	refusal: string;
	arithmetic?: Arithmetic;
}

/** Details of an action on folds: what it did, and the closing arithmetic. */
interface ActionDetails {
	ok: true;
	action: Exclude<ActionName, "status">;
	result: Record<string, unknown>;
	arithmetic?: Arithmetic;
}

/** Pi wants one details type per tool: the union of every action's details. */
export type FoldToolDetails = StatusDetails | RefusalDetails | ActionDetails;

export type FoldToolResult = AgentToolResult<FoldToolDetails>;

export function answer(text: string, details: FoldToolDetails, isError = false): FoldToolResult {
	return { content: [{ type: "text", text }], details, isError };
}

/** A refusal arrives as an error tool result the model can read and correct. */
export function refuse(action: string | null, reason: string): FoldToolResult {
	return answer(`pi_fold_context refused: ${reason}`, { ok: false, action, refusal: reason }, true);
}

/**
 * A refusal closed like every other answer, with the window arithmetic, when the runtime can tell
 * it (a refused expand, for one, is best answered with what the window holds and must free).
 */
export function closeRefusal(result: FoldToolResult, env: ToolEnv, call: ToolCall): FoldToolResult {
	const details = result.details;
	if (!("refusal" in details) || details.arithmetic || !call.ctx) return result;
	const over = env.actions?.()?.overview(call.ctx);
	if (!over?.ok) return result;
	const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("");
	return answer(
		`${text}\n${arithmeticText(over.overview.arithmetic)}`,
		{ ...details, arithmetic: over.overview.arithmetic },
		true,
	);
}

/** The runtime's operations and Pi's context, or the refusal saying why they are not there. */
export function operations(
	action: ActionName,
	env: ToolEnv,
	call: ToolCall,
): { ok: true; actions: FoldActions; ctx: ExtensionContext } | { ok: false; refusal: FoldToolResult } {
	const actions = env.actions?.();
	if (!actions) return { ok: false, refusal: refuse(action, "the folding runtime is not running (see status)") };
	if (!call.ctx) return { ok: false, refusal: refuse(action, "no session context was passed with this call") };
	return { ok: true, actions, ctx: call.ctx };
}

/**
 * An action's answer: its own lines, then the arithmetic every answer ends with; a truncated
 * answer then ends with the call that goes on (`next`, see continuation).
 */
export function done(
	action: Exclude<ActionName, "status">,
	lines: readonly string[],
	result: Record<string, unknown>,
	actions: FoldActions,
	ctx: ExtensionContext,
	next?: Record<string, unknown>,
): FoldToolResult {
	const over = actions.overview(ctx);
	const closing = over.ok ? arithmeticText(over.overview.arithmetic) : `-- (arithmetic unavailable: ${over.reason})`;
	return answer([...lines, closing, ...(next ? [continuation(next)] : [])].join("\n"), {
		ok: true,
		action,
		result,
		...(over.ok ? { arithmetic: over.overview.arithmetic } : {}),
	});
}

/**
 * The one line every truncated answer ends with: the arguments of the call that goes on, as JSON
 * a model can copy as they are (`next: {"action":"peek","id":"f…","offset":12000}`).
 */
export function continuation(args: Record<string, unknown>): string {
	return `next: ${JSON.stringify(args)}`;
}
