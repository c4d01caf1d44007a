// How pi-fold answers Pi's compaction. The serving budget stays at or below where Pi's compaction
// acts (meter/budget.ts), so Pi asks at its threshold only when the window passed pi-fold's budget:
// pi-fold answers by folding when the commit policy finds marks to fold (shown on the very next
// request, as an idle /fold is), and declines otherwise, as long as the next request can still be
// sent. When it cannot and nothing lossless is left, Pi's own compaction runs: lossy, but the
// session goes on (the folded originals stay in the store and the session file), and the person is
// told once. A manual /compact is the person's and passes. A provider refusing a request as
// too long is an overflow: Pi omits the failed attempt and asks to compact (reason "overflow");
// pi-fold cancels, plans a commit there, and hands the batch to the `agent_before_settle` that
// follows together with one `{ continue: true }`, so the retried request is the folded window.
// One continuation at a time: while one is outstanding (given, with no successful answer since) a
// new overflow goes to Pi's own recovery, which would otherwise loop on a window folding cannot
// shrink enough.
import type {
	AgentBeforeSettleEvent,
	BoundaryResult,
	ExtensionContext,
	SessionBeforeCompactEvent,
	SessionBeforeCompactResult,
} from "@earendil-works/pi-coding-agent";
import { lastOverflowReport, overflowNoticeDraft } from "../edits/overflow-notice.ts";
import type { Meter } from "../meter/meter.ts";
import { type Occupancy, occupancyOf } from "../meter/occupancy.ts";
import type { CompactionCounters } from "../operations/status.ts";
import type { Open, OpenSession, SessionView } from "../session/open-session.ts";
import type { Proposals } from "../session/proposals.ts";
import type { ProblemState, RuntimeSettings } from "../vocabulary.ts";
import {
	type CommitBatch,
	type CommitDeps,
	commitBatch,
	commitState,
	commitWhere,
	type ProposalEffects,
	planBatch,
} from "./commit.ts";

/** Problems-like lists kept for status (the newest). */
const MAX_KEPT = 50;

/** A recovery planned at session_before_compact, to be appended at the next agent_before_settle. */
interface Recovery {
	batch: CommitBatch;
	/** The session leaf it was planned at: anything appended since makes it stale. */
	leafId: string | null;
	/** The leaf the open session was in step with then: what the proposal is keyed by. */
	syncedLeaf: string | null;
}

/** What the runtime lends the overflow recovery. */
interface CompactionDeps {
	meter: Meter;
	settings: RuntimeSettings;
	sync(sm: SessionView): Open | undefined;
	session: Pick<OpenSession, "version" | "syncedLeaf">;
	/** Where the recovery's batch is proposed, for the next sync to adopt once Pi has appended it. */
	proposals: Pick<Proposals<ProposalEffects>, "propose">;
	commitDeps(): CommitDeps;
	/** Fold before the next request when the commit policy says so (shown through the /fold bridge). */
	foldBefore(
		ctx: ExtensionContext,
		occupancy: Occupancy,
		pressed: boolean,
	): Promise<{ ok: true } | { ok: false; reason?: string }>;
	problem(where: string, reason: string, state?: ProblemState): void;
}

/** pi-fold's answer to Pi's threshold compaction, and what to tell the person (once per session). */
export interface ThresholdAnswer {
	result: SessionBeforeCompactResult | undefined;
	notice?: string;
}

