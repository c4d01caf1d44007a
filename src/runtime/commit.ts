// The one way a commit is planned, whatever asks for it: a turn boundary past maxTarget, a
// person's /fold (also the one a model switch asks for while Pi is idle) and an overflow recovery.
// Planning writes the folds to the store, which yields the event loop, so one guard follows the
// writes: the session must still be the same open one, with the same lattice, or the plan is
// dropped. A boundary and an overflow then append the plan as one batch (its edits, its records,
// the receipt and the unbriefed-marks notice); a /fold while idle shows it early instead.
import type { SessionBoundaryDraft } from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import { unbriefedNoticeDraft } from "../edits/notice.ts";
import { receiptDraft } from "../edits/receipt.ts";
import type { FoldLattice } from "../lattice/index.ts";
import type { Meter, Model } from "../meter/meter.ts";
import type { Occupancy } from "../meter/occupancy.ts";
import type { CommitLog } from "../operations/status.ts";
import { type CommitPlan, planCommit } from "../policy/commit-plan.ts";
import { recordDraft } from "../session/journal.ts";
import type { Open } from "../session/open-session.ts";
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

export interface Planned {
	/** The lattice the plan was made from: applying over another would lose its changes. */
	base: FoldLattice;
	plan: CommitPlan;
}

/** Where a commit's problems are reported. */
export function commitWhere(reason: CommitLog["reason"], turn: number): string {
	return `${reason} commit after turn ${turn}`;
}

/** Plan a commit over `open`; its folds are durable when it resolves. Never rejects. */
export async function planBatch(deps: CommitDeps, open: Open, req: PlanRequest): Promise<Outcome<Planned>> {
	const base = open.lattice;
	const planned = await planCommit({
		core: deps.core,
		lattice: base,
		context: open.context,
		projection: req.projection,
		store: open.store,
		records: open.records,
		thresholds: deps.thresholds,
		need: req.need,
		ratio: deps.meter.ratio(req.model),
		prewritten: (hashes) => deps.prewriter.durable(open.store, hashes),
		...(req.all ? { all: true, only: req.only } : {}),
		...(req.eligibleEnd === undefined ? {} : { eligibleEnd: req.eligibleEnd }),
		unstorable: open.unstorable,
		damaged: open.damaged,
		markBriefs: open.markBriefs,
		entryTokens: deps.meter.entryTokens,
	});
	if (!planned.ok) return { ok: false, reason: `nothing folded: ${planned.reason}` };
	// Folds that could not be stored: named, and not chosen again.
	for (const f of planned.plan.skipped) {
		open.unstorable.set(f.id, f.reason);
		deps.problem(
			commitWhere(req.reason, deps.turn),
			`fold ${f.id} could not be stored and stays unfolded: ${f.reason}`,
		);
	}
	// The store writes yielded the event loop: a session switch or a lattice change meanwhile makes the plan stale.
	if (deps.current() !== open || open.lattice !== base) {
		return { ok: false, reason: "the session moved during the store writes" };
	}
	return { ok: true, base, plan: planned.plan };
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
	req: { occupancy: Occupancy; pending: readonly unknown[]; model: Model; reason: CommitLog["reason"]; why?: string },
): CommitBatch {
	const { plan } = planned;
	const { occupancy } = req;
	// In this order: the receipt's details are part of the session entry, byte for byte.
	const receipt = (after: number) =>
		receiptDraft({
			committed: plan.committed,
			consolidated: plan.consolidated,
			before: occupancy.tokens,
			after,
			budget: occupancy.budget,
		});
	const notice = unbriefedNoticeDraft(plan.lattice, open.context);
	const appended = [receipt(occupancy.tokens), ...(notice ? [notice] : [])].map((d) => ({
		role: "custom",
		content: d.content,
	}));
	const estimate = deps.meter.estimateRequest([...plan.predicted, ...req.pending, ...appended]);
	const after = deps.meter.calibrated(estimate, req.model);
	const log: CommitLog = {
		reason: req.reason,
		turn: deps.turn,
		committed: plan.committed,
		consolidated: plan.consolidated,
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
		receipt(after),
		...(notice ? [notice] : []),
	];
	return { ...planned, log, drafts };
}
