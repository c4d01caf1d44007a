// Consolidation at a commit: once more than consolidateAfter roots are visible, runs of touching
// roots get a parent fold whose brief indexes its children (the core picks the runs). Each parent
// is stored before it is applied, like the marks; one that cannot be stored leaves its roots as
// they are and the rest goes on.
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { MARK_PINNED, type PiFoldCore } from "../../bindings/index.ts";
import { briefForFold } from "../briefs/briefs.ts";
import type { FoldLattice, FoldView, Outcome } from "../lattice/index.ts";
import type { ContextEntries } from "../session/context-entries.ts";
import type { CommittedFold } from "../session/journal.ts";
import { type PrewrittenLeaves, persistEach, type RecordIndex } from "../session/persist.ts";
import type { FoldStore } from "../store/index.ts";
import type { FoldId } from "../vocabulary.ts";

/** Consolidation takes only touching roots: a raw entry between two folds stays visible. */
export const CONSOLIDATION_MAX_GAP = 0;

export interface ConsolidateInput {
	core: PiFoldCore;
	store: FoldStore;
	context: ContextEntries;
	entriesById: ReadonlyMap<string, SessionEntry>;
	/** Written as the parents are stored; grows in place. */
	records: RecordIndex;
	prewritten?: PrewrittenLeaves;
	consolidateAfter: number;
	/** Folds known damaged (store or session bytes): never consolidated into a new parent. */
	damaged?: { has(id: FoldId): boolean };
}

export interface Consolidated {
	/** The lattice with every stored parent applied. */
	lattice: FoldLattice;
	/** Each parent made: the roots it took and its stored fold. */
	parents: { roots: FoldId[]; fold: CommittedFold }[];
	/** Parents that could not be stored, and why. */
	skipped: { id: FoldId; reason: string }[];
}

/** The outcome's value, or an error naming the step that refused (a planned step must not be refused). */
export function must<T extends object>(what: string, o: Outcome<T>): T {
	if (!o.ok) throw new Error(`${what}: ${o.reason}`);
	return o as T;
}

/** Consolidate the visible roots of `work` (a copy the caller owns); stores each parent first. */
export async function consolidateRoots(work: FoldLattice, input: ConsolidateInput): Promise<Consolidated> {
	const out: Consolidated = { lattice: work, parents: [], skipped: [] };
	const roots = work.visibleRoots();
	if (roots.length <= input.consolidateAfter) return out;
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
	for (let g = 0; g < choice.groupCount; g++) {
		const ids = roots.slice(choice.groups[2 * g], choice.groups[2 * g + 1] + 1);
		// The brief indexes the children, so it needs the fold: learn it on a probe copy first.
		const probe = out.lattice.clone();
		const probed = must("consolidate (probe)", probe.consolidate(ids, { maxGap: CONSOLIDATION_MAX_GAP }));
		const brief = briefForFold(probe, probed.id, input.entriesById);
		if (!brief) throw new Error(`no brief could be written for the consolidation of ${ids.join(", ")}`);
		const trial = out.lattice.clone();
		const made = must(
			"consolidate",
			trial.consolidate(ids, { brief, provenance: "deterministic", maxGap: CONSOLIDATION_MAX_GAP }),
		);
		const stored = await persistEach(trial, input.store, input.context, [made.id], input.records, input.prewritten);
		out.skipped.push(...stored.skipped);
		if (stored.stored.length === 0) continue; // its roots stay as they are
		out.lattice = trial;
		out.parents.push({ roots: ids, fold: stored.stored[0] });
	}
	return out;
}
