// One session's folding runtime: the lattice of the active branch kept in step with the session,
// the store beside the session file, the occupancy meter and the rewrite recorder. Pi's hooks
// (hooks.ts) call into it; it answers with drafts and never throws (the hooks also catch).
import type {
	AgentBeforeSettleEvent,
	BoundaryResult,
	ContextEditEntryDraft,
	ExtensionContext,
	ProjectedSessionEntry,
	SessionBeforeCompactEvent,
	SessionBeforeCompactResult,
	SessionBoundaryDraft,
	SessionEntry,
	TurnEndEvent,
} from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import { projectionWith } from "../edits/drafts.ts";
import { FoldBridge } from "../edits/fold-bridge.ts";
import { unbriefedNotice } from "../edits/notice.ts";
import { lastOverflowReport, OverflowGuard, overflowNoticeDraft } from "../edits/overflow-notice.ts";
import { PairingWatch } from "../edits/pairing.ts";
import { receiptDraft } from "../edits/receipt.ts";
import { editedTargets, windowRepair } from "../edits/reconcile.ts";
import type { FoldId, FoldKind } from "../fold-types.ts";
import type { RuntimeSettings } from "../host/options.ts";
import type { FoldLattice } from "../lattice/index.ts";
import { EntryTokens, windowCosts } from "../meter/arithmetic.ts";
import { type Budget, budgetText, budgetWhy, type ModelLimits, servingBudget } from "../meter/budget.ts";
import { type FenceStatus, type FenceVerdict, fenceMessage, fenceVerdict } from "../meter/fence.ts";
import { commitNeed, modelKey, type Occupancy, OccupancyMeter, occupancyOf } from "../meter/occupancy.ts";
import { entriesSince, ProjectionAligner, type RecordOutcome, RewriteRecorder } from "../meter/recorder.ts";
import { planCommit } from "../policy/commit-plan.ts";
import { DEFAULT_FRONTIER_SETTINGS, type FrontierCursor, frontierCursor, proposeMarks } from "../policy/frontier.ts";
import { type PeekFollowUp, peekFollowUps, type StagedEdit, stagedBatch, stagedLattice } from "../policy/staging.ts";
import { contextEntriesOf } from "../session/context-entries.ts";
import { EvidenceWriter, evidenceDirFor, toolResultText } from "../session/evidence.ts";
import { ancestorStores } from "../session/fork.ts";
import { LeafPrewriter, leavesOf } from "../session/prewrite.ts";
import { rebuildLattice } from "../session/rebuild.ts";
import { FoldStore } from "../store/index.ts";
import {
	type BatchRequest,
	type CommitLog,
	type CompactionCounters,
	extendsEntries,
	type Open,
	type PlannedBatch,
	type RuntimeStatus,
	record,
} from "./runtime-types.ts";

/** Per-request handler timings kept for status (the newest). */
export const MAX_TIMINGS = 256;
/** Problems kept for status (the newest). */
export const MAX_PROBLEMS = 50;
/** The unbriefed-marks notice's custom_message type. */
export const UNBRIEFED_NOTICE_TYPE = "pi-fold-unbriefed";
type SessionView = ExtensionContext["sessionManager"];

export type { CommitLog, Open, RuntimeStatus } from "./runtime-types.ts";

export class FoldRuntime {
	readonly core: PiFoldCore;
	readonly settings: RuntimeSettings;
	readonly meter: OccupancyMeter;
	readonly recorder: RewriteRecorder;
	readonly #aligner = new ProjectionAligner();
	/** The session leaf `#open` was last synced at (sync's incremental step); only sync sets it. */
	#synced: { open: Open; leafId: string } | undefined;
	#open: Open | undefined;
	#problems: string[] = [];
	#commits: CommitLog[] = [];
	#occupancy: Occupancy | null = null;
	#budget: RuntimeStatus["budget"] = null;
	/** The model object the last budget was computed for, and that budget (Pi keeps one object per selection). */
	#budgetOf: { model: unknown; budget: Budget } | undefined;
	#alignmentFailures = 0;
	readonly compaction: CompactionCounters = {
		thresholdCancelled: 0,
		manualPassed: 0,
		overflowSeen: 0,
		/** Overflows answered by a commit and one continuation. */
		overflowRecovered: 0,
		/** Overflows left to Pi's own recovery (see overflowPassedOn). */
		overflowPassed: 0,
	};
	readonly overflowGuard = new OverflowGuard();
	#overflowPassedOn: string[] = [];
	/** The recovery batch planned at session_before_compact, appended at the next agent_before_settle. */
	#recovery: { batch: PlannedBatch; leafId: string | null } | undefined;
	#lastTurn = -1;
	#fence: FenceStatus = { stopped: 0 };
	#evidence: EvidenceWriter | undefined;
	/**
	 * Handler time (ms) per request: everything pi-fold spent between two requests, attributed to the
	 * later one. The newest MAX_TIMINGS only: status copies them into a tool result that Pi persists.
	 */
	readonly handlerMs: number[] = [];
	#requestsTimed = 0;
	#pendingMs = 0;
	/** Leaf objects of staged marks, written in the background so a commit writes only records. */
	readonly prewriter = new LeafPrewriter((where, reason) => this.problem(where, reason));

