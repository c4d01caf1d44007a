// The commit plan: when the next request would reach maxTarget of the budget, apply pending marks
// stalest first until it is back at minTarget (select.ts), consolidate roots past consolidateAfter
// (consolidate.ts), write every fold to the store, and describe the whole change as one batch of
// context_edit drafts. Works on a copy of the lattice: the caller swaps it in only once the drafts
// validated, so a refused commit folds nothing new.
import type { ContextEditEntryDraft, ProjectedSessionEntry } from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import type { EntryLookup } from "../briefs/span.ts";
import { changedOnly, commitDrafts, validateDrafts } from "../edits/drafts.ts";
import type { FoldLattice, FoldView } from "../lattice/index.ts";
import type { EntryTokens } from "../meter/arithmetic.ts";
import type { ContextEntries } from "../session/context-entries.ts";
import type { CommittedFold, JournalOp } from "../session/journal.ts";
import {
	committedFolds,
	FoldWrites,
	type PrewrittenLeaves,
	persistEach,
	type RecordIndex,
} from "../session/persist.ts";
import type { FoldStore } from "../store/index.ts";
import type { Thresholds } from "../vocabulary.ts";
import { errorMessage, type FoldId } from "../vocabulary.ts";
import {
	CONSOLIDATION_MAX_GAP,
	type Consolidated,
	type ConsolidateInput,
	consolidateRoots,
	consolidationGroups,
	makeParent,
	must,
} from "./consolidate.ts";
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
	/** Marks ending after this position are not chosen (the raw working set). */
	eligibleEnd?: number;
	/** Folds known damaged (store or session bytes): never consolidated into a new parent. */
	damaged?: { has(id: FoldId): boolean };
	/** Pending marks' briefs written by earlier commits of this session (see selectMarks). */
	markBriefs?: Map<string, string>;
	/** The meter's per-entry token estimates (see selectMarks). */
	entryTokens?: EntryTokens;
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
	const { context } = input;
	// Fold positions index `context`: the lattice must be over exactly its entries (the working
	// copy is a clone of the lattice, not a load over `context`, so check it here).
	const over = input.lattice.entries;
	if (over.length !== context.entries.length || over.some((e, p) => e.id !== context.entries[p].id)) {
		throw new Error("the lattice is not over the session's context entries");
	}
	// The session entries by id, through the lattice's own index of positions (no map of its own).
	const entriesById: EntryLookup = {
		get: (id) => {
			const p = input.lattice.position(id);
			return p === undefined ? undefined : context.sources[p];
		},
	};
	const selection = selectMarks({ ...input, entriesById });
	const { pending, briefs, chosen } = selection;

	// Applied on a copy (the live lattice is untouched unless the caller swaps the plan in).
	const briefed = () => {
		const work = input.lattice.clone();
		for (const i of chosen) {
			const f = pending[i];
			if (f.provenance === "supplied" && f.brief !== "") continue; // the agent's brief is kept verbatim
			if (briefs[i] === "") throw new Error(`no brief could be written for ${f.id}`);
			must(`brief ${f.id}`, work.setDeterministicBrief(f.id, briefs[i]));
		}
		return work;
	};
	const ids = chosen.map((i) => pending[i].id);
	const consolidation = { ...input, entriesById, consolidateAfter: input.thresholds.consolidateAfter };
	// Durable before anything shows them: leaves and records into the store (fsyncs off the main
	// thread), the whole commit in one batch; if that fails, step by step, so a fold that cannot
	// be stored is left out (a mark stays pending, a parent's roots stay roots) and the rest goes on.
	const folded = (await inOneBatch(briefed(), ids, consolidation)) ?? (await stepByStep(briefed(), ids, consolidation));
	const { lattice: final, committed, marks, parents, records } = folded;

	// What the window shows changes only at the roots that are new: a committed mark still a root,
	// or a consolidation (which covers older roots and any mark it took).
	const changed = new Set<FoldId>([...committed, ...parents.map((c) => c.fold.id)]);
	const shownFolds = final
		.visibleRoots()
		.filter((id) => changed.has(id))
		.map((id) => final.get(id) as FoldView);
	const made = commitDrafts(shownFolds, context);
	if (!made.ok) throw new Error(made.reason);
	const drafts = { drafts: changedOnly(made.drafts, input.projection) };
	const checked = validateDrafts(drafts.drafts, input.projection);
	if (!checked.ok) throw new Error(checked.reason);

	const ops: JournalOp[] = [
		{ v: 1, op: "commit", folds: marks },
		...parents.map(
			(c): JournalOp => ({ v: 1, op: "consolidate", roots: c.roots, maxGap: CONSOLIDATION_MAX_GAP, fold: c.fold }),
		),
	];
	return {
		lattice: final,
		records,
		drafts: drafts.drafts,
		ops,
		committed,
		consolidated: parents.map((c) => c.fold.id),
		skipped: folded.skipped,
		freed: selection.freed,
		met: selection.met,
		predicted: checked.messages,
	};
}

/** The marks committed and the parents consolidation made over them, all durable. */
interface Folded {
	lattice: FoldLattice;
	committed: FoldId[];
	/** The committed marks as the commit record names them, in `committed` order. */
	marks: CommittedFold[];
	parents: Consolidated["parents"];
	skipped: SkippedFold[];
	/** The records before plus the ones written. */
	records: RecordIndex;
}

type FoldInput = CommitInput & ConsolidateInput;

/**
 * Commit `ids` on `work` and consolidate over them, every fold staged into one store batch (one
 * pack file, one data and one directory fsync); undefined, with nothing recorded, when anything
 * of it fails.
 */
async function inOneBatch(work: FoldLattice, ids: readonly FoldId[], input: FoldInput): Promise<Folded | undefined> {
	const records: RecordIndex = new Map(input.records);
	try {
		const writes = new FoldWrites(input.store, input.context, records, input.prewritten);
		await writes.stage(work, ids);
		must("commit", work.commit([...ids]));
		const made: { roots: FoldId[]; id: FoldId }[] = [];
		for (const roots of consolidationGroups(work, input)) {
			const id = makeParent(work, roots, input.entriesById);
			await writes.stage(work, [id]);
			made.push({ roots, id });
		}
		await writes.commit();
		const parents = made.map((p) => ({ roots: p.roots, fold: committedFolds(work, [p.id], records)[0] }));
		return {
			lattice: work,
			committed: [...ids],
			marks: committedFolds(work, ids, records),
			parents,
			skipped: [],
			records,
		};
	} catch {
		return undefined;
	}
}

/** The same, each step in a batch of its own: the marks together (or one by one), then each parent. */
async function stepByStep(work: FoldLattice, ids: readonly FoldId[], input: FoldInput): Promise<Folded> {
	const records: RecordIndex = new Map(input.records);
	const stored = await persistEach(work, input.store, input.context, ids, records, input.prewritten);
	const committed = stored.stored.map((p) => p.id);
	if (committed.length === 0) {
		throw new Error(`no chosen mark could be stored: ${stored.skipped.map((f) => `${f.id}: ${f.reason}`).join("; ")}`);
	}
	must("commit", work.commit(committed));
	const merged = await consolidateRoots(work, { ...input, records });
	return {
		lattice: merged.lattice,
		committed,
		marks: stored.stored,
		parents: merged.parents,
		skipped: [...stored.skipped, ...merged.skipped],
		records,
	};
}
