// The commit (SPEC 3): when the next request would reach maxTarget of the budget, apply pending
// marks stalest first until it is back at minTarget, consolidate roots past consolidateAfter, write
// every fold to the store, and describe the whole change as one batch of context_edit drafts.
// Works on a copy of the lattice: the caller swaps it in only once the drafts validated, so a
// refused commit folds nothing new.
import type { ContextEditEntryDraft, ProjectedSessionEntry, SessionEntry } from "@earendil-works/pi-coding-agent";
import { MARK_ELIGIBLE, MARK_PINNED, type PiFoldCore } from "../../bindings/index.ts";
import type { FoldId } from "../fold-types.ts";
import type { FoldLattice, FoldView, Outcome } from "../lattice/index.ts";
import type { ContextEntries } from "../session/context-entries.ts";
import type { CommittedFold, JournalOp } from "../session/journal.ts";
import { type PrewrittenLeaves, persistEach, type RecordIndex } from "../session/persist.ts";
import type { FoldStore } from "../store/index.ts";
import { briefForFold } from "./briefs.ts";
import { commitDrafts, validateDrafts } from "./drafts.ts";
import { estimateMessages } from "./occupancy.ts";
import type { Thresholds } from "./thresholds.ts";

/** Consolidation takes only touching roots: a raw entry between two folds stays visible. */
export const CONSOLIDATION_MAX_GAP = 0;

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

/** Estimated tokens each context entry contributes to the projection now (0 when omitted). */
function projectedTokens(core: PiFoldCore, projection: readonly ProjectedSessionEntry[]): Map<string, number> {
	const messages = projection.flatMap((pe) => pe.messages);
	const tokens = estimateMessages(core, messages);
	const out = new Map<string, number>();
	let i = 0;
	for (const pe of projection) {
		let sum = 0;
		for (let k = 0; k < pe.messages.length; k++) sum += tokens[i++];
		out.set(pe.sourceEntry.id, sum);
	}
	return out;
}

function must<T extends object>(what: string, o: Outcome<T>): T {
	if (!o.ok) throw new Error(`${what}: ${o.reason}`);
	return o as T;
}

/** Plan a commit; resolves once its folds are durable. Never rejects; nothing outside the returned plan changes except store objects (write-once). */
export async function planCommit(input: CommitInput): Promise<CommitOutcome> {
	try {
		return { ok: true, plan: await plan(input) };
	} catch (err) {
		return { ok: false, reason: err instanceof Error ? err.message : String(err) };
	}
}

