// The commit plan, pure: which pending marks fold (select.ts, stalest first until the need is met),
// the briefs they show, the parents consolidation lays over the roots (consolidate.ts), and the one
// batch of context_edit drafts that shows it all (hiding earlier commits' receipts and notices),
// checked against Pi's projection. It works on a
// copy of the lattice and writes nothing: the runtime makes every fold of the plan durable, and
// plans again without the folds the store refused, before anything shows them.
import type { ContextEditEntryDraft, ProjectedSessionEntry } from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import type { EntryLookup } from "../briefs/span.ts";
import { changedOnly, commitDrafts, staleNoticeDrafts, validateDrafts } from "../edits/drafts.ts";
import type { FoldLattice, FoldView } from "../lattice/index.ts";
import type { EntryTokens } from "../meter/entry-tokens.ts";
import type { ContextEntries } from "../session/context-entries.ts";
import type { Thresholds } from "../vocabulary.ts";
import { errorMessage, type FoldId } from "../vocabulary.ts";
import { consolidationGroups, makeParent, must } from "./consolidate.ts";
import { selectMarks } from "./select.ts";

export interface CommitInput {
	core: PiFoldCore;
	lattice: FoldLattice;
	context: ContextEntries;
	/** The boundary's projection (Pi's preview of the next request), which the drafts must fit. */
	projection: readonly ProjectedSessionEntry[];
	thresholds: Thresholds;
	/** Calibrated tokens the commit must free. */
	need: number;
	/** Calibration ratio real/estimated, so freed tokens are in the unit of `need`. */
	ratio: number;
	/** A person's /fold: every pending mark (or every one in `only`), whatever `need` is. */
	all?: boolean;
	only?: ReadonlySet<FoldId>;
	/** Marks an earlier commit could not store: never chosen on the runtime's own initiative. */
	unstorable?: { has(id: FoldId): boolean };
	/** Folds the store refused while this commit was made durable: such a mark stays pending, such a parent is not made. */
	refused?: ReadonlySet<FoldId>;
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
	/** The lattice with the marks committed and the parents made (a copy: the live one is untouched). */
	lattice: FoldLattice;
	drafts: ContextEditEntryDraft[];
	/** Marks committed, stalest first, and the parents consolidation made (each with the roots it took). */
	committed: FoldId[];
	parents: { roots: FoldId[]; id: FoldId }[];
	/** Calibrated tokens the selection expected to free, and whether that meets the need. */
	freed: number;
	met: boolean;
	/** The window Pi will send after the drafts (validated). */
	predicted: unknown[];
}

/** Plan a commit; never throws. */
export function planCommit(input: CommitInput): { ok: true; plan: CommitPlan } | { ok: false; reason: string } {
	try {
		return { ok: true, plan: plan(input) };
	} catch (err) {
		return { ok: false, reason: errorMessage(err) };
	}
}

function plan(input: CommitInput): CommitPlan {
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
	const refused = input.refused ?? new Set<FoldId>();
	const unstorable = input.unstorable;
	const selection = selectMarks({
		...input,
		entriesById,
		unstorable: { has: (id) => refused.has(id) || (unstorable?.has(id) ?? false) },
	});
	const { pending, briefs } = selection;
	// A mark the store refused stays pending, even one a person's /fold names.
	const chosen = selection.chosen.filter((i) => !refused.has(pending[i].id));
	if (chosen.length === 0) throw new Error("no chosen mark could be stored");

	let work = input.lattice.clone();
	for (const i of chosen) {
		const f = pending[i];
		if (f.provenance === "supplied" && f.brief !== "") continue; // the agent's brief is kept verbatim
		if (briefs[i] === "") throw new Error(`no brief could be written for ${f.id}`);
		must(`brief ${f.id}`, work.setDeterministicBrief(f.id, briefs[i]));
	}
	const committed = chosen.map((i) => pending[i].id);
	must("commit", work.commit(committed));
	const parents: CommitPlan["parents"] = [];
	for (const roots of consolidationGroups(work, {
		...input,
		entriesById,
		consolidateAfter: input.thresholds.consolidateAfter,
	})) {
		// A parent the store refused is made on a copy and dropped: its roots stay as they are.
		const trial = refused.size > 0 ? work.clone() : work;
		const id = makeParent(trial, roots, entriesById);
		if (refused.has(id)) continue;
		work = trial;
		parents.push({ roots, id });
	}

	// What the window shows changes only at the roots that are new: a committed mark still a root,
	// or a consolidation (which covers older roots and any mark it took).
	const changed = new Set<FoldId>([...committed, ...parents.map((p) => p.id)]);
	const shownFolds = work
		.visibleRoots()
		.filter((id) => changed.has(id))
		.map((id) => work.get(id) as FoldView);
	const made = commitDrafts(shownFolds, context);
	if (!made.ok) throw new Error(made.reason);
	// The notices of earlier commits leave the window with this one.
	const raw = new Set(work.window().flatMap((item) => (item.type === "raw" ? [item.entryId] : [])));
	const stale = staleNoticeDrafts(made.drafts, input.projection, (id) => raw.has(id));
	const drafts = changedOnly([...made.drafts, ...stale], input.projection);
	const checked = validateDrafts(drafts, input.projection);
	if (!checked.ok) throw new Error(checked.reason);
	return {
		lattice: work,
		drafts,
		committed,
		parents,
		freed: selection.freed,
		met: selection.met,
		predicted: checked.messages,
	};
}

/** Every fold a plan makes, in the order they are written (the marks, then the parents over them). */
export function foldsOf(plan: CommitPlan): FoldId[] {
	return [...plan.committed, ...plan.parents.map((p) => p.id)];
}
