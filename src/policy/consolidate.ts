// Consolidation at a commit: once more than consolidateAfter roots are visible, runs of touching
// roots of equal height get a parent fold whose brief indexes its children (the core picks the
// runs). Planned with the commit (commit-plan.ts) and stored with it, before anything shows it.
import { MARK_PINNED, type PiFoldCore } from "../../bindings/index.ts";
import { deterministicBrief } from "../briefs/briefs.ts";
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
}

/** The outcome's value, or an error naming the step that refused (a planned step must not be refused). */
export function must<T extends object>(what: string, o: Outcome<T>): T {
	if (!o.ok) throw new Error(`${what}: ${o.reason}`);
	return o as T;
}

/** The runs of visible roots of `work` the core chooses to consolidate now, oldest first (none at or under consolidateAfter). */
export function consolidationGroups(work: FoldLattice, input: ConsolidateInput): FoldId[][] {
	const roots = work.visibleRoots();
	if (roots.length <= input.consolidateAfter) return [];
	const views = roots.map((id) => work.get(id) as FoldView);
	const choice = input.core.selectConsolidation(
		{
			start: views.map((v) => v.start),
			end: views.map((v) => v.end),
			// A damaged fold stays a root of its own: no new parent is built over bytes known bad.
			flags: views.map((v) => (input.damaged?.has(v.id) ? MARK_PINNED : 0)),
			// Only roots of equal height merge (lowest first): the tree's depth grows with the
			// logarithm of the session, not by one level per consolidation.
			height: views.map((v) => work.height(v.id) ?? 1),
		},
		input.consolidateAfter,
		CONSOLIDATION_MAX_GAP,
	);
	const groups: FoldId[][] = [];
	for (let g = 0; g < choice.groupCount; g++)
		groups.push(roots.slice(choice.groups[2 * g], choice.groups[2 * g + 1] + 1));
	return groups;
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
