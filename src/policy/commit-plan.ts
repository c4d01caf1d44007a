// The commit plan: when the next request would reach maxTarget of the budget, apply pending marks
// stalest first until it is back at minTarget (select.ts), consolidate roots past consolidateAfter
// (consolidate.ts), write every fold to the store, and describe the whole change as one batch of
// context_edit drafts. Works on a copy of the lattice: the caller swaps it in only once the drafts
// validated, so a refused commit folds nothing new.
import type { ContextEditEntryDraft, ProjectedSessionEntry, SessionEntry } from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import { changedOnly, commitDrafts, validateDrafts } from "../edits/drafts.ts";
import type { FoldLattice, FoldView } from "../lattice/index.ts";
import type { ContextEntries } from "../session/context-entries.ts";
import type { CommittedFold, JournalOp } from "../session/journal.ts";
import { type PrewrittenLeaves, persistEach, type RecordIndex } from "../session/persist.ts";
import type { FoldStore } from "../store/index.ts";
import type { Thresholds } from "../vocabulary.ts";
import { errorMessage, type FoldId } from "../vocabulary.ts";
import { CONSOLIDATION_MAX_GAP, consolidateRoots, must } from "./consolidate.ts";
import { selectMarks } from "./select.ts";

export interface CommitInput {
	core: PiFoldCore;
	lattice: FoldLattice;
	context: ContextEntries;
	/** The boundary's projection (Pi's preview of the next request), which the drafts must fit. */
	projection: readonly ProjectedSessionEntry[];
	store: FoldStore;
	records: RecordIndex;
	thresholds: Thresholds;
	/** Calibrated tokens the commit must free (commitNeed). */
	need: number;
	/** Calibration ratio real/estimated, so freed tokens are in the unit of `need`. */
	ratio: number;
	/** Leaves already durable (written in the background when marked): not written again. */
	prewritten?: PrewrittenLeaves;
	/** A person's /fold: every pending mark (or every one in `only`), whatever `need` is. */
	all?: boolean;
	only?: ReadonlySet<FoldId>;
	/** Marks an earlier commit could not store: never chosen on the runtime's own initiative. */
	unstorable?: { has(id: FoldId): boolean };
	/** Folds known damaged (store or session bytes): never consolidated into a new parent. */
	damaged?: { has(id: FoldId): boolean };
}

/** A fold the commit left out because it could not be made durable, and why. */
export interface SkippedFold {
	id: FoldId;
	reason: string;
}

export interface CommitPlan {
	lattice: FoldLattice;
	records: RecordIndex;
	drafts: ContextEditEntryDraft[];
	/** Journal ops, in order: the commit, then each consolidation. */
	ops: JournalOp[];
	committed: FoldId[];
	consolidated: FoldId[];
	/** Chosen folds (marks or consolidations) that could not be stored: left out, the rest committed. */
	skipped: SkippedFold[];
	/** Calibrated tokens the selection expected to free. */
	freed: number;
	/** Whether the marks could free `need`. */
	met: boolean;
	/** The window Pi will send after the drafts (validated). */
	predicted: unknown[];
}

export type CommitOutcome = { ok: true; plan: CommitPlan } | { ok: false; reason: string };

/** Plan a commit; resolves once its folds are durable. Never rejects; nothing outside the returned plan changes except store objects (write-once). */
export async function planCommit(input: CommitInput): Promise<CommitOutcome> {
	try {
		return { ok: true, plan: await plan(input) };
	} catch (err) {
		return { ok: false, reason: errorMessage(err) };
	}
}

async function plan(input: CommitInput): Promise<CommitPlan> {
	const { context, store } = input;
	// Fold positions index `context`: the lattice must be over exactly its entries (the working
	// copy is a clone of the lattice, not a load over `context`, so check it here).
	const over = input.lattice.entries;
	if (over.length !== context.entries.length || over.some((e, p) => e.id !== context.entries[p].id)) {
		throw new Error("the lattice is not over the session's context entries");
	}
	const entriesById = new Map<string, SessionEntry>(context.sources.map((s) => [s.id, s]));
	const selection = selectMarks({ ...input, entriesById });
	const { pending, briefs, chosen } = selection;

	// Apply on a copy (the live lattice is untouched unless the caller swaps the plan in).
	const work = input.lattice.clone();
	for (const i of chosen) {
		const f = pending[i];
		if (f.provenance === "supplied" && f.brief !== "") continue; // the agent's brief is kept verbatim
		if (briefs[i] === "") throw new Error(`no brief could be written for ${f.id}`);
		must(`brief ${f.id}`, work.setDeterministicBrief(f.id, briefs[i]));
	}

	// Durable before anything shows them: leaves and records into the store (fsyncs off the main
	// thread). A record does not depend on the fold's state, so marks are stored before they commit,
	// and one that cannot be stored is left pending instead of failing the whole commit.
	const records: RecordIndex = new Map(input.records);
	const ids = chosen.map((i) => pending[i].id);
	const marks = await persistEach(work, store, context, ids, records, input.prewritten);
	const committed = marks.stored.map((p) => p.id);
	if (committed.length === 0) {
		throw new Error(`no chosen mark could be stored: ${marks.skipped.map((f) => `${f.id}: ${f.reason}`).join("; ")}`);
	}
	must("commit", work.commit(committed));

	// Consolidation, also only here.
	const merged = await consolidateRoots(work, {
		...input,
		entriesById,
		records,
		consolidateAfter: input.thresholds.consolidateAfter,
	});
	const final = merged.lattice;

	// What the window shows changes only at the roots that are new: a committed mark still a root,
	// or a consolidation (which covers older roots and any mark it took).
	const changed = new Set<FoldId>([...committed, ...merged.parents.map((c) => c.fold.id)]);
	const shownFolds = final
		.visibleRoots()
		.filter((id) => changed.has(id))
		.map((id) => final.get(id) as FoldView);
	const made = commitDrafts(shownFolds, context);
	if (!made.ok) throw new Error(made.reason);
	const drafts = { drafts: changedOnly(made.drafts, input.projection) };
	const checked = validateDrafts(drafts.drafts, input.projection);
	if (!checked.ok) throw new Error(checked.reason);

	const byId = new Map<FoldId, CommittedFold>(marks.stored.map((p) => [p.id, p]));
	const ops: JournalOp[] = [
		{ v: 1, op: "commit", folds: committed.map((id) => byId.get(id) as CommittedFold) },
		...merged.parents.map(
			(c): JournalOp => ({ v: 1, op: "consolidate", roots: c.roots, maxGap: CONSOLIDATION_MAX_GAP, fold: c.fold }),
		),
	];
	return {
		lattice: final,
		records,
		drafts: drafts.drafts,
		ops,
		committed,
		consolidated: merged.parents.map((c) => c.fold.id),
		skipped: [...marks.skipped, ...merged.skipped],
		freed: selection.freed,
		met: selection.met,
		predicted: checked.messages,
	};
}