export class Compaction {
	readonly #deps: CompactionDeps;
	readonly #counters: CompactionCounters = {
		thresholdCancelled: 0,
		thresholdFolded: 0,
		thresholdPassed: 0,
		manualPassed: 0,
		overflowSeen: 0,
		overflowRecovered: 0,
		overflowPassed: 0,
	};
	readonly #passedOn: string[] = [];
	#armed: Recovery | undefined;
	#outstanding = false;

	constructor(deps: CompactionDeps) {
		this.#deps = deps;
	}

	/** session_before_compact for a manual /compact: the person's, untouched. */
	manual(): undefined {
		this.#counters.manualPassed++;
		return undefined;
	}

	/**
	 * session_before_compact at Pi's threshold: fold when the commit policy finds marks to fold; else
	 * decline while the next request can be sent; else let Pi compact, and say so once.
	 */
	async threshold(ctx: ExtensionContext): Promise<ThresholdAnswer> {
		const deps = this.#deps;
		const open = deps.sync(ctx.sessionManager);
		const budget = deps.meter.budget(ctx.model);
		if (!open || !budget.ok) {
			// pi-fold cannot judge the window: Pi's compaction keeps the session going.
			this.#counters.thresholdPassed++;
			return { result: undefined };
		}
		const projection = ctx.sessionManager.buildSessionProjection();
		const occupancy = deps.meter.occupancy(projection.messages, ctx.model, budget.budget);
		const folded = await deps.foldBefore(ctx, occupancy, true);
		if (folded.ok) {
			this.#counters.thresholdFolded++;
			return { result: { cancel: true } };
		}
		if (occupancy.tokens <= budget.sendLimit) {
			this.#counters.thresholdCancelled++;
			return { result: { cancel: true } };
		}
		this.#counters.thresholdPassed++;
		const why = folded.reason ? ` (${folded.reason})` : "";
		// Said, and handled (the session goes on): nothing for the person to do.
		deps.problem(
			"compaction",
			`the next request (~${occupancy.tokens} tokens) would not fit the window and nothing was left to fold losslessly${why}: Pi's compaction ran`,
			"repaired",
		);
		const first = this.#counters.thresholdPassed === 1;
		return {
			result: undefined,
			...(first
				? {
						notice:
							"pi-fold: nothing is left to fold losslessly and the next request would not fit the window, so Pi's own " +
							"compaction summarises the older messages this time. Everything pi-fold folded stays in its store and " +
							"in the session file (pi-fold peek).",
					}
				: {}),
		};
	}

	/**
	 * session_before_compact with reason "overflow": plan a commit sized from the failed request and
	 * cancel Pi's compaction, or return undefined (Pi's own recovery runs) saying why in status.
	 */
	async overflow(e: SessionBeforeCompactEvent, ctx: ExtensionContext): Promise<SessionBeforeCompactResult | undefined> {
		const deps = this.#deps;
		this.#counters.overflowSeen++;
		if (!e.willRetry) return this.#passOn("the response completed (no retry to fold for)");
		if (this.#armed !== undefined || this.#outstanding)
			return this.#passOn("the retry after pi-fold's own recovery overflowed again");
		const open = deps.sync(ctx.sessionManager);
		if (!open) return this.#passOn("the lattice is not open");
		const budget = deps.meter.budget(ctx.model);
		if (!budget.ok) return this.#passOn(`no serving budget: ${budget.reason}`);
		const report = lastOverflowReport(e.branchEntries);
		// The provider's limit, if it said one and it is tighter than ours, is the one that holds.
		const cap = report.maximum !== undefined ? Math.min(budget.budget, report.maximum) : budget.budget;
		const projection = ctx.sessionManager.buildSessionProjection();
		const estimated = deps.meter.occupancy(projection.messages, ctx.model, cap).tokens;
		// The provider counted the request it refused: trust it over the estimate when it is larger.
		const occupancy = occupancyOf(Math.max(estimated, report.tokens ?? 0), cap);
		const need = Math.max(1, Math.ceil(occupancy.tokens - Math.floor(deps.settings.thresholds.minTarget * cap)));
		const request = { projection: projection.entries, need, model: ctx.model, reason: "overflow" } as const;
		const commit = deps.commitDeps();
		const planned = await planBatch(commit, open, request);
		if (!planned.ok) {
			deps.problem(commitWhere("overflow", commit.turn), planned.reason);
			return this.#passOn("nothing could be folded (see problems)");
		}
		const batch = commitBatch(deps.commitDeps(), open, planned, { ...request, occupancy, pending: [] });
		const folds = batch.log.committed.length + batch.log.consolidated.length;
		batch.drafts.push(overflowNoticeDraft({ report, folds, after: batch.log.after, budget: cap }));
		this.#armed = { batch, leafId: ctx.sessionManager.getLeafId(), syncedLeaf: deps.session.syncedLeaf };
		return { cancel: true };
	}

	/** agent_before_settle: append an armed overflow recovery and ask for its one continuation. */
	beforeSettle(e: AgentBeforeSettleEvent, ctx: ExtensionContext): BoundaryResult | undefined {
		const recovery = this.#take();
		if (!recovery) return undefined;
		// Planned against the session as it was at session_before_compact: anything appended since
		// could make the drafts stale, so drop them rather than guess.
		const { session, proposals } = this.#deps;
		const leafId = ctx.sessionManager.getLeafId();
		if (leafId !== recovery.leafId || session.version !== recovery.batch.version) {
			this.#deps.problem("overflow", "the session moved between the overflow and the settle: recovery dropped");
			return undefined;
		}
		if (e.outcome !== "error") this.#deps.problem("overflow", `settling with outcome ${String(e.outcome)}, not error`);
		const { batch } = recovery;
		proposals.propose(recovery.syncedLeaf, batch.version, batch.drafts, commitState(batch), {
			commit: { log: batch.log, announce: true },
		});
		this.#counters.overflowRecovered++;
		return { entries: [...e.entries, ...recovery.batch.drafts], continue: true };
	}

	/** An overflow left to Pi's own recovery, and why (kept for status). */
	#passOn(why: string): undefined {
		this.#counters.overflowPassed++;
		this.#passedOn.push(why);
		if (this.#passedOn.length > MAX_KEPT) this.#passedOn.shift();
		return undefined;
	}

	/** The armed recovery, once; from then on a continuation is outstanding. */
	#take(): Recovery | undefined {
		const armed = this.#armed;
		this.#armed = undefined;
		if (armed) {
			this.#outstanding = true;
		}
		return armed;
	}

	/** A request was answered normally: the recovery worked, a later overflow may be recovered again. */
	answered(): void {
		this.#outstanding = false;
	}

	get counters(): CompactionCounters {
		return { ...this.#counters };
	}

	/** Why overflows were left to Pi's own recovery (newest last). */
	get passedOn(): string[] {
		return [...this.#passedOn];
	}
}
