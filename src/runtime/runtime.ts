// One session's folding runtime: the lattice of the active branch kept in step with the session,
// the store beside the session file, the occupancy meter and the rewrite recorder. Pi's hooks
// (hooks.ts) call into it; it answers with drafts and never throws (the hooks also catch).
import type {
	ExtensionContext,
	ProjectedSessionEntry,
	SessionBoundaryDraft,
	SessionEntry,
	TurnEndEvent,
} from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import type { FoldId, FoldKind } from "../fold-types.ts";
import type { FoldLattice } from "../lattice/index.ts";
import { type ContextEntries, contextEntriesOf } from "../session/context-entries.ts";
import { ancestorStores } from "../session/fork.ts";
import { type JournalOp, RECORD_TYPE } from "../session/journal.ts";
import type { RecordIndex } from "../session/persist.ts";
import { rebuildLattice } from "../session/rebuild.ts";
import { FoldStore } from "../store/index.ts";
import { planCommit } from "./commit.ts";
import { proposeMarks } from "./frontier.ts";
import { alignWithProjection, RewriteRecorder } from "./instrumentation.ts";
import { commitNeed, modelKey, type Occupancy, OccupancyMeter, occupancyOf, servingBudget } from "./occupancy.ts";
import type { RuntimeSettings } from "./options.ts";
import { receiptDraft } from "./receipt.ts";

/** Problems kept for status (the newest). */
export const MAX_PROBLEMS = 50;
/** Frontier cuts per pass (SPEC 3). */
export const MAX_CUTS_PER_PASS = 8;

type SessionView = ExtensionContext["sessionManager"];

interface Open {
	lattice: FoldLattice;
	context: ContextEntries;
	/** Every raw context entry the lattice has seen, also those without messages (to detect appends). */
	raw: SessionEntry[];
	store: FoldStore;
	records: RecordIndex;
	sessionId: string;
}

/** One commit, as status and tests see it. */
export interface CommitLog {
	turn: number;
	committed: FoldId[];
	consolidated: FoldId[];
	/** Calibrated estimate of the next request before and after, and the budget. */
	before: number;
	after: number;
	budget: number;
	met: boolean;
	/** Context-edit drafts in the batch. */
	edits: number;
}

export interface RuntimeStatus {
	open: boolean;
	budget: { ok: true; tokens: number; source: string } | { ok: false; reason: string } | null;
	occupancy: Occupancy | null;
	thresholds: RuntimeSettings["thresholds"];
	pendingMarks: { id: FoldId; kind: string; from: string; to: string; provenance: string }[];
	roots: { id: FoldId; kind: string; brief: string }[];
	folds: number;
	commits: CommitLog[];
	rewrites: ReturnType<RewriteRecorder["counters"]>;
	alignmentFailures: number;
	compaction: { thresholdCancelled: number; manualPassed: number; overflowSeen: number };
	problems: string[];
	timing: { requests: number; handlerMs: number[] };
}

export class FoldRuntime {
	readonly core: PiFoldCore;
	readonly settings: RuntimeSettings;
	readonly meter: OccupancyMeter;
	readonly recorder: RewriteRecorder;
	#open: Open | undefined;
	#problems: string[] = [];
	#commits: CommitLog[] = [];
	#occupancy: Occupancy | null = null;
	#budget: RuntimeStatus["budget"] = null;
	#alignmentFailures = 0;
	readonly compaction = { thresholdCancelled: 0, manualPassed: 0, overflowSeen: 0 };
	/** Handler time (ms) per request: everything pi-fold spent between two requests, attributed to the later one. */
	readonly handlerMs: number[] = [];
	#pendingMs = 0;

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

