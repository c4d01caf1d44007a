// The runtime's shapes: the open session, commit logs, status, and a planned batch; plus the two
// small helpers the runtime and its collaborators share (a record draft, the append check).
import type { ProjectedSessionEntry, SessionBoundaryDraft, SessionEntry } from "@earendil-works/pi-coding-agent";
import type { FoldId } from "../fold-types.ts";
import type { RuntimeSettings } from "../host/options.ts";
import type { FoldLattice } from "../lattice/index.ts";
import type { BudgetLimit, PriceTierLimit } from "../meter/budget.ts";
import type { FenceStatus } from "../meter/fence.ts";
import type { Occupancy } from "../meter/occupancy.ts";
import type { RewriteRecorder } from "../meter/recorder.ts";
import type { ContextEntries } from "../session/context-entries.ts";
import type { EvidenceStatus } from "../session/evidence.ts";
import { type JournalOp, RECORD_TYPE } from "../session/journal.ts";
import type { RecordIndex } from "../session/persist.ts";
import type { FoldStore } from "../store/index.ts";

/** What happened to Pi's compaction requests. */
export interface CompactionCounters {
	thresholdCancelled: number;
	manualPassed: number;
	overflowSeen: number;
	/** Overflows answered by a commit and one continuation. */
	overflowRecovered: number;
	/** Overflows left to Pi's own recovery (see overflowPassedOn). */
	overflowPassed: number;
}

export interface Open {
	lattice: FoldLattice;
	context: ContextEntries;
	/** Every raw context entry the lattice has seen, also those without messages (to detect appends). */
	raw: SessionEntry[];
	store: FoldStore;
	records: RecordIndex;
	sessionId: string;
	/** Folds whose bytes are known damaged (store and session copy), with what is wrong. */
	damaged: Map<FoldId, string>;
	/** Folds recorded under another id (an entry's bytes changed in the session file): recorded -> lattice id. */
	aliases: Map<FoldId, FoldId>;
	/** Marks a commit could not store, with why: not chosen again by the runtime in this session. */
	unstorable: Map<FoldId, string>;
}

/** One commit, as status and tests see it. */
export interface CommitLog {
	/** What fired it: the occupancy at a turn boundary, or a provider's context-overflow error. */
	reason: "threshold" | "overflow" | "fold";
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
	/** Chosen folds left out because they could not be stored. */
	skipped: FoldId[];
}

/** The serving budget as status reports it (budget.ts). */
export interface BudgetStatus {
	ok: true;
	tokens: number;
	source: string;
	limit: BudgetLimit;
	reserve: number;
	window?: number;
	tier?: PriceTierLimit;
	/** budgetText: "272,000 (price tier: 2x above 272,000; window 400,000)". */
	text: string;
	/** budgetWhy: the parenthesis of `text`. */
	why: string;
	/** "provider/id" of the model it was computed for ("(no model)" when none). */
	model: string;
}

export interface RuntimeStatus {
	open: boolean;
	/** The serving budget last asked for (the model then), which limit set it and why; null before any. */
	budget: BudgetStatus | { ok: false; reason: string } | null;
	occupancy: Occupancy | null;
	thresholds: RuntimeSettings["thresholds"];
	pendingMarks: { id: FoldId; kind: string; from: string; to: string; provenance: string }[];
	roots: { id: FoldId; kind: string; brief: string }[];
	folds: number;
	/** Folds whose bytes are known damaged, and marks a commit could not store: each with why. */
	damaged: { id: FoldId; reason: string }[];
	unstorable: { id: FoldId; reason: string }[];
	commits: CommitLog[];
	rewrites: ReturnType<RewriteRecorder["counters"]>;
	alignmentFailures: number;
	compaction: CompactionCounters;
	/** Why overflows were left to Pi's own recovery (newest last). */
	overflowPassedOn: string[];
	fence: FenceStatus;
	/** Evidence files of this session: written, skipped over the cap, problems. */
	evidence: EvidenceStatus | null;
	problems: string[];
	/** Requests timed so far, and the handler time of the newest MAX_TIMINGS of them. */
	timing: { requests: number; handlerMs: number[] };
}

export interface BatchRequest {
	/** The projection the drafts must fit (Pi's preview at a boundary, or the session's own). */
	projection: readonly ProjectedSessionEntry[];
	/** Messages Pi will append before the next request (counted in the landing estimate). */
	pending: readonly unknown[];
	need: number;
	occupancy: Occupancy;
	model: string;
	reason: CommitLog["reason"];
	/** /fold: commit every pending mark (or only these), not just enough to land at minTarget. */
	all?: boolean;
	only?: ReadonlySet<FoldId>;
}

export interface PlannedBatch {
	/** The lattice the plan was made from: applying over another would lose its changes. */
	base: FoldLattice;
	log: CommitLog;
	drafts: SessionBoundaryDraft[];
	/** Swap the plan in; `announce` false when the request already showed it (a /fold bridge). */
	apply(announce?: boolean): void;
}

export function record(op: JournalOp): SessionBoundaryDraft {
	return { type: "custom", customType: RECORD_TYPE, data: op };
}

/** `now` is `before` plus entries appended at the end (same entries, by id, in the same places). */
export function extendsEntries(before: readonly SessionEntry[], now: readonly SessionEntry[]): boolean {
	if (now.length < before.length) return false;
	for (let i = 0; i < before.length; i++) if (before[i] !== now[i] && before[i].id !== now[i].id) return false;
	return true;
}
