// The one way a commit is made, whatever asks for it: a turn boundary the commit policy fires at, a
// person's /fold (also the one a model switch or a prompt's first request asks for while Pi is
// idle) and an overflow recovery. The policy plans it, pure (policy/commit-plan.ts); this executor
// makes every fold of the plan durable in one store batch, and when the store refuses some, plans
// again without them. It writes the store and returns drafts, nothing else: the open session
// changes only when a sync reads the batch back from the session. Writing yields the event loop,
// so a guard follows every write: the open session must still be at the version the plan was made
// on, or the plan is dropped. A boundary and an overflow then hand the plan to Pi as one batch (its
// edits, its records, the receipt and the unbriefed-marks notice); a /fold while idle shows it early.
import type { SessionBoundaryDraft } from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import { unbriefedNoticeDraft } from "../edits/notice.ts";
import { receiptDraft } from "../edits/receipt.ts";
import type { Meter, Model } from "../meter/meter.ts";
import type { Occupancy } from "../meter/occupancy.ts";
import type { CommitLog } from "../operations/status.ts";
import { type CommitPlan, foldsOf, planCommit, type SkippedFold } from "../policy/commit-plan.ts";
import { CONSOLIDATION_MAX_GAP } from "../policy/consolidate.ts";
import { unreadableRecords } from "../session/heal.ts";
import { type JournalOp, recordDraft } from "../session/journal.ts";
import type { Open } from "../session/open-session.ts";
import { committedFolds, type PrewrittenLeaves, persistEach, type RecordIndex } from "../session/persist.ts";
import type { LeafPrewriter } from "../session/prewrite.ts";
import type { ProposedState } from "../session/proposals.ts";
import type { FoldRequest, PeekFollowUp, StagedEdit } from "../session/staged.ts";
import type { FoldId, Outcome, ProblemState, Thresholds } from "../vocabulary.ts";

/** What the runtime lends a commit: the core, the policy, the meter, the background writes, the problem log. */
export interface CommitDeps {
	core: PiFoldCore;
	thresholds: Thresholds;
	meter: Meter;
	prewriter: LeafPrewriter;
	problem(where: string, reason: string, state?: ProblemState): void;
	/** The open session's version: the guard compares it with the one the plan was made on. */
	version(): number;
	/** The turn the commit belongs to (the last turn_end's). */
	turn: number;
}

export interface PlanRequest {
	/** The projection the drafts must fit (Pi's preview at a boundary, or the session's own). */
	projection: Parameters<typeof planCommit>[0]["projection"];
	/** Calibrated tokens to free; with `all`, every pending mark (or every one in `only`) whatever it is. */
	need: number;
	model: Model;
	reason: CommitLog["reason"];
	all?: boolean;
	only?: ReadonlySet<FoldId>;
	/** Marks ending after this position stay (the raw working set); absent: any mark. */
	eligibleEnd?: number;
	/** Why the commit fires, when the cost model decided. */
	why?: string;
}

/** A plan made durable: what it wrote and the records it appends, and what the store refused. */
interface DurablePlan extends CommitPlan {
	records: RecordIndex;
	ops: JournalOp[];
	skipped: SkippedFold[];
	/** The pending marks' briefs as the plan leaves them (the session's, once adopted). */
	markBriefs: Map<string, string>;
}

export interface Planned {
	/** The open session's version the plan was made on: it is stale at any other. */
	version: number;
	plan: DurablePlan;
}

/**
 * What the runtime does with a proposal once a sync has read the session: adopted, a commit's log
 * is kept and its rewrite announced (`announce` false: a request already showed it, the /fold
 * bridge); dropped, what the proposer took from the staged work is put back.
 */
export interface ProposalEffects {
	commit?: { log: CommitLog; announce: boolean };
	taken?: { edits: readonly StagedEdit[]; peeks: readonly PeekFollowUp[]; fold?: FoldRequest };
}

