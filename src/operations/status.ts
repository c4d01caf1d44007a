// The runtime's state as status reports it: a plain copy, taken at once, that the agent's tool,
// /fold-status and the benchmarks read. Nothing in it changes the runtime.
import type { FenceStatus } from "../meter/fence.ts";
import type { BudgetStatus } from "../meter/meter.ts";
import type { Occupancy } from "../meter/occupancy.ts";
import type { RewriteCounters } from "../meter/recorder.ts";
import type { CacheVerdict } from "../meter/request-pace.ts";
import type { CommitDecision } from "../policy/cost-model.ts";
import type { EvidenceStatus } from "../session/evidence.ts";
import type { Open } from "../session/open-session.ts";
import type { FoldId, Thresholds } from "../vocabulary.ts";

export type { BudgetStatus };

/** One commit, as status and tests see it. */
export interface CommitLog {
	/**
	 * What fired it: the occupancy at a turn boundary (the band), the cost model at a turn boundary,
	 * a person's /fold, or a provider's context-overflow error.
	 */
	reason: "threshold" | "cost" | "overflow" | "fold";
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
	/** Why the cost model fired it. */
	why?: string;
}

/** What happened to Pi's compaction requests. */
export interface CompactionCounters {
	/** Pi's threshold passes declined (the next request still fits the window). */
	thresholdCancelled: number;
	/** Pi's threshold passes answered by folding before the next request. */
	thresholdFolded: number;
	/** Pi's threshold passes let through: nothing lossless was left and the next request would not fit. */
	thresholdPassed: number;
	manualPassed: number;
	overflowSeen: number;
	/** Overflows answered by a commit and one continuation. */
	overflowRecovered: number;
	/** Overflows left to Pi's own recovery (see overflowPassedOn). */
	overflowPassed: number;
}

/** What status shows of the commit policy. */
export interface PolicyStatus {
	/** "cost": the cost model decides; "band": the fixed band (set by the person, or a card without cache prices). */
	policy: "cost" | "band";
	/** Why the band decides, when it does. */
	bandWhy?: string;
	cache: CacheVerdict;
	/** The last boundary's reckoning under the cost model. */
	last?: CommitDecision & { freed: number; rewrite: number; growth: number; turn?: number; commit: boolean };
	/** The last commit made on a cold cache (turn: its boundary's; none: before a prompt's first request), and how many were. */
	lastCold?: { turn?: number; freed: number };
	coldCommits: number;
	/** Pi's idle cache refreshes stopped: they cost more than the prefix the next commit keeps warm. */
	warmingStopped: number;
	/** Pi's idle cache refreshes let go on although a commit is due: the prefix it keeps is worth more. */
	warmingKept: number;
	/** Why the last decision held a due commit back (the last request rewrote the window already). */
	held?: string;
	/** The raw working set at the last decision: the newest tool batches kept as they are, and their tokens. */
	workingSet?: { batches: number; tokens: number };
}

export interface RuntimeStatus {
	open: boolean;
	/** The serving budget last asked for (the model then), which limit set it and why; null before any. */
	budget: BudgetStatus | { ok: false; reason: string } | null;
	occupancy: Occupancy | null;
	thresholds: Thresholds;
	pendingMarks: { id: FoldId; kind: string; from: string; to: string; provenance: string }[];
	roots: { id: FoldId; kind: string; brief: string }[];
	folds: number;
	/** Folds whose bytes are known damaged, and marks a commit could not store: each with why. */
	damaged: { id: FoldId; reason: string }[];
	unstorable: { id: FoldId; reason: string }[];
	commits: CommitLog[];
	rewrites: RewriteCounters;
	alignmentFailures: number;
	compaction: CompactionCounters;
	/** Why overflows were left to Pi's own recovery (newest last). */
	overflowPassedOn: string[];
	fence: FenceStatus;
	/** pi-fold's receipts and notices in the last request (the newest commit's only, once it committed again). */
	noticesShown: number;
	/** Evidence files of this session: written, skipped over the cap, problems. */
	evidence: EvidenceStatus | null;
	/** What went wrong, oldest first; a problem pi-fold repaired since ends with " (repaired)". */
	problems: string[];
	/** How many of `problems` still need action. */
	problemsOpen: number;
	/** Requests timed so far, and the handler time of the newest of them. */
	timing: { requests: number; handlerMs: number[] };
	/** Which policy decides commits, and its last reckoning. */
	policy: PolicyStatus;
}

/**
 * What went wrong, as status texts say it: the count of problems still needing action apart from
 * those pi-fold repaired, the folds known damaged (each until it is healed), then the newest lines.
 */
export function problemLines(
	status: Pick<RuntimeStatus, "problems" | "problemsOpen" | "damaged">,
	newest = 5,
	cut = (line: string) => line,
): string[] {
	const { problems, problemsOpen, damaged } = status;
	const repaired = problems.length - problemsOpen;
	const head =
		problems.length === 0
			? "problems: none"
			: `problems: ${problemsOpen} need${problemsOpen === 1 ? "s" : ""} action, ${repaired} repaired`;
	return [
		head,
		...problems.slice(-newest).map((p) => `  - ${cut(p)}`),
		...(damaged.length === 0
			? []
			: [
					`damaged folds: ${damaged.length}, until healed (each stays folded as it is; no new fold is built over it)`,
					...damaged.slice(0, newest).map((d) => `  - ${d.id}: ${cut(d.reason)}`),
				]),
	];
}

/** The open session's part of status: its marks, its visible roots, its folds, what is known wrong. */
export function sessionStatus(
	open: Readonly<Open> | undefined,
): Pick<RuntimeStatus, "open" | "pendingMarks" | "roots" | "folds" | "damaged" | "unstorable"> {
	const folds = open?.lattice.folds() ?? [];
	const entries = open?.lattice.entries ?? [];
	return {
		open: open !== undefined,
		pendingMarks: folds
			.filter((f) => f.state === "pending")
			.map((f) => ({
				id: f.id,
				kind: f.kind,
				from: entries[f.start].id,
				to: entries[f.end - 1].id,
				provenance: f.provenance,
			})),
		roots: (open?.lattice.visibleRoots() ?? []).map((id) => {
			const f = open?.lattice.get(id);
			return { id, kind: f?.kind ?? "", brief: f?.brief ?? "" };
		}),
		folds: folds.length,
		damaged: [...(open?.damaged ?? [])].map(([id, reason]) => ({ id, reason })),
		unstorable: [...(open?.unstorable ?? [])].map(([id, reason]) => ({ id, reason })),
	};
}
