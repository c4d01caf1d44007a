// The one occupancy figure a person sees, the same in the fold bar, /fold-status, /fold-editor and
// the commit receipt: the next request's calibrated tokens against pi-fold's serving budget, as the
// runtime's overview counts them (measured at the last turn boundary, plus what edits applied or
// staged since will change). Every display formats it here, so the number, the denominator, the
// rounding and the words for a staged change are written once.
import type { FoldActions } from "../operations/actions.ts";
import type { StagedEdit } from "../operations/view.ts";

/** 850, 3.1k, 12k, 200k, 1.2M: short, and never more than 4 characters before the unit. */
export function formatTokens(n: number): string {
	const v = Math.max(0, Math.round(n));
	if (v < 1000) return String(v);
	if (v < 10_000) return `${(v / 1000).toFixed(1).replace(/\.0$/, "")}k`;
	if (v < 1_000_000) return `${Math.round(v / 1000)}k`;
	return `${(v / 1_000_000).toFixed(1).replace(/\.0$/, "")}M`;
}

/** A share of the budget as a whole percentage: every display rounds the same way. */
export function percentOf(tokens: number, budget: number): string {
	return `${Math.round((100 * tokens) / Math.max(1, budget))}%`;
}

export interface WindowFigure {
	/** Calibrated tokens of the next request. */
	tokens: number;
	/** pi-fold's serving budget: the denominator of every share shown. */
	budget: number;
	/** Changes staged for the next turn that `tokens` already includes ("expand f…", "refold f…"). */
	staged: string[];
	/** A /fold commit is asked for: it lands at the next turn, and `tokens` does not include it yet. */
	foldPending: boolean;
}

/** The figure now, or why there is none (no open session, no budget). */
export function windowFigure(
	actions: FoldActions,
	ctx: Parameters<FoldActions["overview"]>[0],
	staged: readonly StagedEdit[],
	foldPending = false,
): WindowFigure | { error: string } {
	const over = actions.overview(ctx);
	if (!over.ok) return { error: over.reason };
	const a = over.overview.arithmetic;
	return { tokens: a.occupancy, budget: a.budget, staged: staged.map((s) => `${s.op} ${s.id}`), foldPending };
}

/** "~7.9k of 14k tokens (56%)": the figure alone. */
export function tokensOfBudget(tokens: number, budget: number): string {
	return `~${formatTokens(tokens)} of ${formatTokens(budget)} tokens (${percentOf(tokens, budget)})`;
}

/** What is already counted, and what is not yet, in words: empty when nothing is staged. */
export function stagedNote(f: WindowFigure): string {
	const parts: string[] = [];
	if (f.staged.length > 0) parts.push(`staged for the next turn: ${f.staged.join(", ")} (counted in the window)`);
	if (f.foldPending) parts.push("a /fold commit lands at the next turn (not counted yet)");
	return parts.join("; ");
}

/** The same note, short enough for the fold bar. */
export function stagedNoteShort(f: WindowFigure): string[] {
	return [
		...(f.staged.length > 0 ? [`incl. staged ${f.staged.join(", ")}`] : []),
		...(f.foldPending ? ["/fold lands next turn"] : []),
	];
}

/** "window ~7.9k of 14k tokens (56%)", then the staged note when there is one. */
export function windowText(f: WindowFigure): string {
	const note = stagedNote(f);
	return `window ${tokensOfBudget(f.tokens, f.budget)}${note ? `; ${note}` : ""}`;
}
