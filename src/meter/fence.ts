// The fence: a request that would exceed the serving budget is stopped before it is sent,
// and the user is told out of band. Pi 1.6 has no "cancel this request" result for `context` /
// `context_with_system`, but `ctx.abort()` called from `context_with_system` (after every context
// handler, before the stream function) aborts the signal the provider call gets: the agent loop
// ends the turn with an "aborted" assistant message and the provider is never asked (measured
// with the faux provider; a real provider's fetch refuses an aborted signal the same way).
// Commits happen at turn boundaries, and a prompt's first request (which no boundary precedes) is
// folded before it is sent when it reaches the commit threshold: an over-budget request here is one
// folding could not save (nothing left to fold, or the folds could not be stored).

import type { BudgetLimit } from "./budget.ts";

export const FENCE_STATUS_KEY = "pi-fold";

export interface FenceVerdict {
	/** Calibrated estimate of the request, tokens. */
	tokens: number;
	budget: number;
	/** Pending marks that were not committable before this request (staged at the next boundary). */
	pendingMarks: number;
	/** Tool results without their call (by call id): a provider would refuse the request whatever its size. */
	orphans?: readonly string[];
	/** The budget with why it is what it is (budgetText), and the limit that set it. */
	why?: string;
	limit?: BudgetLimit;
}

/** Stop when the calibrated estimate exceeds the budget. */
export function fenceVerdict(tokens: number, budget: number, pendingMarks: number): FenceVerdict | undefined {
	if (!(budget > 0) || !(tokens > budget)) return undefined;
	return { tokens, budget, pendingMarks };
}

/** What the user is told (ctx.ui.notify and status); never written into the window. */
export function fenceMessage(v: FenceVerdict): string {
	if (v.orphans && v.orphans.length > 0) {
		const ids = v.orphans.slice(0, 5).join(", ");
		return (
			`pi-fold stopped a request before sending it: it holds ${v.orphans.length} tool result${v.orphans.length === 1 ? "" : "s"} ` +
			`whose call is hidden (${ids}${v.orphans.length > 5 ? ", …" : ""}), which a provider refuses. ` +
			"The window is repaired at the next turn boundary; /fold-status names the edits involved."
		);
	}
	const over = v.tokens - v.budget;
	const marks =
		v.pendingMarks > 0
			? ` ${v.pendingMarks} staged mark${v.pendingMarks === 1 ? "" : "s"} could not be folded before it (/fold-status says why; /fold tries again).`
			: " Nothing left to fold losslessly.";
	// Below a price tier the request would still fit the window: say how to allow it, at its price.
	const tier =
		v.limit === "price tier"
			? " The budget is the model's price tier: to send larger requests at the higher rate, set providerInputBudget."
			: "";
	return (
		`pi-fold stopped a request before sending it: ~${v.tokens} tokens would exceed the serving budget of ` +
		`${v.why ?? v.budget} by ~${over}.${marks} Free room (expand less, /compact, or a larger-context model) and retry.${tier}`
	);
}

/** The fence's record for status. */
export interface FenceStatus {
	stopped: number;
	last?: FenceVerdict & { message: string };
}
