// One session's folding runtime: the coordinator. Each Pi event (host/hooks.ts) becomes one call
// here; a turn boundary answers with one batch of drafts: the window repair if one is due, the staged
// edits, the peeks' follow-ups, the frontier's new marks, and (when the next request would reach
// maxTarget) one commit, planned by the one commit function (commit.ts); a turn with none of these
// ends without a boundary (quiet-turn.ts). The open session is a reduction of Pi's: handlers only
// propose (session/proposals.ts) and `sync`, at the next event, is what changes it: a proposal whose
// records Pi appended is adopted, one that never appeared is dropped and said. The operations on
// folds go through RuntimePort, everything else reads through RuntimeView. It never throws into Pi.
import type {
	AgentBeforeSettleEvent,
	BoundaryResult,
	ExtensionContext,
	SessionBeforeCompactEvent,
	SessionBeforeCompactResult,
	SessionBoundaryDraft,
	TurnEndEvent,
} from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import { EarlyWindow } from "../edits/early-window.ts";
import type { FoldLattice } from "../lattice/index.ts";
import type { Budget } from "../meter/budget.ts";
import type { FenceVerdict } from "../meter/fence.ts";
import { Meter, type Model } from "../meter/meter.ts";
import type { Occupancy } from "../meter/occupancy.ts";
import { RewriteRecorder } from "../meter/recorder.ts";
import { HandlerTiming } from "../meter/timing.ts";
import { type CommitLog, type RuntimeStatus, sessionStatus } from "../operations/status.ts";
import type { RuntimePort } from "../operations/view.ts";
import { stagedLattice } from "../policy/staging.ts";
import type { JournalOp } from "../session/journal.ts";
import { type Open, OpenSession, type SessionView } from "../session/open-session.ts";
import { LeafPrewriter } from "../session/prewrite.ts";
import { type PeekFollowUp, Staged, type StagedEdit } from "../session/staged.ts";
import type { FoldStore } from "../store/index.ts";
import type { FoldId, Outcome, ProblemState, RuntimeSettings } from "../vocabulary.ts";
import { Boundary } from "./boundary.ts";
import type { CommitDeps } from "./commit.ts";
import { CommitTiming } from "./commit-timing.ts";
import { Compaction, type ThresholdAnswer } from "./compaction.ts";
import { EarlyFold } from "./early-fold.ts";
import { ProblemLog } from "./problems.ts";
import { QuietTurns } from "./quiet-turn.ts";
import { SessionReadBack } from "./read-back.ts";
import { RequestWatch } from "./requests.ts";
import { TurnBoundary } from "./turn-boundary.ts";

export class FoldRuntime implements RuntimePort {
	readonly #core: PiFoldCore;
	readonly #settings: RuntimeSettings;
	readonly #problems = new ProblemLog();
	readonly #meter: Meter;
	readonly #recorder: RewriteRecorder;
	readonly #timing = new HandlerTiming();
	readonly #session: OpenSession;
	readonly #staged = new Staged();
	/** Leaf objects of staged marks, written in the background so a commit writes only records. */
	readonly #prewriter = new LeafPrewriter((where, reason, state) => this.problem(where, reason, state));
	readonly #compaction: Compaction;
	/** A /fold planned while idle (shown until turn_end commits it); a window repair (shown, then appended). */
	readonly #bridge = new EarlyWindow();
	readonly #repair = new EarlyWindow();
	readonly #requests: RequestWatch;
	readonly #boundary: Boundary;
	readonly #early: EarlyFold;
	readonly #quiet: QuietTurns;
	readonly #turnBoundary: TurnBoundary;
	readonly #commitTiming: CommitTiming;
	readonly #readBack: SessionReadBack;
	/** The last calibrated estimate of the next request (at a turn boundary or a commit). */
	#occupancy: Occupancy | null = null;
	#lastTurn = -1;

