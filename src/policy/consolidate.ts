// Consolidation at a commit: once more than consolidateAfter roots are visible, runs of touching
// roots of equal height get a parent fold whose brief indexes its children (the core picks the
// runs). Planned with the commit (commit-plan.ts) and stored with it, before anything shows it.
import { MARK_PINNED, type PiFoldCore } from "../../bindings/index.ts";
import { deterministicBrief, leavesCallsUnnamed } from "../briefs/briefs.ts";
import type { EntryLookup } from "../briefs/span.ts";
import type { FoldLattice, FoldView, Outcome } from "../lattice/index.ts";
import type { FoldId } from "../vocabulary.ts";

/** Consolidation takes only touching roots: a raw entry between two folds stays visible. */
export const CONSOLIDATION_MAX_GAP = 0;

interface ConsolidateInput {
	core: PiFoldCore;
	consolidateAfter: number;
	/** Folds known damaged (store or session bytes): never consolidated into a new parent. */
	damaged?: { has(id: FoldId): boolean };
	/** The session's entries: with them, a run is cut short where its brief could not name every call. */
	entriesById?: EntryLookup;
}

/** The fewest roots a run is cut to: under that it would be no consolidation at all. */
const MIN_RUN = 2;

/** The outcome's value, or an error naming the step that refused (a planned step must not be refused). */
export function must<T extends object>(what: string, o: Outcome<T>): T {
	if (!o.ok) throw new Error(`${what}: ${o.reason}`);
	return o as T;
}

/** A visible root as consolidation weighs it. */
export interface RootShape {
	start: number;
	end: number;
	height: number;
	/** Known damaged: stays a root of its own. */
	pinned: boolean;
}

/** The core's runs over `roots` (in window order), as index pairs [first, last]. */
function groupsOver(core: PiFoldCore, roots: readonly RootShape[], consolidateAfter: number): [number, number][] {
	if (roots.length <= consolidateAfter) return [];
	const choice = core.selectConsolidation(
		{
			start: roots.map((v) => v.start),
			end: roots.map((v) => v.end),
			// A damaged fold stays a root of its own: no new parent is built over bytes known bad.
			flags: roots.map((v) => (v.pinned ? MARK_PINNED : 0)),
			// Only roots of equal height merge (lowest first): the tree's depth grows with the
			// logarithm of the session, not by one level per consolidation.
			height: roots.map((v) => v.height),
		},
		consolidateAfter,
		CONSOLIDATION_MAX_GAP,
	);
	const groups: [number, number][] = [];
	for (let g = 0; g < choice.groupCount; g++) groups.push([choice.groups[2 * g], choice.groups[2 * g + 1]]);
	return groups;
}

/** The runs of visible roots of `work` the core chooses to consolidate now, oldest first (none at or under consolidateAfter). */
export function consolidationGroups(work: FoldLattice, input: ConsolidateInput): FoldId[][] {
	const roots = work.visibleRoots();
	const shapes = roots.map((id) => {
		const v = work.get(id) as FoldView;
		return { start: v.start, end: v.end, height: work.height(id) ?? 1, pinned: input.damaged?.has(id) ?? false };
	});
	const runs = groupsOver(input.core, shapes, input.consolidateAfter).map(([a, b]) => roots.slice(a, b + 1));
	const { entriesById } = input;
	return entriesById === undefined ? runs : runs.map((run) => namedRun(work, run, entriesById));
}

/**
 * The longest head of `run` (at least MIN_RUN roots) whose parent's brief still names every call:
 * a brief holds 2,000 characters, so a parent over more calls than it can name would leave the
 * window blind to some. The roots cut off stay roots and join a later run. Cut from the end, so
 * the run starts where the core chose (consolidationStart prices the window from there).
 */
function namedRun(work: FoldLattice, run: readonly FoldId[], entriesById: EntryLookup): FoldId[] {
	for (let n = run.length; n > MIN_RUN; n--) {
		const trial = work.clone();
		const brief = trial.get(makeParent(trial, run.slice(0, n), entriesById))?.brief ?? "";
		if (!leavesCallsUnnamed(brief)) return run.slice(0, n);
	}
	return run.slice(0, Math.min(run.length, MIN_RUN));
}

/**
 * Where the first consolidation a commit of `marks` would make starts (a context position), or
 * undefined when it makes none: the roots after the commit are the visible ones the marks do not
 * cover, and the marks themselves. A consolidation replaces its roots' briefs with its own, so the
 * window changes from there on, even before the stalest mark committed.
 */
export function consolidationStart(
	core: PiFoldCore,
	visible: readonly RootShape[],
	marks: readonly RootShape[],
	consolidateAfter: number,
): number | undefined {
	const covered = (r: RootShape) => marks.some((m) => m.start <= r.start && r.end <= m.end);
	const after = [...visible.filter((r) => !covered(r)), ...marks].sort((a, b) => a.start - b.start);
	const first = groupsOver(core, after, consolidateAfter)[0];
	return first ? after[first[0]].start : undefined;
}

/**
 * The parent of the roots `ids`, made on `lattice` in place: its brief indexes its children, written
 * from the fold as planned (its id is known only then), so no trial copy is needed to learn it.
 */
export function makeParent(lattice: FoldLattice, ids: readonly FoldId[], entriesById: EntryLookup): FoldId {
	const brief = (fold: Parameters<typeof deterministicBrief>[0]) =>
		deterministicBrief(fold, entriesById, {
			childFold: (c) => lattice.get(c),
			childLeaves: (c) => lattice.leavesOf(c),
		});
	return must("consolidate", lattice.consolidate(ids, { brief, maxGap: CONSOLIDATION_MAX_GAP })).id;
}