	/** Add handler time; `request` closes the sample (the context event of the request it preceded). */
	addTime(ms: number, request: boolean): void {
		this.#pendingMs += ms;
		if (request) {
			this.handlerMs.push(this.#pendingMs);
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

	get commits(): readonly CommitLog[] {
		return this.#commits;
	}

	/** (Re)build everything from the session: session_start, session_tree, a rewritten context. */
	open(sm: SessionView): void {
		this.#open = undefined;
		this.recorder.rebase();
		const sessionId = sm.getSessionId();
		const store = FoldStore.forSession({ sessionFile: sm.getSessionFile(), sessionId }, this.core);
		const ancestors = ancestorStores(sm.getHeader()?.parentSession, this.core);
		const raw = sm.buildContextEntries();
		const rebuilt = rebuildLattice(sm.getBranch(), raw, this.core, { store, ancestors });
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
		};
	}

	/**
	 * Bring the lattice in step with the session's context entries: new entries at the end are
	 * hashed and appended (cheap); anything else (a compaction, another branch) rebuilds.
	 */
	sync(sm: SessionView): Open | undefined {
		const open = this.#open;
		const now = sm.buildContextEntries();
		if (!open || open.sessionId !== sm.getSessionId() || !extendsEntries(open.raw, now)) {
			this.open(sm);
			return this.#open;
		}
		if (now.length === open.raw.length) return open;
		const tail = now.slice(open.raw.length);
		const added = contextEntriesOf(tail, this.core);
		if (added.entries.length > 0) {
			const r = open.lattice.extend(added.entries);
			if (!r.ok) {
				this.problem("sync", r.reason);
				this.open(sm);
				return this.#open;
			}
			open.context.entries.push(...added.entries);
			open.context.sources.push(...added.sources);
			open.context.texts.push(...added.texts);
		}
		open.raw.push(...tail);
		return open;
	}

	/** The `context` event: digest the request and check it aligns with the session's projection. */
	recordRequest(messages: readonly unknown[], sm: SessionView): void {
		const r = this.recorder.record(messages);
		if (!r.ok) this.problem("context", r.reason);
		else if (r.kind === "unattributed") this.problem("context", `unattributed rewrite at message ${r.firstChanged}`);
		const aligned = alignWithProjection(
			messages as Parameters<typeof alignWithProjection>[0],
			sm.buildSessionProjection(),
		);
		if (!aligned.ok) {
			this.#alignmentFailures++;
			this.problem("context", `alignment: ${aligned.reason}`);
		}
	}

	/** The `context_with_system` event: the request as sent, for calibration. */
	observeRequest(messages: readonly unknown[], ctx: ExtensionContext): void {
		this.meter.observeRequest(messages, modelKey(ctx.model));
	}

	/** turn_end: calibrate, mark, and commit when the next request would reach maxTarget. */
	turnEnd(e: TurnEndEvent, ctx: ExtensionContext): SessionBoundaryDraft[] {
		const model = modelKey(ctx.model);
		if (e.message.role === "assistant") {
			const c = this.meter.calibrate(e.message.usage, model);
			if (!c.ok && e.message.stopReason !== "error" && e.message.stopReason !== "aborted") {
				this.problem("calibrate", c.reason);
			}
		}
		const open = this.sync(ctx.sessionManager);
		if (!open) return [];
		const out: SessionBoundaryDraft[] = this.#markFrontier(open, e.messageEntryId);

		const budget = servingBudget(ctx.model, this.settings.providerInputBudget);
		this.#budget = budget.ok ? { ok: true, tokens: budget.budget, source: budget.source } : budget;
		if (!budget.ok) return out;
		const next = [...e.context.contextMessages, ...e.context.pendingMessages];
		const occupancy = this.meter.occupancy(next, model, budget.budget);
		this.#occupancy = occupancy;
		const need = commitNeed(occupancy, this.settings.thresholds);
		if (need <= 0) return out;
		return [...out, ...this.#commit(open, e, need, occupancy, model)];
	}

	/** Frontier pass over what the model has seen: entries before this turn's assistant message. */
	#markFrontier(open: Open, messageEntryId: string): SessionBoundaryDraft[] {
		const at = open.context.entries.findIndex((x) => x.id === messageEntryId);
		const seen = at < 0 ? open.context.entries.length : at;
		const context: ContextEntries = {
			entries: open.context.entries.slice(0, seen),
			sources: open.context.sources.slice(0, seen),
			texts: open.context.texts.slice(0, seen),
		};
		const lattice = open.lattice;
		const view = { entries: context.entries, folds: () => lattice.folds(), pins: () => lattice.pins() };
		const requests = proposeMarks(context, view, {
			minFoldChars: this.settings.thresholds.minFoldChars,
			maxCutsPerPass: MAX_CUTS_PER_PASS,
			blacklistAutoFoldTools: this.settings.blacklistAutoFoldTools,
		});
		if (requests.length === 0) return [];
		const marked = lattice.markMany(requests);
		if (!marked.ok) {
			this.problem("frontier", marked.reason);
			return [];
		}
		return marked.ids.map((id, i) =>
			record({ v: 1, op: "mark", id, kind: requests[i].kind as FoldKind, from: requests[i].from, to: requests[i].to }),
		);
	}

	#commit(open: Open, e: TurnEndEvent, need: number, occupancy: Occupancy, model: string): SessionBoundaryDraft[] {
		const planned = planCommit({
			core: this.core,
			lattice: open.lattice,
			context: open.context,
			projection: e.context.contextEntries as readonly ProjectedSessionEntry[],
			store: open.store,
			records: open.records,
			thresholds: this.settings.thresholds,
			need,
			ratio: this.meter.calibration.ratioFor(model),
		});
		if (!planned.ok) {
			this.problem(`commit at turn ${e.turnIndex}`, `nothing folded: ${planned.reason}`);
			return [];
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
		const estimate = (receipt: typeof draft0) =>
			this.meter.calibration.apply(
				this.meter.estimateRequest([
					...plan.predicted,
					...e.context.pendingMessages,
					{ role: "custom", content: receipt.content },
				]),
				model,
			);
		const after = estimate(draft0);
		const receipt = withReceipt(after);
		open.lattice = plan.lattice;
		open.records = plan.records;
		this.recorder.announce("commit");
		this.#occupancy = occupancyOf(after, occupancy.budget);
		this.#commits.push({
			turn: e.turnIndex,
			committed: plan.committed,
			consolidated: plan.consolidated,
			before: occupancy.tokens,
			after,
			budget: occupancy.budget,
			met: plan.met,
			edits: plan.drafts.length,
		});
		return [...plan.drafts, ...plan.ops.map(record), receipt];
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
			commits: [...this.#commits],
			rewrites: this.recorder.counters(),
			alignmentFailures: this.#alignmentFailures,
			compaction: { ...this.compaction },
			problems: [...this.#problems],
			timing: { requests: this.handlerMs.length, handlerMs: [...this.handlerMs] },
		};
	}
}

function record(op: JournalOp): SessionBoundaryDraft {
	return { type: "custom", customType: RECORD_TYPE, data: op };
}

/** `now` is `before` plus entries appended at the end (same entries, by id, in the same places). */
function extendsEntries(before: readonly SessionEntry[], now: readonly SessionEntry[]): boolean {
	if (now.length < before.length) return false;
	for (let i = 0; i < before.length; i++) if (before[i] !== now[i] && before[i].id !== now[i].id) return false;
	return true;
}
