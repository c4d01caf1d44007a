// One run of the runtime benchmark's length sweep: the scripted workload at a given number of stages
// in a real Pi AgentSession, with pi-fold between two handler probes (handler-probe.ts) or with the
// probes alone (Pi's own floor between two adjacent handlers). Per request: the wall time the
// extensions add as Pi sees it; per commit: the turn boundary that made it; at the end: memory after a
// full GC, and the shape of the session pi-fold leaves (context_edit entries, fold depth).
import { statSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { ExtensionFactory, SessionEntry } from "@earendil-works/pi-coding-agent";
import { makeSession, type TestSession } from "../../harness/pi-harness.ts";
import { isSummaryRequest, WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "../../harness/workload.ts";
import { type PiFold, type PiFoldOptions, registerPiFold } from "../../src/index.ts";
import { handlerProbe, type RequestCost } from "./handler-probe.ts";
import { EQUAL_COST } from "./session-scenarios.ts";

setFlagsFromString("--expose-gc");
const collect = runInNewContext("gc") as () => void;

/** Heap and resident memory after two full collections (MB). */
function settledMemory(): { heapUsedMb: number; rssMb: number } {
	collect();
	collect();
	const m = process.memoryUsage();
	return { heapUsedMb: m.heapUsed / 2 ** 20, rssMb: m.rss / 2 ** 20 };
}

export interface SweepConfig {
	stages: number;
	seed: number;
	contextWindow: number;
	/** Register pi-fold between the probes (else the probes alone). */
	fold: boolean;
	piFoldOptions?: PiFoldOptions;
	/** Open this session file instead of starting a new one (the synthetic long session). */
	open?: string;
	/** Session dir for `open`. */
	sessionDir?: string;
	/** Tool call ids are prefixed so a reopened session keeps them unique. */
	idPrefix?: string;
	/** Called with the session before the workload starts (e.g. to time the opening). */
	before?: (h: TestSession, fold: PiFold | undefined) => void;
}

export interface SweepCommit {
	turn: number;
	/** The turn boundary that made it: from the turn's last message_end to the next turn_start. */
	ms: number;
	committed: number;
	consolidated: number;
	edits: number;
}

export interface SweepRun {
	stages: number;
	requests: number;
	/** Creating the session: Pi loading it and every extension's session_start (pi-fold's open). */
	setupMs: number;
	wallMs: number;
	perRequest: RequestCost[];
	/**
	 * pi-fold's handlers' own time per request, as the runtime times them (status; its newest 256
	 * requests): the part of the wall time between the probes that is pi-fold's, not Pi's.
	 */
	ownMs: number[];
	commits: SweepCommit[];
	memory: { heapUsedMb: number; rssMb: number };
	shape: {
		messages: number;
		contextEdits: number;
		/** context_edit entries on the branch per message entry. */
		editsPerMessage: number;
		/** Most context_edit entries naming one target. */
		maxEditsPerTarget: number;
		folds: number;
		/** Nesting of the deepest fold (a root has depth 0, so depth + 1 levels). */
		maxDepth: number;
		/** Bytes of entry text pi-fold holds: the text views search keeps (bounded; the sweep does not search). */
		heldTextBytes: number;
		sessionFileBytes: number;
	};
	health: { problems: string[]; extensionErrors: number; unattributed: number };
}

function shapeOf(branch: readonly SessionEntry[]) {
	let messages = 0;
	let contextEdits = 0;
	const perTarget = new Map<string, number>();
	for (const e of branch) {
		if (e.type === "message") messages++;
		else if (e.type === "context_edit") {
			contextEdits++;
			perTarget.set(e.targetId, (perTarget.get(e.targetId) ?? 0) + 1);
		}
	}
	return {
		messages,
		contextEdits,
		editsPerMessage: messages === 0 ? 0 : contextEdits / messages,
		maxEditsPerTarget: Math.max(0, ...perTarget.values()),
	};
}

export async function runSweep(cfg: SweepConfig): Promise<SweepRun> {
	let fold: PiFold | undefined;
	const probe = handlerProbe();
	const extensions: ExtensionFactory[] = [
		probe.first,
		...(cfg.fold
			? [
					(pi: Parameters<ExtensionFactory>[0]) => {
						fold = registerPiFold(pi, cfg.piFoldOptions ?? {});
					},
				]
			: []),
		probe.last,
	];
	const setup0 = performance.now();
	const h = await makeSession({
		cwd: WORKLOAD_ROOT,
		persist: true,
		contextWindow: cfg.contextWindow,
		// A priced model, as a catalog's: the cost model weighs the marks on every turn, as it does for a user.
		cost: EQUAL_COST,
		extensions,
		...(cfg.open ? { open: cfg.open, sessionDir: cfg.sessionDir } : {}),
	});
	const setupMs = performance.now() - setup0;
	try {
		const rt = fold?.runtime.get();
		if (cfg.fold && !rt) throw new Error(`no runtime: ${fold?.runtime.reason()}`);
		cfg.before?.(h, fold);
		const before = probe.samples.length;
		h.script(workloadSteps(cfg.stages, { seed: cfg.seed, idPrefix: cfg.idPrefix }));
		const t0 = performance.now();
		await h.session.prompt(WORKLOAD_PROMPT);
		const wallMs = performance.now() - t0;
		if (before !== 0) throw new Error("the probes saw events before the workload");
		const work = h.captured.filter((c) => !isSummaryRequest(c.context)).length;
		const perRequest = probe.perRequest();
		const status = rt?.status();
		const commits = (status?.commits ?? []).map(
			(c): SweepCommit => ({
				turn: c.turn,
				// The boundary of turn t precedes request t + 1 (the probes count every request, summaries too).
				ms: perRequest[c.turn + 1]?.byEvent.boundary ?? Number.NaN,
				committed: c.committed.length,
				consolidated: c.consolidated.length,
				edits: c.edits,
			}),
		);
		const sm = h.session.sessionManager;
		const lattice = rt?.lattice;
		const folds = lattice?.folds() ?? [];
		const file = sm.getSessionFile();
		const memory = settledMemory();
		return {
			stages: cfg.stages,
			requests: work,
			setupMs,
			wallMs,
			perRequest,
			ownMs: status?.timing.handlerMs ?? [],
			commits,
			memory,
			shape: {
				...shapeOf(sm.getBranch()),
				folds: folds.length,
				maxDepth: Math.max(-1, ...folds.map((f) => f.depth)),
				heldTextBytes: fold?.runtime.actions()?.textViewBytes ?? 0,
				sessionFileBytes: file ? statSync(file).size : 0,
			},
			health: {
				problems: status?.problems ?? [],
				extensionErrors: h.extensionErrors.length,
				unattributed: status?.rewrites.unattributed ?? 0,
			},
		};
	} finally {
		h.dispose();
	}
}
