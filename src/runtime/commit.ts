// The one way a commit is made, whatever asks for it: a turn boundary the commit policy fires at, a
// person's /fold (also the one a model switch or a prompt's first request asks for while Pi is
// idle) and an overflow recovery. The policy plans it, pure (policy/commit-plan.ts); this executor
// makes every fold of the plan durable in one store batch, and when the store refuses some, plans
// again without them. Writing yields the event loop, so a guard follows every write: the session
// must still be the same open one, with the same lattice, or the plan is dropped, nothing changed.
// A boundary and an overflow then append the plan as one batch (its edits, its records, the receipt
// and the unbriefed-marks notice); a /fold while idle shows it early instead.
import type { SessionBoundaryDraft } from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import { unbriefedNoticeDraft } from "../edits/notice.ts";
import { receiptDraft } from "../edits/receipt.ts";
import type { FoldLattice } from "../lattice/index.ts";
import type { Meter, Model } from "../meter/meter.ts";
import type { Occupancy } from "../meter/occupancy.ts";
import type { CommitLog } from "../operations/status.ts";
import { type CommitPlan, commitOps, foldsOf, planCommit, type SkippedFold } from "../policy/commit-plan.ts";
import { type JournalOp, recordDraft } from "../session/journal.ts";
import type { Open } from "../session/open-session.ts";
import { type PrewrittenLeaves, persistEach, type RecordIndex } from "../session/persist.ts";
import type { LeafPrewriter } from "../session/prewrite.ts";
import type { FoldId, Outcome, Thresholds } from "../vocabulary.ts";

/** What the runtime lends a commit: the core, the policy, the meter, the background writes, the problem log. */
export interface CommitDeps {
	core: PiFoldCore;
	thresholds: Thresholds;
	meter: Meter;
	prewriter: LeafPrewriter;
	problem(where: string, reason: string): void;
	/** The session open now: the guard compares it with the one the plan was made for. */
	current(): Open | undefined;
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
}

export interface Planned {
	/** The lattice the plan was made from: applying over another would lose its changes. */
	base: FoldLattice;
	plan: DurablePlan;
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
		const stored = await durable(open, planned.plan, prewritten);
		// The store writes yielded the event loop: a session switch or a lattice change meanwhile makes the plan stale.
		if (deps.current() !== open || open.lattice !== base) {
			return { ok: false, reason: "the session moved during the store writes" };
		}
		if (stored.refused.length === 0) {
			open.markBriefs.clear();
			for (const [id, brief] of markBriefs) open.markBriefs.set(id, brief);
			// Folds that could not be stored: named, and not chosen again.
			for (const f of skipped) {
				open.unstorable.set(f.id, f.reason);
				deps.problem(
					commitWhere(req.reason, deps.turn),
					`fold ${f.id} could not be stored and stays unfolded: ${f.reason}`,
				);
			}
			const plan = { ...planned.plan, records: stored.records, ops: commitOps(planned.plan, stored.records), skipped };
			return { ok: true, base, plan };
		}
		skipped.push(...stored.refused);
	}
	return { ok: false, reason: `nothing folded: the store kept refusing${refusals(skipped)}` };
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
	open: Open,
	plan: CommitPlan,
	prewritten: PrewrittenLeaves,
): Promise<{ records: RecordIndex; refused: SkippedFold[] }> {
	const records: RecordIndex = new Map(open.records);
	const each = await persistEach(plan.lattice, open.store, open.context, foldsOf(plan), records, prewritten);
	return { records, refused: each.skipped };
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