async function plan(input: CommitInput): Promise<CommitPlan> {
	const { core, context, projection, store, thresholds, need, ratio } = input;
	// Fold positions index `context`: the lattice must be over exactly its entries (the working
	// copy is a clone of the lattice, not a load over `context`, so check it here).
	const over = input.lattice.entries;
	if (over.length !== context.entries.length || over.some((e, p) => e.id !== context.entries[p].id)) {
		throw new Error("the lattice is not over the session's context entries");
	}
	const pending = input.lattice.pending().filter((f) => !input.only || input.only.has(f.id));
	if (pending.length === 0)
		throw new Error(input.only ? "none of the named marks is pending" : "no pending marks to commit");
	const entriesById = new Map<string, SessionEntry>(context.sources.map((s) => [s.id, s]));
	const shown = projectedTokens(core, projection);

	// What each mark would free: the tokens its span shows now minus its brief's.
	const briefs = pending.map((f) =>
		f.provenance === "supplied" && f.brief !== "" ? f.brief : (briefForFold(input.lattice, f.id, entriesById) ?? ""),
	);
	const briefTokens = estimateMessages(
		core,
		briefs.map((text) => ({ role: "assistant", content: [{ type: "text", text }] })),
	);
	const freedOf = pending.map((f, i) => {
		let span = 0;
		for (let p = f.start; p < f.end; p++) span += shown.get(context.entries[p].id) ?? 0;
		return Math.max(0, Math.floor((span - briefTokens[i]) * ratio));
	});
	// A mark an earlier commit could not store is left to a person's /fold, or to a reopen.
	const unstorable = input.all ? undefined : input.unstorable;
	const selection = core.selectCommit(
		{
			position: pending.map((f) => f.start),
			tokensFreed: freedOf,
			flags: pending.map((f) => (unstorable?.has(f.id) ? 0 : MARK_ELIGIBLE)),
		},
		need,
	);
	// A peek's own result was marked to go at the next commit, whatever it frees.
	const chosen = input.all
		? pending.map((_, i) => i)
		: [
				...new Set([
					...selection.chosen,
					...pending.flatMap((f, i) => (f.kind === "peek" && !unstorable?.has(f.id) ? [i] : [])),
				]),
			];
	if (chosen.length === 0) throw new Error(`no mark frees anything (need ${need} tokens)`);

	// Apply on a copy (the live lattice is untouched unless the caller swaps the plan in).
	let work = input.lattice.clone();
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
	const marks = await persistEach(
		work,
		store,
		context,
		chosen.map((i) => pending[i].id),
		records,
		input.prewritten,
	);
	const skipped = marks.skipped;
	const committed = marks.stored.map((p) => p.id);
	if (committed.length === 0) {
		throw new Error(`no chosen mark could be stored: ${skipped.map((f) => `${f.id}: ${f.reason}`).join("; ")}`);
	}
	must("commit", work.commit(committed));
	const byId = new Map<FoldId, CommittedFold>(marks.stored.map((p) => [p.id, p]));

	// Consolidation, also only here. Each one is stored before it is applied, like the marks.
	const consolidated: { ids: FoldId[]; id: FoldId }[] = [];
	const roots = work.visibleRoots();
	if (roots.length > thresholds.consolidateAfter) {
		const views = roots.map((id) => work.get(id) as FoldView);
		const choice = core.selectConsolidation(
			{
				start: views.map((v) => v.start),
				end: views.map((v) => v.end),
				// A damaged fold stays a root of its own: no new parent is built over bytes known bad.
				flags: views.map((v) => (input.damaged?.has(v.id) ? MARK_PINNED : 0)),
			},
			thresholds.consolidateAfter,
			CONSOLIDATION_MAX_GAP,
		);
		for (let g = 0; g < choice.groupCount; g++) {
			const ids = roots.slice(choice.groups[2 * g], choice.groups[2 * g + 1] + 1);
			// The brief indexes the children, so it needs the fold: learn it on a probe copy first.
			const probe = work.clone();
			const probed = must("consolidate (probe)", probe.consolidate(ids, { maxGap: CONSOLIDATION_MAX_GAP }));
			const brief = briefForFold(probe, probed.id, entriesById);
			if (!brief) throw new Error(`no brief could be written for the consolidation of ${ids.join(", ")}`);
			const trial = work.clone();
			const made = must(
				"consolidate",
				trial.consolidate(ids, { brief, provenance: "deterministic", maxGap: CONSOLIDATION_MAX_GAP }),
			);
			const stored = await persistEach(trial, store, context, [made.id], records, input.prewritten);
			skipped.push(...stored.skipped);
			if (stored.stored.length === 0) continue; // its roots stay as they are
			byId.set(made.id, stored.stored[0]);
			work = trial;
			consolidated.push({ ids, id: made.id });
		}
	}

	// What the window shows changes only at the roots that are new: a committed mark still a root,
	// or a consolidation (which covers older roots and any mark it took).
	const changed = new Set<FoldId>([...committed, ...consolidated.map((c) => c.id)]);
	const shownFolds = work
		.visibleRoots()
		.filter((id) => changed.has(id))
		.map((id) => work.get(id) as FoldView);
	const drafts = commitDrafts(shownFolds, context);
	if (!drafts.ok) throw new Error(drafts.reason);
	const checked = validateDrafts(drafts.drafts, projection);
	if (!checked.ok) throw new Error(checked.reason);

	const ops: JournalOp[] = [
		{ v: 1, op: "commit", folds: committed.map((id) => byId.get(id) as CommittedFold) },
		...consolidated.map(
			(c): JournalOp => ({
				v: 1,
				op: "consolidate",
				roots: c.ids,
				maxGap: CONSOLIDATION_MAX_GAP,
				fold: byId.get(c.id) as CommittedFold,
			}),
		),
	];
	return {
		lattice: work,
		records,
		drafts: drafts.drafts,
		ops,
		committed,
		consolidated: consolidated.map((c) => c.id),
		skipped,
		freed: selection.freed,
		met: selection.met,
		predicted: checked.messages,
	};
}
