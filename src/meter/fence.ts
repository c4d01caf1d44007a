// The fence: the last guard before a request goes out. The serving budget is what pi-fold aims
// below, not a wall: a request over it still goes out when the provider can take it (folding
// catches up at the next boundary). What stops a request is only what would fail anyway: a
// request past the send limit (what the model's window can take with room for an answer, or the
// providerInputBudget the person set) when nothing lossless made room, or one holding a tool result
// without its call, which a provider refuses whatever its size. On a small window Pi's own
// compaction acts before the send limit is reached (runtime/compaction.ts lets it when nothing
// lossless is left), so the fence stops a request only where Pi would not compact either.
//
// Pi 1.6 has no "cancel this request" result for `context` / `context_with_system`, but
// `ctx.abort()` called from `context_with_system` (after every context handler, before the stream
// function) aborts the signal the provider call gets: the agent loop ends the turn with an
// "aborted" assistant message and the provider is never asked (measured with the faux provider; a
// real provider's fetch refuses an aborted signal the same way).

import type { BudgetLimit } from "./budget.ts";

export const FENCE_STATUS_KEY = "pi-fold";

export interface FenceVerdict {
	/** Calibrated estimate of the request, tokens. */
	tokens: number;
	/** The send limit it passed: the window minus the least answer, or providerInputBudget. */
	sendLimit: number;
	/** Pending marks that were not committable before this request (staged at the next boundary). */
	pendingMarks: number;
	/** Tool results without their call (by call id): a provider would refuse the request whatever its size. */
	orphans?: readonly string[];
	/** The serving budget with why it is what it is (budgetText), the limit that set it, and the model's window. */
	why?: string;
	limit?: BudgetLimit;
	window?: number;
	/** Why Pi's own compaction did not run first (it is off, or acts only past the send limit). */
	compaction?: string;
}

/** Stop when the calibrated estimate passes the send limit. */
export function fenceVerdict(tokens: number, sendLimit: number, pendingMarks: number): FenceVerdict | undefined {
	if (!(sendLimit > 0) || !(tokens > sendLimit)) return undefined;
	return { tokens, sendLimit, pendingMarks };
}

const int = (n: number) => Math.round(n).toLocaleString("en-US");

/** What the user is told (ctx.ui.notify, stderr in print mode, and status); never written into the window. */
export function fenceMessage(v: FenceVerdict): string {
	if (v.orphans && v.orphans.length > 0) {
		const ids = v.orphans.slice(0, 5).join(", ");
		return (
			`pi-fold stopped a request before sending it: it holds ${v.orphans.length} tool result${v.orphans.length === 1 ? "" : "s"} ` +
			`whose call is hidden (${ids}${v.orphans.length > 5 ? ", …" : ""}), which a provider refuses. ` +
			"The window is repaired at the next turn boundary; /fold-status names the edits involved."
		);
	}
	const over = v.tokens - v.sendLimit;
	const what =
		v.limit === "providerInputBudget"
			? `your providerInputBudget of ${int(v.sendLimit)}`
			: `what the model's window${v.window === undefined ? "" : ` of ${int(v.window)}`} can take with room for an answer (${int(v.sendLimit)})`;
	const marks =
		v.pendingMarks > 0
			? ` ${v.pendingMarks} staged mark${v.pendingMarks === 1 ? "" : "s"} could not be folded before it (/fold-status says why; /fold tries again).`
			: " Nothing outside the newest tool batch was left to fold losslessly.";
	const pi = v.compaction ? ` Pi's compaction did not run: ${v.compaction}.` : "";
	return (
		`pi-fold stopped a request before sending it: ~${int(v.tokens)} tokens would exceed ${what} by ~${int(over)}.` +
		`${marks}${pi} To go on: /compact, a larger-context model, or a smaller tool output.`
	);
}

/** The fence's record for status. */
export interface FenceStatus {
	stopped: number;
	last?: FenceVerdict & { message: string };
}