/** Plans made again without what the store refused, at most: each refusal removes at least one fold. */
const MAX_PLANS = 8;

/** Where a commit's problems are reported. */
export function commitWhere(reason: CommitLog["reason"], turn: number): string {
	return `${reason} commit after turn ${turn}`;
}

/** Plan a commit over `open`; its folds are durable when it resolves. Never rejects. */
export async function planBatch(deps: CommitDeps, open: Open, req: PlanRequest): Promise<Outcome<Planned>> {
	const base = open.lattice;
	const version = deps.version();
	const prewritten: PrewrittenLeaves = (hashes) => deps.prewriter.durable(open.store, hashes);
	const skipped: SkippedFold[] = [];
	// The plan writes the marks' briefs it makes into a copy: the session keeps them only if it goes on.
	const markBriefs = new Map(open.markBriefs);
	for (let attempt = 0; attempt < MAX_PLANS; attempt++) {
		const planned = planCommit({
			core: deps.core,
			lattice: base,
			context: open.context,
			projection: req.projection,
			thresholds: deps.thresholds,
			need: req.need,
			ratio: deps.meter.ratio(req.model),
			...(req.all ? { all: true, only: req.only } : {}),
			...(req.eligibleEnd === undefined ? {} : { eligibleEnd: req.eligibleEnd }),
			unstorable: open.unstorable,
			refused: new Set(skipped.map((f) => f.id)),
			damaged: open.damaged,
			markBriefs,
			entryTokens: deps.meter.entryTokens,
		});
		if (!planned.ok) return { ok: false, reason: `nothing folded: ${planned.reason}${refusals(skipped)}` };
		const stored = await durable(deps, open, planned.plan, prewritten);
		// The store writes yielded the event loop: any change of the open session meanwhile makes the plan stale.
		if (deps.version() !== version) return { ok: false, reason: "the session moved during the store writes" };
		if (stored.refused.length === 0) {
			// Folds that could not be stored: named, and (once the commit is adopted) not chosen again.
			for (const f of skipped) {
				deps.problem(
					commitWhere(req.reason, deps.turn),
					`fold ${f.id} could not be stored and stays unfolded: ${f.reason}`,
				);
			}
			const ops = commitOps(planned.plan, stored.records);
			return { ok: true, version, plan: { ...planned.plan, records: stored.records, ops, skipped, markBriefs } };
		}
		skipped.push(...stored.refused);
	}
	return { ok: false, reason: `nothing folded: the store kept refusing${refusals(skipped)}` };
}

/** The records a durable plan appends: the commit, then each consolidation, naming the records written. */
export function commitOps(plan: CommitPlan, records: RecordIndex): JournalOp[] {
	return [
		{ v: 1, op: "commit", folds: committedFolds(plan.lattice, plan.committed, records) },
		...plan.parents.map(
			(p): JournalOp => ({
				v: 1,
				op: "consolidate",
				roots: p.roots,
				maxGap: CONSOLIDATION_MAX_GAP,
				fold: committedFolds(plan.lattice, [p.id], records)[0],
			}),
		),
	];
}

const refusals = (skipped: readonly SkippedFold[]) =>
	skipped.length === 0 ? "" : ` (the store refused ${skipped.map((f) => `${f.id}: ${f.reason}`).join("; ")})`;

/**
 * Every fold of `plan` durable in one store batch (one pack file, one data and one directory
 * fsync); when that batch fails, each fold on its own, to learn which the store refuses (a fold
 * whose bytes cannot be written: a damaged or unwritable file under it). `records` is a copy:
 * the open session's grows only when the plan is applied.
 */
async function durable(
	deps: Pick<CommitDeps, "core" | "problem">,
	open: Open,
	plan: CommitPlan,
	prewritten: PrewrittenLeaves,
): Promise<{ records: RecordIndex; refused: SkippedFold[] }> {
	const under = checkRoots(deps, open, plan);
	if (under.length > 0) return { records: open.records, refused: under };
	const records: RecordIndex = new Map(open.records);
	const each = await persistEach(plan.lattice, open.store, open.context, foldsOf(plan), records, prewritten);
	return { records, refused: each.skipped };
}

