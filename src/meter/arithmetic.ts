// The arithmetic every pi_fold_context answer ends with: where the window stands against
// the serving budget, what the next commit must free, and what the standing marks would free.
// Estimates use the core's estimator on what each place of the window shows (raw message or brief),
// scaled by the calibration ratio, so they are in the unit occupancy is measured in. The token cache
// is meter/entry-tokens.ts; the text the tool prints is tool/arithmetic-text.ts.
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { markBrief } from "../briefs/briefs.ts";
import type { FoldId } from "../fold-types.ts";
import type { FoldLattice, FoldView } from "../lattice/index.ts";
import type { ContextEntries } from "../session/context-entries.ts";
import type { Thresholds } from "../vocabulary.ts";
import type { EntryTokens } from "./entry-tokens.ts";

// policy/ names the cache by this module.

/** What each place of the window costs now, and suffix sums (tokens from a place to the end). */
interface WindowCosts {
	/** Per context position: tokens it shows (a raw entry), or 0 (inside a collapsed fold). */
	shownAt: number[];
	/** Per visible collapsed fold: its brief's tokens. */
	briefs: Map<FoldId, number>;
	/** Tokens the window shows from position p to the end (raw entries and briefs). */
	fromPosition: (p: number) => number;
	total: number;
}

export function windowCosts(
	lattice: Pick<FoldLattice, "window" | "get" | "position">,
	context: Pick<ContextEntries, "entries" | "sources" | "hidden">,
	tokens: EntryTokens,
): WindowCosts {
	const shownAt = new Array<number>(context.entries.length).fill(0);
	const briefs = new Map<FoldId, number>();
	// Only what the window shows is weighed: its raw entries (one batch for those not weighed yet) and briefs.
	const rawAt: number[] = [];
	for (const item of lattice.window()) {
		if (item.type === "raw") {
			if (context.hidden?.has(item.entryId)) continue;
			const p = lattice.position(item.entryId);
			if (p !== undefined && p < shownAt.length) rawAt.push(p);
			continue;
		}
		const f = lattice.get(item.id);
		if (!f) continue;
		const t = tokens.brief(f.brief);
		briefs.set(f.id, t);
		shownAt[f.start] += t;
	}
	const raw = tokens.of(rawAt.map((p) => context.sources[p]));
	rawAt.forEach((p, i) => {
		shownAt[p] = raw[i];
	});
	const suffix = new Array<number>(shownAt.length + 1).fill(0);
	for (let p = shownAt.length - 1; p >= 0; p--) suffix[p] = suffix[p + 1] + shownAt[p];
	return {
		shownAt,
		briefs,
		fromPosition: (p) => suffix[Math.max(0, Math.min(p, shownAt.length))],
		total: suffix[0],
	};
}

/** A pending mark's estimated effect at a commit. */
export interface MarkEstimate {
	id: FoldId;
	/** Calibrated tokens the mark would free (what its span shows now minus its brief). */
	freed: number;
	/** Calibrated tokens of the window from the mark's first entry on: a commit re-sends them uncached. */
	prefixRewritten: number;
}

/**
 * The brief a pending mark would show: the agent's if supplied, else the deterministic one (kept
 * in `markBriefs`, the session's briefs of pending marks, once written).
 */
function pendingBrief(
	lattice: FoldLattice,
	f: FoldView,
	context: ContextEntries,
	markBriefs?: Map<string, string>,
): string {
	if (f.provenance === "supplied" && f.brief !== "") return f.brief;
	// The span's entries by id, made only when the brief is written (not when it is kept).
	let span: Map<string, SessionEntry> | undefined;
	const byId = {
		get: (id: string) => {
			span ??= new Map(context.sources.slice(f.start, f.end).map((s) => [s.id, s]));
			return span.get(id);
		},
	};
	return markBrief(lattice, f, byId, markBriefs);
}

export function markEstimates(
	lattice: FoldLattice,
	context: ContextEntries,
	tokens: EntryTokens,
	ratio: number,
	costs: WindowCosts = windowCosts(lattice, context, tokens),
	markBriefs?: Map<string, string>,
): MarkEstimate[] {
	return lattice.pending().map((f) => {
		let span = 0;
		for (let p = f.start; p < f.end; p++) span += costs.shownAt[p];
		const brief = tokens.brief(pendingBrief(lattice, f, context, markBriefs));
		return {
			id: f.id,
			freed: Math.max(0, Math.floor((span - brief) * ratio)),
			prefixRewritten: Math.ceil(costs.fromPosition(f.start) * ratio),
		};
	});
}

export interface Arithmetic {
	budget: number;
	/** Calibrated estimate of the next request. */
	occupancy: number;
	commitAt: number;
	landAt: number;
	/** Tokens the next commit must free: from now if it would fire now, else from where it fires. */
	mustFree: number;
	/** Tokens until the commit threshold (0 when already reached). */
	untilCommit: number;
	/** Tokens all pending marks would free together. */
	marksFree: number;
	pendingMarks: number;
}

export function arithmeticOf(
	occupancy: number,
	budget: number,
	thresholds: Pick<Thresholds, "maxTarget" | "minTarget">,
	marks: readonly MarkEstimate[],
): Arithmetic {
	const commitAt = Math.ceil(thresholds.maxTarget * budget);
	const landAt = Math.floor(thresholds.minTarget * budget);
	const from = Math.max(occupancy, commitAt);
	return {
		budget,
		occupancy,
		commitAt,
		landAt,
		mustFree: Math.max(0, from - landAt),
		untilCommit: Math.max(0, commitAt - occupancy),
		marksFree: marks.reduce((s, m) => s + m.freed, 0),
		pendingMarks: marks.length,
	};
}