	/** `append`: Pi's appendEntry, for the marks of a turn that ends without a boundary (none: every turn has one). */
	constructor(core: PiFoldCore, settings: RuntimeSettings, append?: (customType: string, data: unknown) => void) {
		this.#core = core;
		this.#settings = settings;
		this.#meter = new Meter(core, settings);
		this.#recorder = new RewriteRecorder(core);
		this.#commitTiming = new CommitTiming(this.#meter, settings, () => this.#recorder.lastRequestRewrote);
		const problem = this.problem;
		this.#session = new OpenSession(core, problem);
		this.#readBack = new SessionReadBack({
			session: this.#session,
			staged: this.#staged,
			recorder: this.#recorder,
			problem,
			opened: (open, sm) => this.#opened(open, sm),
			landed: (occupancy) => {
				this.#occupancy = occupancy;
			},
		});
		// What the collaborators share; each takes its part.
		const parts = {
			core,
			settings,
			meter: this.#meter,
			recorder: this.#recorder,
			staged: this.#staged,
			bridge: this.#bridge,
			repair: this.#repair,
			prewriter: this.#prewriter,
			problem,
			settle: (until: string) => this.#problems.settle(until),
			sync: (sm: SessionView) => this.sync(sm),
			commitDeps: () => this.#commitDeps(),
			timing: this.#commitTiming,
			remeasured: (occupancy: Occupancy) => {
				this.#occupancy = occupancy;
			},
		};
		this.#requests = new RequestWatch({
			...parts,
			reopen: (sm) => this.open(sm),
			pendingMarks: () => this.view?.lattice.pending().length ?? 0,
		});
		this.#compaction = new Compaction({
			...parts,
			session: this.#session,
			proposals: this.#readBack.proposals,
			foldBefore: (ctx, occupancy, pressed) => this.#early.foldBefore(ctx, occupancy, pressed),
		});
		this.#early = new EarlyFold({ ...parts, occupancy: () => this.#occupancy });
		this.#boundary = new Boundary({
			...parts,
			withdrawn: () => this.#session.withdrawn,
			unmeasured: (lattice, tokens) => this.#session.unmeasured({ lattice, tokens }),
		});
		const [boundary, requests, compaction, session] = [this.#boundary, this.#requests, this.#compaction, this.#session];
		const proposals = this.#readBack.proposals;
		this.#quiet = new QuietTurns({ ...parts, boundary, requests, compaction, session, proposals, append });
		this.#turnBoundary = new TurnBoundary({
			...parts,
			boundary,
			session,
			quiet: this.#quiet,
			proposals,
			budget: (model) => this.budget(model),
			turnStarted: (turn) => {
				this.#lastTurn = turn;
			},
		});
	}

	// ---- the read-only view ----

	get core(): PiFoldCore {
		return this.#core;
	}

	get settings(): Readonly<RuntimeSettings> {
		return this.#settings;
	}

	/** The open session's lattice, context entries (texts, sources) and store; undefined when none is open. */
	get view(): Readonly<Open> | undefined {
		return this.#session.current;
	}

	get lattice(): FoldLattice | undefined {
		return this.view?.lattice;
	}

	get store(): FoldStore | undefined {
		return this.view?.store;
	}

	get records(): ReadonlyMap<FoldId, string> {
		return this.view?.records ?? new Map();
	}

	get staged(): readonly StagedEdit[] {
		return this.#staged.edits;
	}

	get foldRequested(): boolean {
		return this.#staged.fold !== undefined;
	}

	get commits(): readonly CommitLog[] {
		return this.#readBack.commits;
	}

	get occupancy(): Occupancy | null {
		return this.#occupancy;
	}

	/** What the last occupancy measurement missed of the open lattice's window. */
	get unmeasuredTokens(): number {
		return this.#session.unmeasuredTokens;
	}

	/** Token estimates of raw entries and briefs, cached per entry (shared with the operations). */
	get entryTokens(): Meter["entryTokens"] {
		return this.#meter.entryTokens;
	}

	/** Entries withdrawn from folding in the open session (unmark, reboundary back to raw). */
	get withdrawn(): ReadonlySet<string> {
		return this.#session.withdrawn;
	}

	/** The rewrite counters of the requests recorded so far. */
	get recorder(): Pick<RewriteRecorder, "counters" | "lastRewrite" | "lastDigests"> {
		return this.#recorder;
	}

	/** The background leaf writes: what they did, and waiting for them. */
	get prewriter(): Pick<LeafPrewriter, "stats" | "idle" | "durable"> {
		return this.#prewriter;
	}

	/** Whether a /fold planned while idle is armed to show on the next request, and whether one did. */
	get bridge(): { readonly armed: boolean; readonly shown: boolean } {
		return { armed: this.#bridge.armed, shown: this.#bridge.shown };
	}

	/** What happened to Pi's compaction requests (a copy). */
	get compaction(): RuntimeStatus["compaction"] {
		return this.#compaction.counters;
	}

	status(): RuntimeStatus {
		const session = sessionStatus(this.view);
		// Key order as status has always given it: tool results persist it in the session.
		return {
			open: session.open,
			budget: this.#meter.budgetStatus,
			occupancy: this.#occupancy,
			thresholds: this.#settings.thresholds,
			pendingMarks: session.pendingMarks,
			roots: session.roots,
			folds: session.folds,
			damaged: session.damaged,
			unstorable: session.unstorable,
			commits: [...this.#readBack.commits],
			rewrites: this.#recorder.counters(),
			alignmentFailures: this.#requests.alignmentFailures,
			compaction: this.#compaction.counters,
			overflowPassedOn: this.#compaction.passedOn,
			fence: this.#requests.fence,
			noticesShown: this.#requests.noticesShown,
			evidence: this.#boundary.evidence,
			problems: this.#problems.list(),
			problemsOpen: this.#problems.open,
			timing: this.#timing.status(),
			policy: this.#commitTiming.status(),
		};
	}

	/** The serving budget for `model` (Pi's ctx.model, read afresh at every decision: a model switch moves it). */
	budget(model: Model): Budget {
		return this.#meter.budget(model);
	}

	ratio(model: Model): number {
		return this.#meter.ratio(model);
	}

	readonly problem = (where: string, reason: string, state?: ProblemState): void =>
		this.#problems.add(where, reason, state);

	/** Add handler time; `request` closes the sample (the context event of the request it preceded). */
	addTime(ms: number, request: boolean): void {
		this.#timing.add(ms, request);
	}

	// ---- the operations' port ----

	stagedLattice(): FoldLattice | undefined {
		return this.view && stagedLattice(this.view.lattice, this.#staged.edits);
	}

	/** An operation's records, appended and read back (read-back.ts). */
	record(ops: readonly JournalOp[], next: FoldLattice, append: (op: JournalOp) => void): void {
		this.#readBack.record(ops, next, append);
	}

	stage(edit: StagedEdit): void {
		this.#staged.stage(edit);
	}

	followPeek(peek: PeekFollowUp): void {
		this.#staged.followPeek(peek);
	}

	withdraw(entryIds: readonly string[]): void {
		this.#session.withdraw(entryIds);
	}

	requestFold(only?: ReadonlySet<FoldId>): void {
		this.#staged.requestFold(only);
	}

	// ---- Pi's events ----

	/** (Re)build everything from the session: session_start, session_tree, a rewritten context. */
	open(sm: SessionView): void {
		this.#readBack.open(sm);
	}

	/** Bring the open session in step with Pi's (read-back.ts): the one writer of the lattice. */
	sync(sm: SessionView): Open | undefined {
		return this.#readBack.sync(sm);
	}

	/** A turn's start or the run's end: the last boundary's batch read back; whether that changed anything. */
	readBack(sm: SessionView): boolean {
		return this.#readBack.readBack(sm);
	}

	/** After a rebuild: the recorder starts a new baseline, and a window that drifted from the folds is repaired. */
	#opened(open: Open | undefined, sm: SessionView): void {
		this.#recorder.rebase();
		if (open) this.#boundary.armRepair(open, sm);
	}

	/** The `context` event: the request recorded and checked; what to send instead when a bridge shows on it. */
	recordRequest(messages: readonly unknown[], sm: SessionView): unknown[] | undefined {
		// What the last boundary proposed is in the session (or not) by now: the request is read against it.
		this.sync(sm);
		return this.#requests.record(messages, sm);
	}

	/** The `context_with_system` event: the request as sent, for calibration; a verdict when the fence stops it. */
	observeRequest(messages: readonly unknown[], ctx: ExtensionContext): FenceVerdict | undefined {
		return this.#requests.observe(messages, ctx);
	}

	/** When commits pay, and what Pi's idle cache refreshes are worth. */
	get timing(): Pick<CommitTiming, "warming"> {
		return this.#commitTiming;
	}

	/** A fold before the next request: a model switch (model_select), a prompt's first request (agent_start, context). */
	get early(): Pick<EarlyFold, "modelSelected" | "promptStarted" | "beforeRequest"> {
		return this.#early;
	}

	/** message_end, whether the next turn_end needs the boundary, and a turn that ends without one. */
	get turns(): Pick<QuietTurns, "messageEnded" | "wanted" | "end"> {
		return this.#quiet;
	}

	/** turn_end: calibrate, mark, and commit when the next request would reach maxTarget (turn-boundary.ts). */
	turnEnd(e: TurnEndEvent, ctx: ExtensionContext): Promise<SessionBoundaryDraft[]> {
		return this.#turnBoundary.turnEnd(e, ctx);
	}

	#commitDeps(): CommitDeps {
		return {
			core: this.#core,
			thresholds: this.#settings.thresholds,
			meter: this.#meter,
			prewriter: this.#prewriter,
			problem: (where, reason, state) => this.problem(where, reason, state),
			version: () => this.#session.version,
			turn: this.#lastTurn,
		};
	}

	/** /fold while Pi is idle: planned now and shown on the next request (early-fold.ts). */
	prepareFold(ctx: ExtensionContext, need?: number): Promise<Outcome<object>> {
		return this.#early.prepare(ctx, need);
	}

	/** session_before_compact for a manual /compact: the person's, untouched. */
	compactionRequested(): undefined {
		return this.#compaction.manual();
	}

	/** session_before_compact at Pi's threshold: a fold, a quiet no, or (nothing lossless left) Pi's compaction. */
	compactionThreshold(ctx: ExtensionContext): Promise<ThresholdAnswer> {
		return this.#compaction.threshold(ctx);
	}

	/** session_before_compact with reason "overflow": a commit instead, retried once (compaction.ts). */
	overflow(e: SessionBeforeCompactEvent, ctx: ExtensionContext): Promise<SessionBeforeCompactResult | undefined> {
		return this.#compaction.overflow(e, ctx);
	}

	/** agent_before_settle: an armed overflow recovery is appended, with its one continuation. */
	beforeSettle(e: AgentBeforeSettleEvent, ctx: ExtensionContext): BoundaryResult | undefined {
		return this.#compaction.beforeSettle(e, ctx);
	}
}
