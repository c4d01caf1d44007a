// The closing line of every pi_fold_context answer: the window's arithmetic in words.
import type { Arithmetic } from "../operations/overview.ts";

const pct = (n: number, budget: number) => `${((100 * n) / Math.max(1, budget)).toFixed(1)}%`;

/** The closing lines every answer carries. */
export function arithmeticText(a: Arithmetic): string {
	const now = `window: ~${a.occupancy} of ${a.budget} tokens (${pct(a.occupancy, a.budget)})`;
	const commit =
		a.untilCommit > 0
			? `next commit at ${a.commitAt} (${pct(a.commitAt, a.budget)}, ~${a.untilCommit} tokens away); it must then free ~${a.mustFree} to land at ${a.landAt} (${pct(a.landAt, a.budget)})`
			: `a commit is due at the next turn boundary: it must free ~${a.mustFree} to land at ${a.landAt} (${pct(a.landAt, a.budget)})`;
	const marks =
		a.pendingMarks === 0
			? "standing marks: none"
			: `standing marks: ${a.pendingMarks}, would free ~${a.marksFree} tokens${a.marksFree < a.mustFree ? " (less than a commit must free: more will be marked as work completes)" : ""}`;
	return `-- ${now}; ${commit}; ${marks}.`;
}