/**
 * The roots a new parent would name must read back: a record gone or damaged under a running
 * session is written again from the session's own bytes first; one that cannot be is known damaged
 * from now on (never consolidated over), and the parent is refused.
 */
function checkRoots(deps: Pick<CommitDeps, "core" | "problem">, open: Open, plan: CommitPlan): SkippedFold[] {
	const refused: SkippedFold[] = [];
	for (const parent of plan.parents) {
		const input = { lattice: plan.lattice, store: open.store, context: open.context, core: deps.core };
		const found = unreadableRecords({ ...input, records: open.records }, parent.roots);
		for (const id of found.healed)
			deps.problem(
				"store",
				`the record of fold ${id} could not be read back; written again from the session's own bytes`,
				"repaired",
			);
		for (const u of found.unreadable) {
			open.damaged.set(u.id, u.reason);
			deps.problem("store", u.reason);
		}
		if (found.unreadable.length > 0)
			refused.push({ id: parent.id, reason: `fold ${found.unreadable[0].id} under it cannot be read back` });
	}
	return refused;
}

export interface CommitBatch extends Planned {
	log: CommitLog;
	/** The batch to append: the edits, the records, the receipt and (when due) the unbriefed-marks notice. */
	drafts: SessionBoundaryDraft[];
}

/**
 * The planned commit as one batch, with its log. The receipt is part of the next request, so it
 * counts in the landing estimate: `pending` are the messages Pi appends before that request.
 */
export function commitBatch(
	deps: CommitDeps,
	open: Open,
	planned: Planned,
	req: {
		occupancy: Occupancy;
		pending: readonly unknown[];
		model: Model;
		reason: CommitLog["reason"];
		why?: string;
		/** No receipt or notice: the turn ends the run, and its answer must stay the run's last message. */
		quiet?: boolean;
	},
): CommitBatch {
	const { plan } = planned;
	const { occupancy } = req;
	// In this order: the receipt's details are part of the session entry, byte for byte.
	const receipt = (after: number) =>
		receiptDraft({
			committed: plan.committed,
			consolidated: plan.parents.map((p) => p.id),
			before: occupancy.tokens,
			after,
			budget: occupancy.budget,
		});
	const notice = req.quiet ? undefined : unbriefedNoticeDraft(plan.lattice, open.context);
	const appended = [...(req.quiet ? [] : [receipt(occupancy.tokens)]), ...(notice ? [notice] : [])].map((d) => ({
		role: "custom",
		content: d.content,
	}));
	const estimate = deps.meter.estimateRequest([...plan.predicted, ...req.pending, ...appended]);
	const after = deps.meter.calibrated(estimate, req.model);
	const log: CommitLog = {
		reason: req.reason,
		turn: deps.turn,
		committed: plan.committed,
		consolidated: plan.parents.map((p) => p.id),
		before: occupancy.tokens,
		after,
		budget: occupancy.budget,
		met: plan.met,
		edits: plan.drafts.length,
		skipped: plan.skipped.map((f) => f.id),
		...(req.why === undefined ? {} : { why: req.why }),
	};
	const drafts: SessionBoundaryDraft[] = [
		...plan.drafts,
		...plan.ops.map(recordDraft),
		...(req.quiet ? [] : [receipt(after)]),
		...(notice ? [notice] : []),
	];
	return { ...planned, log, drafts };
}

/** The state the open session takes once Pi has appended the commit's batch. */
export function commitState(planned: Planned): ProposedState {
	const { plan } = planned;
	return {
		lattice: plan.lattice,
		changesWindow: true,
		records: plan.records,
		markBriefs: plan.markBriefs,
		unstorable: new Map(plan.skipped.map((f) => [f.id, f.reason])),
	};
}