	constructor(core: PiFoldCore, settings: RuntimeSettings) {
		this.core = core;
		this.settings = settings;
		this.meter = new OccupancyMeter(core);
		this.recorder = new RewriteRecorder(core);
	}

	problem(where: string, reason: string): void {
		this.#problems.push(`${where}: ${reason}`);
		if (this.#problems.length > MAX_PROBLEMS) this.#problems.splice(0, this.#problems.length - MAX_PROBLEMS);
	}

	/**
	 * The serving budget for `model` (Pi's ctx.model, read afresh at every decision: a model switch
	 * moves it), recorded for status. The fence, commits, overflow recovery and the actions all ask here.
	 */
	budgetFor(model: (ModelLimits & { provider: string; id: string }) | undefined): Budget {
		const known = this.#budgetOf;
		if (known && known.model === model && model !== undefined) return known.budget;
		const budget = servingBudget(model, this.settings.providerInputBudget);
		this.#budgetOf = { model, budget };
		this.#budget = budget.ok
			? {
					ok: true,
					tokens: budget.budget,
					source: budget.source,
					limit: budget.limit,
					reserve: budget.reserve,
					...(budget.window === undefined ? {} : { window: budget.window }),
					...(budget.tier ? { tier: budget.tier } : {}),
					text: budgetText(budget),
					why: budgetWhy(budget),
					model: modelKey(model),
				}
			: budget;
		return budget;
	}

	/**
	 * Pi's `model_select`: the budget of the new model from now on. The last occupancy is kept as the
	 * best estimate of the next request until the next boundary measures it, as a share of the new
	 * budget. When Pi is idle and that already reaches maxTarget (a switch to a model with a lower
	 * price tier or a smaller window), the next prompt's first request would go out before any
	 * boundary could fold: at the surcharge, or stopped by the fence. So the commit is planned now and
	 * shown on that request, exactly as a /fold while idle is (prepareFold).
	 */
	async modelSelected(
		model: (ModelLimits & { provider: string; id: string }) | undefined,
		ctx: ExtensionContext,
	): Promise<void> {
		const budget = this.budgetFor(model);
		if (!budget.ok || !this.#occupancy) return;
		const occupancy = occupancyOf(this.#occupancy.tokens, budget.budget);
		this.#occupancy = occupancy;
		const need = commitNeed(occupancy, this.settings.thresholds);
		if (need <= 0 || !ctx.isIdle() || this.#foldNow !== undefined || this.bridge.armed) return;
		this.#foldNow = {};
		const early = await this.prepareFold(ctx, need);
		if (!early.ok) {
			this.#foldNow = undefined;
			this.problem(
				"model_select",
				`nothing folded for ${modelKey(model)}'s budget before the next request: ${early.reason}`,
			);
		}
	}

	/** Add handler time; `request` closes the sample (the context event of the request it preceded). */
	addTime(ms: number, request: boolean): void {
		this.#pendingMs += ms;
		if (request) {
			this.handlerMs.push(this.#pendingMs);
			if (this.handlerMs.length > MAX_TIMINGS) this.handlerMs.shift();
			this.#requestsTimed++;
			this.#pendingMs = 0;
		}
	}

	get lattice(): FoldLattice | undefined {
		return this.#open?.lattice;
	}

	get store(): FoldStore | undefined {
		return this.#open?.store;
	}

	get records(): ReadonlyMap<FoldId, string> {
		return this.#open?.records ?? new Map();
	}

	/** The open session's lattice, context entries (texts, sources) and store, read-only; undefined when none is open. */
	get view(): Readonly<Open> | undefined {
		return this.#open;
	}

	/** Window edits staged for the next boundary (expand, refold), in order. */
	#staged: StagedEdit[] = [];
	/** A /fold planned while idle, shown through the context event until its turn_end commits it. */
	readonly bridge = new FoldBridge();
	/**
	 * Edits that make Pi's window agree with the committed folds again (a commit batch cut short by
	 * a crash, or /tree into one): shown on requests at once, appended at the next boundary.
	 */
	readonly #repair = new FoldBridge();
	readonly #pairing = new PairingWatch();
	/** Tool results without their call in the last request recorded (the fence stops it). */
	#orphans: readonly string[] = [];
	/** Peeks whose results are marked or pinned once the model has seen them. */
	#peeks: PeekFollowUp[] = [];
	/** A person's /fold: commit staged marks (all, or only these) at the next boundary. */
	#foldNow: { only?: ReadonlySet<FoldId> } | undefined;

	/** The last calibrated estimate of the next request (at a turn boundary or a commit). */
	get occupancy(): Occupancy | null {
		return this.#occupancy;
	}

	/**
	 * Window tokens (uncalibrated) the last boundary's staged edits added, on the lattice they made:
	 * that boundary measured the window before its own edits, so the measurement misses them until
	 * the next boundary measures again. Carried over to copies that change no window (adopt).
	 */
	#unmeasured: { lattice: FoldLattice; tokens: number } | undefined;
	#entryTokens: EntryTokens | undefined;

	/** Token estimates of raw entries and briefs, cached per entry (shared with the actions). */
	get entryTokens(): EntryTokens {
		this.#entryTokens ??= new EntryTokens(this.core);
		return this.#entryTokens;
	}

	/** What the last occupancy measurement missed of the open lattice's window (see #unmeasured). */
	get unmeasuredTokens(): number {
		const u = this.#unmeasured;
		return u !== undefined && u.lattice === this.#open?.lattice ? u.tokens : 0;
	}

	/** Put `next` in place of the open lattice: a copy of it with changes that leave the window as it is. */
	#replaceLattice(open: Open, next: FoldLattice): void {
		if (this.#unmeasured?.lattice === open.lattice) this.#unmeasured.lattice = next;
		open.lattice = next;
	}

	/** Swap in a lattice an action changed (a copy of the open one, with one more validated op). */
	adopt(next: FoldLattice): void {
		if (this.#open) this.#replaceLattice(this.#open, next);
	}

	/** The lattice as the next boundary will make it: the open one plus the staged edits. */
	stagedLattice(): FoldLattice | undefined {
		return this.#open && stagedLattice(this.#open.lattice, this.#staged);
	}

	get staged(): readonly StagedEdit[] {
		return this.#staged;
	}

	stage(edit: StagedEdit): void {
		this.#staged.push(edit);
	}

	followPeek(peek: PeekFollowUp): void {
		this.#peeks.push(peek);
	}

	/**
	 * Entries of spans the agent or a person withdrew from folding (unmark, reboundary back to raw),
	 * for the session they belong to. The frontier treats them as it treats pins (never cuts them on
	 * its own), so only an explicit mark folds them again. Kept for the life of the process: a
	 * reopened session may mark them again.
	 */
	#withdrawn: { sessionId: string; entryIds: Set<string> } | undefined;

	withdraw(entryIds: readonly string[]): void {
		const sessionId = this.#open?.sessionId;
		if (sessionId === undefined) return;
		if (this.#withdrawn?.sessionId !== sessionId) this.#withdrawn = { sessionId, entryIds: new Set() };
		for (const id of entryIds) this.#withdrawn.entryIds.add(id);
	}

	/** The withdrawn entries of the open session (see withdraw). */
	get withdrawn(): ReadonlySet<string> {
		const w = this.#withdrawn;
		return w !== undefined && w.sessionId === this.#open?.sessionId ? w.entryIds : new Set();
	}

	/** /fold: commit at the next boundary; `only` restricts it to those marks. */
	requestFold(only?: ReadonlySet<FoldId>): void {
		this.#foldNow = only ? { only } : {};
	}

	get foldRequested(): boolean {
		return this.#foldNow !== undefined;
	}

	get commits(): readonly CommitLog[] {
		return this.#commits;
	}

	/** (Re)build everything from the session: session_start, session_tree, a rewritten context. */
	open(sm: SessionView): void {
		this.#open = undefined;
		this.recorder.rebase();
		const sessionId = sm.getSessionId();
		const store = FoldStore.forSession({ sessionFile: sm.getSessionFile(), sessionId }, this.core);
		store.onQuarantine((q) =>
			this.problem("store", `${q.kind} ${q.hash} was ${q.reason}: set aside as ${q.movedTo} and written again`),
		);
		const parents = ancestorStores(sm.getHeader()?.parentSession, this.core);
		for (const p of parents.problems) this.problem("open", p);
		const raw = sm.buildContextEntries();
		const rebuilt = rebuildLattice(sm.getBranch(), raw, this.core, { store, ancestors: parents.stores });
		if (!rebuilt.ok) {
			this.problem("rebuild", rebuilt.reason);
			return;
		}
		for (const p of rebuilt.problems) this.problem("rebuild", p);
		this.#open = {
			lattice: rebuilt.lattice,
			context: rebuilt.context,
			raw: [...raw],
			store,
			records: rebuilt.records,
			sessionId,
			damaged: rebuilt.damaged,
			aliases: rebuilt.aliases,
			unstorable: new Map(),
		};
		this.#repair.take();
		const repair = windowRepair(
			rebuilt.lattice,
			rebuilt.context.sources,
			sm.buildSessionProjection().entries,
			editedTargets(raw),
		);
		if (repair.drafts.length > 0) {
			this.problem(
				"open",
				`${repair.drafts.length} entries of the window differ from the committed folds (a commit cut short, or /tree into one); repaired at the next turn boundary`,
			);
			for (const r of repair.reasons.slice(0, 10)) this.problem("open", r);
			this.#repair.arm(repair.drafts);
		}
	}

	/**
	 * Bring the lattice in step with the session's context entries: new entries at the end are
	 * hashed and appended (cheap); anything else (a compaction, another branch) rebuilds. The new
	 * entries are found by walking back from the leaf to the leaf of the last sync (entriesSince),
	 * not by Pi's buildContextEntries (a whole-path rebuild per call): with no compaction among
	 * them, Pi's context entries are the previous ones followed by exactly these (it only reorders
	 * around the newest compaction). Whenever that cannot be shown, the full comparison runs.
	 */
	sync(sm: SessionView): Open | undefined {
		const open = this.#open;
		const synced = this.#synced;
		this.#synced = undefined;
		if (open && synced?.open === open && open.sessionId === sm.getSessionId()) {
			const added = entriesSince(sm, synced.leafId);
			if (added && !added.some((e) => e.type === "compaction")) return this.#appendSynced(open, added, sm);
		}
		const now = sm.buildContextEntries();
		if (!open || open.sessionId !== sm.getSessionId() || !extendsEntries(open.raw, now)) {
			this.open(sm);
			return this.#markSynced(this.#open, sm);
		}
		return this.#appendSynced(open, now.slice(open.raw.length), sm);
	}

	/** Append context entries that extend the lattice's, or rebuild when the lattice refuses them. */
	#appendSynced(open: Open, tail: readonly SessionEntry[], sm: SessionView): Open | undefined {
		if (tail.length === 0) return this.#markSynced(open, sm);
		const added = contextEntriesOf(tail, this.core);
		if (added.entries.length > 0) {
			const r = open.lattice.extend(added.entries);
			if (!r.ok) {
				this.problem("sync", r.reason);
				this.open(sm);
				return this.#markSynced(this.#open, sm);
			}
			open.context.entries.push(...added.entries);
			open.context.sources.push(...added.sources);
			open.context.texts.push(...added.texts);
		}
		open.raw.push(...tail);
		return this.#markSynced(open, sm);
	}

	/** Remember the leaf `open` is now in step with (the next sync walks back to it). */
	#markSynced(open: Open | undefined, sm: SessionView): Open | undefined {
		const leafId = sm.getLeafId();
		this.#synced = open && leafId !== null ? { open, leafId } : undefined;
		return open;
	}

	/** The `context` event: digest the request and check it aligns with the session's projection. */
	recordRequest(messages: readonly unknown[], sm: SessionView): unknown[] | undefined {
		// A window repair or a /fold planned while idle shows on this request (a bridge); the
		// recorder sees what is sent. A repair goes first: the /fold waits for the boundary.
		const bridge = this.#repair.armed ? this.#repair : this.bridge;
		const shown = bridge.show(messages, sm);
		if (shown && !shown.ok)
			this.problem(bridge === this.bridge ? "fold" : "repair", `not shown early: ${shown.reason}`);
		const bridged = shown?.ok ? shown.messages : undefined;
		if (bridged && shown?.ok && shown.first) this.recorder.announce(bridge === this.bridge ? "fold" : "repair");
		const sent = bridged ?? messages;
		let r = this.recorder.record(sent);
		if (!r.ok) this.problem("context", r.reason);
		else if (r.kind === "unattributed") this.problem("context", `unattributed rewrite at message ${r.firstChanged}`);
		this.#orphans = this.#pairing.check(sent, r.ok && r.kind === "append");
		if (this.#orphans.length > 0 && !this.#repair.armed) {
			// The window and the folds drifted apart (a boundary batch Pi appended only in part, say):
			// rebuild from the session, and show the repaired window on this very request.
			this.problem(
				"context",
				`the request holds tool results whose call is hidden (${this.#orphans.join(", ")}): rebuilt from the session`,
			);
			this.open(sm);
			const repaired = this.#repair.show(messages, sm);
			if (repaired?.ok) {
				r = this.recorder.record(repaired.messages); // a new baseline: open() rebased the recorder
				this.#orphans = this.#pairing.check(repaired.messages, false);
				return this.#aligned(messages, sm, r, repaired.messages);
			}
		}
		return this.#aligned(messages, sm, r, bridged);
	}

	/** Check the request aligns with the session's projection; returns what the context event answers. */
	#aligned<T>(messages: readonly unknown[], sm: SessionView, r: RecordOutcome, answer: T): T {
		// A pure append of an aligned request only needs its new tail aligned (ProjectionAligner says why).
		const aligned = this.#aligner.align(
			messages as Parameters<ProjectionAligner["align"]>[0],
			sm,
			r.ok && r.kind === "append",
		);
		if (!aligned.ok) {
			this.#alignmentFailures++;
			this.problem("context", `alignment: ${aligned.reason}`);
		}
		return answer;
	}

	/**
	 * The `context_with_system` event: the request as sent, for calibration, and the fence: a
	 * verdict when it would exceed the serving budget (the hook stops it and tells the user).
	 */
	observeRequest(messages: readonly unknown[], ctx: ExtensionContext): FenceVerdict | undefined {
		const model = modelKey(ctx.model);
		const estimate = this.meter.observeRequest(messages, model);
		const budget = this.budgetFor(ctx.model);
		const tokens = this.meter.calibration.apply(estimate, model);
		if (this.#orphans.length > 0) {
			// Whatever its size, a provider refuses it: stopped until the repair at the next boundary.
			const verdict = { tokens, budget: budget.ok ? budget.budget : 0, pendingMarks: 0, orphans: [...this.#orphans] };
			this.#fence.stopped++;
			this.#fence.last = { ...verdict, message: fenceMessage(verdict) };
			return verdict;
		}
		if (!budget.ok) return undefined;
		// The pending marks are counted only for a request that is stopped (pending() builds views).
		const over = fenceVerdict(tokens, budget.budget, 0);
		const verdict = over && {
			...over,
			pendingMarks: this.#open?.lattice.pending().length ?? 0,
			why: budgetText(budget),
			limit: budget.limit,
		};
		if (verdict) {
			this.#fence.stopped++;
			this.#fence.last = { ...verdict, message: fenceMessage(verdict) };
		}
		return verdict;
	}

	/** turn_end: calibrate, mark, and commit when the next request would reach maxTarget. */
	async turnEnd(e: TurnEndEvent, ctx: ExtensionContext): Promise<SessionBoundaryDraft[]> {
		const model = modelKey(ctx.model);
		this.#lastTurn = e.turnIndex;
		const failed = e.message.role === "assistant" && e.message.stopReason === "error";
		if (e.message.role === "assistant") {
			const c = this.meter.calibrate(e.message.usage, model);
			if (!c.ok && !failed && e.message.stopReason !== "aborted") this.problem("calibrate", c.reason);
			if (!failed) this.overflowGuard.answered();
		}
		this.#ingestEvidence(e.toolResults, ctx.sessionManager);
		const open = this.sync(ctx.sessionManager);
		if (!open) return [];
		this.#unmeasured = undefined; // measured again below, from this boundary's preview
		// A window repair comes first; what follows is planned over the window it makes.
		const repair = this.#repairDrafts(open, e.context.contextEntries);
		const projection =
			repair.drafts.length > 0 ? projectionWith(repair.drafts, e.context.contextEntries) : e.context.contextEntries;
		const edits = this.#stagedEdits(open, projection);
		// A fold a request already showed (the bridge) commits here as it was planned: new marks wait
		// for the next boundary, since a mark cut now could cover roots the shown consolidation took.
		const shownFold = this.#foldNow !== undefined && this.bridge.shown;
		const out: SessionBoundaryDraft[] = [
			...repair.drafts,
			...edits,
			...this.#peekFollowUps(open, e.messageEntryId),
			...(shownFold ? [] : this.#markFrontier(open, e.messageEntryId)),
		];
		// A failed request carries no usage to aim by; an overflow is recovered at session_before_compact.
		if (failed) return out;

		const budget = this.budgetFor(ctx.model);
		if (!budget.ok) return out;
		const shown = repair.drafts.length > 0 ? projection.flatMap((pe) => pe.messages) : e.context.contextMessages;
		const next = [...shown, ...e.context.pendingMessages];
		const occupancy = this.meter.occupancy(next, model, budget.budget);
		this.#occupancy = occupancy;
		// One rewrite per boundary: staged edits (or a repair no request has shown yet) already
		// rewrite this one; a commit waits for the next.
		if (edits.length > 0 || (repair.drafts.length > 0 && !repair.shown)) return out;
		const fold = this.#foldNow;
		this.#foldNow = undefined;
		const bridge = this.bridge.take();
		const need = fold ? 1 : commitNeed(occupancy, this.settings.thresholds);
		if (need <= 0) return out;
		const batch = await this.#planBatch(open, {
			projection,
			pending: e.context.pendingMessages,
			need,
			occupancy,
			model,
			reason: fold ? "fold" : "threshold",
			...(fold ? { all: true, only: fold.only } : {}),
		});
		if (!batch) {
			if (bridge?.shown) this.problem("fold", "a /fold shown through the context event could not be committed");
			return out;
		}
		// A /fold already shown on the request (the bridge): that request was the attributed rewrite.
		if (bridge?.shown) {
			const same = bridge.matches(batch.drafts);
			if (!same.ok) this.problem("fold", `the committed /fold differs from the one shown: ${same.reason}`);
		}
		batch.apply(bridge?.shown !== true);
		return [...out, ...batch.drafts];
	}

	/**
	 * /fold while Pi is idle: plan the commit now (its folds durable in the store at once) and show
	 * it on the next request through the context event, so the first request of the next prompt is
	 * already folded; the same marks commit at that prompt's first turn_end (CONTEXT_EDIT.md 6).
	 * `need`: fold only what lands the window at minTarget (modelSelected), not every mark.
	 */
	async prepareFold(ctx: ExtensionContext, need?: number): Promise<{ ok: true } | { ok: false; reason: string }> {
		const fold = this.#foldNow;
		if (!fold) return { ok: false, reason: "no /fold is waiting" };
		if (this.#repair.armed) return { ok: false, reason: "the window is being repaired first" };
		const sm = ctx.sessionManager;
		const open = this.sync(sm);
		if (!open) return { ok: false, reason: "no session is open" };
		const projection = sm.buildSessionProjection();
		const planned = await planCommit({
			core: this.core,
			lattice: open.lattice,
			context: open.context,
			projection: projection.entries,
			store: open.store,
			records: open.records,
			thresholds: this.settings.thresholds,
			// With `need` (a model switch): the stalest marks that free it; without (a /fold): all of them.
			need: need ?? 1,
			ratio: this.meter.calibration.ratioFor(modelKey(ctx.model)),
			prewritten: (hashes) => this.prewriter.durable(open.store, hashes),
			...(need === undefined ? { all: true, ...(fold.only ? { only: fold.only } : {}) } : {}),
			unstorable: open.unstorable,
			damaged: open.damaged,
		});
		if (!planned.ok) return { ok: false, reason: planned.reason };
		this.#reportSkipped(open, "fold", planned.plan.skipped);
		if (this.#open !== open) return { ok: false, reason: "the session moved while the folds were written" };
		// The turn_end commit re-plans exactly these marks (deterministic: same briefs, same drafts).
		this.#foldNow = { only: new Set(planned.plan.committed) };
		this.bridge.arm(planned.plan.drafts);
		return { ok: true };
	}

	/**
	 * session_before_compact with reason "overflow": plan a commit sized from the failed request and
	 * cancel Pi's compaction, or return undefined (Pi's own recovery runs) saying why in status.
	 */
	async overflow(e: SessionBeforeCompactEvent, ctx: ExtensionContext): Promise<SessionBeforeCompactResult | undefined> {
		this.compaction.overflowSeen++;
		const passOn = (why: string): undefined => {
			this.compaction.overflowPassed++;
			this.#overflowPassedOn.push(why);
			if (this.#overflowPassedOn.length > MAX_PROBLEMS) this.#overflowPassedOn.shift();
			return undefined;
		};
		if (!e.willRetry) return passOn("the response completed (no retry to fold for)");
		if (!this.overflowGuard.mayRecover()) return passOn("the retry after pi-fold's own recovery overflowed again");
		const open = this.sync(ctx.sessionManager);
		if (!open) return passOn("the lattice is not open");
		const budget = this.budgetFor(ctx.model);
		if (!budget.ok) return passOn(`no serving budget: ${budget.reason}`);
		const report = lastOverflowReport(e.branchEntries);
		// The provider's limit, if it said one and it is tighter than ours, is the one that holds.
		const cap = report.maximum !== undefined ? Math.min(budget.budget, report.maximum) : budget.budget;
		const model = modelKey(ctx.model);
		const projection = ctx.sessionManager.buildSessionProjection();
		const estimated = this.meter.occupancy(projection.messages, model, cap).tokens;
		// The provider counted the request it refused: trust it over the estimate when it is larger.
		const occupancy = occupancyOf(Math.max(estimated, report.tokens ?? 0), cap);
		const need = Math.max(1, Math.ceil(occupancy.tokens - Math.floor(this.settings.thresholds.minTarget * cap)));
		const batch = await this.#planBatch(open, {
			projection: projection.entries,
			pending: [],
			need,
			occupancy,
			model,
			reason: "overflow",
		});
		if (!batch) return passOn("nothing could be folded (see problems)");
		const folds = batch.log.committed.length + batch.log.consolidated.length;
		batch.drafts.push(overflowNoticeDraft({ report, folds, after: batch.log.after, budget: cap }));
		this.#recovery = { batch, leafId: ctx.sessionManager.getLeafId() };
		this.overflowGuard.arm(batch.drafts);
		return { cancel: true };
	}

	/** The staged window edits as one batch over the boundary's projection (applied to the lattice now). */
	#stagedEdits(open: Open, projection: readonly ProjectedSessionEntry[]): SessionBoundaryDraft[] {
		const staged = this.#staged;
		this.#staged = [];
		const batch = stagedBatch(open.lattice, open.context, projection, staged);
		if (!batch) return [];
		for (const p of batch.problems) this.problem("staged edits", p);
		if (batch.ops.length === 0) return [];
		const costs = (l: FoldLattice) => windowCosts(l, open.context, this.entryTokens).total;
		this.#unmeasured = { lattice: batch.lattice, tokens: costs(batch.lattice) - costs(open.lattice) };
		open.lattice = batch.lattice;
		this.recorder.announce("expand");
		return [...batch.drafts, ...batch.ops.map(record)];
	}

	/**
	 * The window repair found at open, as edits over this boundary's projection (computed again:
	 * entries may have come since). Shown already if a request went out since; else announced.
	 */
	#repairDrafts(
		open: Open,
		projection: readonly ProjectedSessionEntry[],
	): { drafts: ContextEditEntryDraft[]; shown: boolean } {
		const armed = this.#repair.take();
		if (!armed) return { drafts: [], shown: false };
		const repair = windowRepair(open.lattice, open.context.sources, projection, editedTargets(open.raw));
		if (repair.drafts.length > 0 && !armed.shown) this.recorder.announce("repair");
		return { drafts: repair.drafts, shown: armed.shown };
	}

	/** Peeks the model has now seen: their batch is marked for the next commit, or pinned. */
	#peekFollowUps(open: Open, messageEntryId: string): SessionBoundaryDraft[] {
		if (this.#peeks.length === 0) return [];
		const done = peekFollowUps(open.lattice, open.context, this.#peeks, messageEntryId);
		for (const p of done.problems) this.problem("peek", p);
		if (done.lattice !== open.lattice) this.#replaceLattice(open, done.lattice);
		this.#peeks = done.waiting;
		return done.ops.map(record);
	}

	/** agent_before_settle: append an armed overflow recovery and ask for its one continuation. */
	beforeSettle(e: AgentBeforeSettleEvent, ctx: ExtensionContext): BoundaryResult | undefined {
		const recovery = this.#recovery;
		this.#recovery = undefined;
		const drafts = this.overflowGuard.take();
		if (!recovery || !drafts) return undefined;
		// Planned against the session as it was at session_before_compact: anything appended since
		// could make the drafts stale, so drop them rather than guess.
		if (ctx.sessionManager.getLeafId() !== recovery.leafId || this.#open?.lattice !== recovery.batch.base) {
			this.problem("overflow", "the session moved between the overflow and the settle: recovery dropped");
			return undefined;
		}
		if (e.outcome !== "error") this.problem("overflow", `settling with outcome ${String(e.outcome)}, not error`);
		recovery.batch.apply();
		this.compaction.overflowRecovered++;
		return { entries: [...e.entries, ...drafts], continue: true };
	}

	/**
	 * Where the next frontier pass starts, for the lattice it was decided on. Marking and extending
	 * change that lattice only after the cursor; every other change to folds (commit, consolidate,
	 * expand, refold, unmark, a rebuild) comes as another lattice object, which resets it.
	 */
	#frontier: { lattice: FoldLattice; cursor: FrontierCursor } | undefined;

	/** Frontier pass over what the model has seen: entries before this turn's assistant message. */
	#markFrontier(open: Open, messageEntryId: string): SessionBoundaryDraft[] {
		// The message is the newest entry or near it: search from the end.
		let at = open.context.entries.length - 1;
		while (at >= 0 && open.context.entries[at].id !== messageEntryId) at--;
		const seen = at < 0 ? open.context.entries.length : at;
		const { context, lattice } = open;
		if (this.#frontier?.lattice !== lattice) this.#frontier = { lattice, cursor: frontierCursor() };
		const settings = this.settings;
		// Spans the agent or a person unmarked are not cut again on the frontier's own initiative, nor
		// are folds known damaged taken into a new one: to the frontier they are pinned (its cursor
		// resets when that set changes, as for pins).
		const withdrawn = this.#frontierPins(open);
		const view =
			withdrawn.size === 0
				? lattice
				: {
						entries: lattice.entries,
						tools: lattice.tools,
						rootSpans: (from: number) => lattice.rootSpans(from),
						pins: () => [...lattice.pins(), ...withdrawn],
					};
		// The whole context and lattice, with the pass limited to the first `seen` entries (no copies).
		const requests = proposeMarks(
			context,
			view,
			{
				minFoldChars: settings.thresholds.minFoldChars,
				maxCutsPerPass: DEFAULT_FRONTIER_SETTINGS.maxCutsPerPass,
				blacklistAutoFoldTools: settings.blacklistAutoFoldTools,
			},
			this.#frontier.cursor,
			seen,
		);
		if (requests.length === 0) return [];
		const marked = lattice.markMany(requests);
		if (!marked.ok) {
			this.problem("frontier", marked.reason);
			return [];
		}
		this.prewriter.start(open.store, leavesOf(lattice, context, marked.ids, open.records));
		return marked.ids.map((id, i) =>
			record({ v: 1, op: "mark", id, kind: requests[i].kind as FoldKind, from: requests[i].from, to: requests[i].to }),
		);
	}

	/** Entries the frontier must leave alone: withdrawn spans, and the entries of damaged folds. */
	#frontierPins(open: Open): ReadonlySet<string> {
		const withdrawn = this.withdrawn;
		if (open.damaged.size === 0) return withdrawn;
		const out = new Set(withdrawn);
		for (const id of open.damaged.keys()) {
			const f = open.lattice.get(id);
			if (f) for (let p = f.start; p < f.end; p++) out.add(open.lattice.entries[p].id);
		}
		return out;
	}

	/** Oversized tool results also become read-only evidence files (the writer never throws). */
	#ingestEvidence(results: TurnEndEvent["toolResults"], sm: SessionView): void {
		if (results.length === 0) return;
		const dir = evidenceDirFor({ sessionFile: sm.getSessionFile(), sessionId: sm.getSessionId() });
		if (!this.#evidence || this.#evidence.dir !== dir) this.#evidence = new EvidenceWriter({ dir, core: this.core });
		for (const r of results) this.#evidence.write(r.toolCallId, r.toolName, toolResultText(r));
	}

	/**
	 * The unbriefed-marks notice for a commit batch: marks still pending after the commit, named once
	 * per frozen projection. It rides on a batch that rewrites the window anyway (a commit), at its
	 * end, so it never causes a rewrite of its own.
	 */
	#noticeDraft(open: Open, lattice: FoldLattice): SessionBoundaryDraft | undefined {
		const entries = open.context.entries;
		const text = unbriefedNotice(
			lattice.pending().map((f) => {
				let bytes = 0;
				for (let p = f.start; p < f.end; p++) bytes += entries[p].bytes;
				return { id: f.id, kind: f.kind, provenance: f.provenance, bytes, state: f.state };
			}),
		);
		return text === undefined
			? undefined
			: { type: "custom_message", customType: UNBRIEFED_NOTICE_TYPE, content: text, display: true };
	}

	/**
	 * Plan a commit (planCommit), its receipt and log. Nothing changes until `apply` (swap the
	 * lattice in, announce the rewrite): the caller applies when the drafts are really returned.
	 */
	async #planBatch(open: Open, req: BatchRequest): Promise<PlannedBatch | undefined> {
		const { occupancy, model } = req;
		const base = open.lattice;
		const planned = await planCommit({
			core: this.core,
			lattice: open.lattice,
			context: open.context,
			projection: req.projection,
			store: open.store,
			records: open.records,
			thresholds: this.settings.thresholds,
			need: req.need,
			ratio: this.meter.calibration.ratioFor(model),
			prewritten: (hashes) => this.prewriter.durable(open.store, hashes),
			...(req.all ? { all: true, only: req.only } : {}),
			unstorable: open.unstorable,
			damaged: open.damaged,
		});
		const where = `${req.reason} commit after turn ${this.#lastTurn}`;
		if (!planned.ok) {
			this.problem(where, `nothing folded: ${planned.reason}`);
			return undefined;
		}
		this.#reportSkipped(open, where, planned.plan.skipped);
		// The store writes yield the event loop: a session switch meanwhile makes the plan stale.
		if (this.#open !== open || open.lattice !== base) {
			this.problem(`${req.reason} commit after turn ${this.#lastTurn}`, "the session moved during the store writes");
			return undefined;
		}
		const { plan } = planned;
		const facts = {
			committed: plan.committed,
			consolidated: plan.consolidated,
			before: occupancy.tokens,
			after: 0,
			budget: occupancy.budget,
		};
		// The receipt is part of the next request: count it in the landing estimate.
		const withReceipt = (after: number) => receiptDraft({ ...facts, after });
		const draft0 = withReceipt(occupancy.tokens);
		const notice = this.#noticeDraft(open, plan.lattice);
		const appended = [draft0, ...(notice ? [notice] : [])].map((d) => ({
			role: "custom",
			content: d.type === "custom_message" ? d.content : "",
		}));
		const after = this.meter.calibration.apply(
			this.meter.estimateRequest([...plan.predicted, ...req.pending, ...appended]),
			model,
		);
		const log: CommitLog = {
			reason: req.reason,
			turn: this.#lastTurn,
			committed: plan.committed,
			consolidated: plan.consolidated,
			before: occupancy.tokens,
			after,
			budget: occupancy.budget,
			met: plan.met,
			edits: plan.drafts.length,
			skipped: plan.skipped.map((f) => f.id),
		};
		return {
			base,
			log,
			drafts: [...plan.drafts, ...plan.ops.map(record), withReceipt(after), ...(notice ? [notice] : [])],
			apply: (announce = true) => {
				open.lattice = plan.lattice;
				open.records = plan.records;
				if (announce) this.recorder.announce(req.reason === "threshold" ? "commit" : req.reason);
				this.#occupancy = occupancyOf(after, occupancy.budget);
				this.#commits.push(log);
			},
		};
	}

	/** Folds a commit left out because they could not be stored: named, and not chosen again. */
	#reportSkipped(open: Open, where: string, skipped: readonly { id: FoldId; reason: string }[]): void {
		for (const f of skipped) {
			open.unstorable.set(f.id, f.reason);
			this.problem(where, `fold ${f.id} could not be stored and stays unfolded: ${f.reason}`);
		}
	}

	status(): RuntimeStatus {
		const lattice = this.#open?.lattice;
		const folds = lattice?.folds() ?? [];
		const entries = lattice?.entries ?? [];
		return {
			open: this.#open !== undefined,
			budget: this.#budget,
			occupancy: this.#occupancy,
			thresholds: this.settings.thresholds,
			pendingMarks: folds
				.filter((f) => f.state === "pending")
				.map((f) => ({
					id: f.id,
					kind: f.kind,
					from: entries[f.start].id,
					to: entries[f.end - 1].id,
					provenance: f.provenance,
				})),
			roots: (lattice?.visibleRoots() ?? []).map((id) => {
				const f = lattice?.get(id);
				return { id, kind: f?.kind ?? "", brief: f?.brief ?? "" };
			}),
			folds: folds.length,
			damaged: [...(this.#open?.damaged ?? [])].map(([id, reason]) => ({ id, reason })),
			unstorable: [...(this.#open?.unstorable ?? [])].map(([id, reason]) => ({ id, reason })),
			commits: [...this.#commits],
			rewrites: this.recorder.counters(),
			alignmentFailures: this.#alignmentFailures,
			compaction: { ...this.compaction },
			overflowPassedOn: [...this.#overflowPassedOn],
			fence: { ...this.#fence },
			evidence: this.#evidence?.status() ?? null,
			problems: [...this.#problems],
			timing: { requests: this.#requestsTimed, handlerMs: [...this.handlerMs] },
		};
	}
}
