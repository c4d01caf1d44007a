// One arm of the session benchmark: a real Pi AgentSession (faux provider, offline) runs the scripted
// workload, then is asked for the planted values. Arm "pi-fold" registers pi-fold with default options;
// arm "native" leaves Pi's own compaction in charge; arm "none" turns Pi's compaction off and has no
// pi-fold, so every request carries the whole conversation (the faux provider takes requests larger than
// the window, where a real one would refuse them: `overWindow` counts them). All get the same script,
// window and settings (compaction disabled over them for "none").
//
// Accounting is what the provider itself reports: the faux provider's stream is wrapped so every
// request's final usage (input / cacheRead / cacheWrite from its common-prefix cache model, output) is
// recorded as it completes — work requests, the recall phase and Pi's summary requests alike.

import { copyFileSync, cpSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import type { AssistantMessage, TranscriptContext } from "@earendil-works/pi-ai";
import type { ExtensionFactory, SessionEntry } from "@earendil-works/pi-coding-agent";
import { longToolRuns } from "../../harness/long-tool-runs.ts";
import { expireCache, type FauxCost, makeSession, type TestSession } from "../../harness/pi-harness.ts";
import { type ReferBack, ReferBacks, type ReferOutcome } from "../../harness/refer-back.ts";
import {
	CONTINUE_PROMPT,
	isSummaryRequest,
	plantLog,
	WORKLOAD_DONE,
	WORKLOAD_PROMPT,
	WORKLOAD_ROOT,
	type WorkloadOptions,
	workloadSteps,
} from "../../harness/workload.ts";
import { type PiFold, type PiFoldOptions, registerPiFold } from "../../src/index.ts";
import type { RuntimeStatus } from "../../src/operations/status.ts";
import { type RequestRecord, usageFromProvider } from "../../src/report/arm-report.ts";
import { type IndexCoverage, indexCoverage } from "../../src/report/index-coverage.ts";
import { STORE_DIR_NAME } from "../../src/store/index.ts";
import {
	type PlantedValue,
	plantOption,
	type RecallAgent,
	recallAgent,
	recallQuestion,
	type ValueReport,
} from "./recall-agent.ts";
import { type StagesNamed, stagesNamed } from "./stages-named.ts";

export type ArmName = "pi-fold" | "native" | "none";
/** Report order: the two policies compared, then the unmanaged floor. */
export const ARMS: readonly ArmName[] = ["pi-fold", "native", "none"];

export interface ArmConfig {
	stages: number;
	seed: number;
	contextWindow: number;
	/** the model's maxTokens (pi-fold reserves it for output, capped) */
	maxTokens?: number;
	/** Pi settings for every arm (e.g. compaction); arm "none" gets `compaction.enabled: false` over them */
	settings?: Record<string, unknown>;
	values: readonly PlantedValue[];
	summaryChars: number;
	readLines?: WorkloadOptions["readLines"];
	root?: string;
	/** pi-fold's options in the pi-fold arm (default {}: the defaults) */
	piFoldOptions?: PiFoldOptions;
	/** the faux model's catalog cost (price tiers included), as Pi's catalog declares one */
	cost?: FauxCost;
	/** copy the arm's session file here when it is done (for `pi-fold replay`) */
	keepSessionAs?: string;
	/** false: the recall agent does not use search (the index and peek only) */
	recallSearch?: boolean;
	/** Told as each request goes out: its phase, and how many of that phase's requests went out so far. */
	onRequest?: (kind: RequestKind, count: number) => void;
	/** Spread the stages over prompts of `every` stages, the person idle `gapSeconds` (simulated) before each next one. */
	idle?: IdleConfig;
	/** These tool batches' first tools run `seconds` (simulated), past the `ttlSeconds` cache lifetime the model declares. */
	longRuns?: { batches: number[]; seconds: number; ttlSeconds: number };
	/** Later stages quote the values planted REFER_BACK_DISTANCE stages earlier (harness/refer-back.ts). */
	referBack?: boolean;
	/** Tool calls per stage, times this (harness/workload.ts outputScale). */
	outputScale?: number;
}

/** How far back a stage that refers back looks, and how many do. */
const REFER_BACK_DISTANCE = 20;
const REFER_BACK_STAGES = 5;

/** The stages that quote a planted value, each REFER_BACK_DISTANCE after its plant. */
export function referBacksOf(values: readonly PlantedValue[], stages: number): ReferBack[] {
	return values
		.filter((v) => v.stage + REFER_BACK_DISTANCE < stages)
		.slice(0, REFER_BACK_STAGES)
		.map((v) => ({
			stage: v.stage + REFER_BACK_DISTANCE,
			from: v.stage,
			command: `cat ${plantLog(v.stage, v.value)}`,
		}));
}

interface IdleConfig {
	every: number;
	gapSeconds: number;
}

/** The prompt cache's lifetime in the idle runs: Pi's default retention, and pi-fold's default for a model that declares none. */
const IDLE_CACHE_TTL_SECONDS = 300;

/** Real time plus the idle gaps a run skipped over. */
function simulatedClock() {
	let skipped = 0;
	return {
		now: () => Date.now() + skipped,
		skip: (ms: number) => {
			skipped += ms;
		},
	};
}

/** What one request was, for the report: a workload stage, Pi's summary, or the recall phase. */
export type RequestKind = "work" | "summary" | "recall";

export interface ArmRun {
	arm: ArmName;
	records: (RequestRecord & { kind: RequestKind })[];
	/** requests the harness captured (must equal records.length) */
	captured: number;
	/** the Pi settings this arm ran with */
	settings: Record<string, unknown>;
	/** requests whose prompt exceeded the model's context window (a real provider refuses them) */
	overWindow: number;
	/** whether the workload ran to its final answer (every stage, then "Done") */
	completed: boolean;
	/** requests stopped before they were sent (an aborted answer, as pi-fold's fence leaves one) */
	stopped: number;
	/** requests the provider refused as too long (the managed arms' provider refuses past the window) */
	refused: number;
	wallMs: number;
	values: ValueReport[];
	/** pi_fold_context calls the recall agent made (searches, peeks) and the tokens their answers added */
	recallCalls: ReturnType<RecallAgent["calls"]>;
	/** how each stage that refers back got its value (with referBack) */
	referBacks?: ReferOutcome[];
	/** compaction entries Pi wrote on the branch */
	compactions: number;
	/** With long tool runs: how many ran past the cache's lifetime, and how many of their turns ended with a commit. */
	longRuns?: { runs: number; used: number };
	/** cross-checks from the session itself: its assistant messages' usage, in order, and the usage Pi put on its compaction entries */
	sessionUsage: { answers: RequestRecord[]; compactions: RequestRecord[] };
	fold?: {
		budget: number | null;
		commits: number;
		rewrites: { attributed: number; unattributed: number; requests: number; pureAppends: number };
		handlerMs: number[];
		thresholdCancelled: number;
		/** Commits the cost model made on a cold prompt cache (after an idle gap past its lifetime). */
		coldCommits: number;
		/** Pi's idle cache refreshes pi-fold stopped, and those it let go on although a commit was due. */
		warming: { stopped: number; kept: number };
		problems: string[];
		/** How much of what the window folds its briefs name, when the recall question is asked. */
		index?: IndexCoverage;
		/** Which of the workload's stages that window still names. */
		stages?: StagesNamed;
	};
	extensionErrors: string[];
}

/** Where a comparison is, as each request goes out: which run of which arm, and which stage of it. */
export interface CompareProgress {
	/** The run: an arm's name, "pi-fold without search", or a warm-up's "warm-up <arm>". */
	run: string;
	/** 1-based position of the run, of `runs` in all. */
	index: number;
	runs: number;
	/** "work": a workload stage (`count` of `stages`); "summary": Pi's compaction; "recall": the recall questions. */
	kind: RequestKind;
	count: number;
	stages: number;
}

/** `cfg` telling `onProgress` (when given) where run `at` is. */
export function trackRun(
	cfg: ArmConfig,
	at: Pick<CompareProgress, "run" | "index" | "runs">,
	onProgress?: (p: CompareProgress) => void,
): ArmConfig {
	if (!onProgress) return cfg;
	return { ...cfg, onRequest: (kind, count) => onProgress({ ...at, kind, count, stages: cfg.stages }) };
}

/** Wrap the faux provider's stream functions so each request's final usage is recorded in order. */
function meterProvider(
	h: TestSession,
	into: ArmRun["records"],
	kindOf: (c: TranscriptContext) => RequestKind,
	onRequest?: ArmConfig["onRequest"],
) {
	const provider = h.faux.provider as unknown as Record<"stream" | "streamSimple", (...a: unknown[]) => unknown>;
	const sent: Record<RequestKind, number> = { work: 0, summary: 0, recall: 0 };
	for (const name of ["stream", "streamSimple"] as const) {
		const original = provider[name];
		provider[name] = (model: unknown, context: unknown, options: unknown) => {
			const kind = kindOf(context as TranscriptContext);
			onRequest?.(kind, ++sent[kind]);
			const s = original(model, context, options) as { result(): Promise<AssistantMessage> };
			// Pushed when the response completes; requests are sequential, so the order is the request order.
			void s.result().then((m) => into.push({ ...usageFromProvider(m.usage), kind }));
			return s;
		};
	}
}

/** The arm's Pi settings: the shared ones, with compaction switched off for arm "none". */
function armSettings(arm: ArmName, shared: Record<string, unknown> = {}): Record<string, unknown> {
	if (arm !== "none") return shared;
	const compaction = (shared.compaction ?? {}) as Record<string, unknown>;
	return { ...shared, compaction: { ...compaction, enabled: false } };
}

/** Copy a session file, and its fold store when it has one, so `pi-fold view`/`replay` open the copy whole. */
function keepSession(file: string, sessionId: string, as: string): void {
	copyFileSync(file, as);
	const store = join(dirname(file), STORE_DIR_NAME, sessionId);
	if (existsSync(store)) cpSync(store, join(dirname(as), STORE_DIR_NAME, sessionId), { recursive: true });
}

/** The arm's extensions: pi-fold in its arm (on the simulated clock where time is skipped), and the long tool runs in every arm. */
function armExtensions(arm: ArmName, cfg: ArmConfig, clock: ReturnType<typeof simulatedClock>) {
	const ref: { fold?: PiFold } = {};
	const simulated = cfg.idle !== undefined || cfg.longRuns !== undefined;
	const options = { ...cfg.piFoldOptions, ...(simulated ? { clock: clock.now } : {}) };
	const commits = () => ref.fold?.runtime.get()?.status().commits.length ?? 0;
	const long = cfg.longRuns
		? longToolRuns(new Set(cfg.longRuns.batches), cfg.longRuns.seconds, clock.skip, commits)
		: undefined;
	const extensions: ExtensionFactory[] = [
		...(arm === "pi-fold"
			? [
					(pi: Parameters<ExtensionFactory>[0]) => {
						ref.fold = registerPiFold(pi, options);
					},
				]
			: []),
		...(long ? [long.extension] : []),
	];
	return { ref, long, extensions };
}

export async function runArm(arm: ArmName, cfg: ArmConfig): Promise<ArmRun> {
	const clock = simulatedClock();
	const { ref, long, extensions } = armExtensions(arm, cfg, clock);
	const root = cfg.root ?? WORKLOAD_ROOT;
	const settings = armSettings(arm, cfg.settings);
	const h = await makeSession({
		cwd: root,
		persist: true,
		contextWindow: cfg.contextWindow,
		maxTokens: cfg.maxTokens,
		...(cfg.cost ? { cost: cfg.cost } : {}),
		...(cfg.longRuns ? { promptCache: { short: cfg.longRuns.ttlSeconds } } : {}),
		settings,
		extensions,
	});
	try {
		const records: ArmRun["records"] = [];
		let phase: "work" | "recall" = "work";
		meterProvider(h, records, (c) => (isSummaryRequest(c) ? "summary" : phase), cfg.onRequest);
		const referBacks = cfg.referBack ? new ReferBacks(referBacksOf(cfg.values, cfg.stages)) : undefined;
		if (cfg.idle) expireCache(h, IDLE_CACHE_TTL_SECONDS, clock.now);
		if (cfg.longRuns) expireCache(h, cfg.longRuns.ttlSeconds, clock.now);
		const work = workloadSteps(cfg.stages, workloadOf(arm, cfg, root, referBacks));
		h.script(work);
		const t0 = performance.now();
		const gap = () => clock.skip((cfg.idle?.gapSeconds ?? 0) * 1000);
		const prompts = cfg.idle ? Math.ceil(cfg.stages / cfg.idle.every) : 1;
		for (let i = 0; i < prompts; i++) {
			if (i > 0) gap();
			await h.session.prompt(i === 0 ? WORKLOAD_PROMPT : CONTINUE_PROMPT);
		}
		gap();
		const outcome = workOutcome(h.session.sessionManager.getBranch());
		const open = ref.fold?.runtime.get()?.view;
		const index = open ? indexCoverage(open.lattice, open.context.sources) : undefined;
		const stages = open ? stagesNamed(open.lattice, open.context.sources, cfg.stages) : undefined;
		// Summary requests in the recall phase get the workload's own answer (its step answers them first).
		const agent = recallAgent({
			values: cfg.values,
			foldTool: arm === "pi-fold",
			search: cfg.recallSearch !== false,
			summary: work[0],
		});
		phase = "recall";
		h.script(agent.steps(64));
		await h.session.prompt(recallQuestion(cfg.values));
		const wallMs = performance.now() - t0;
		await settled(records, h.captured.length);

		const sessionFile = h.session.sessionManager.getSessionFile();
		if (cfg.keepSessionAs && sessionFile)
			keepSession(sessionFile, h.session.sessionManager.getSessionId(), cfg.keepSessionAs);
		const branch = h.session.sessionManager.getBranch();
		const rt = ref.fold?.runtime.get();
		if (arm === "pi-fold" && !rt) throw new Error(`pi-fold arm: no runtime (${ref.fold?.runtime.reason()})`);
		const status = rt?.status();
		return {
			arm,
			records,
			captured: h.captured.length,
			settings,
			overWindow: records.filter((r) => r.promptTokens > cfg.contextWindow).length,
			...outcome,
			wallMs,
			values: agent.report(),
			...(referBacks ? { referBacks: referBacks.log } : {}),
			recallCalls: agent.calls(),
			compactions: branch.filter((e) => e.type === "compaction").length,
			...(long ? { longRuns: { runs: long.runs.length, used: long.used() } } : {}),
			sessionUsage: sessionUsageOf(branch),
			fold: status && foldFigures(status, index, stages),
			extensionErrors: h.extensionErrors.map((e) => `${e.event}: ${e.error}`),
		};
	} finally {
		h.dispose();
	}
}

type Answer = { stopReason?: string; errorMessage?: string; content?: unknown };

/** The arm's scripted workload. */
function workloadOf(arm: ArmName, cfg: ArmConfig, root: string, referBacks: ReferBacks | undefined): WorkloadOptions {
	return {
		seed: cfg.seed,
		plant: plantOption(cfg.values),
		summaryChars: cfg.summaryChars,
		readLines: cfg.readLines,
		root,
		...(cfg.outputScale ? { outputScale: cfg.outputScale } : {}),
		// The managed arms' provider refuses a request past the window, as a real one does; "none"
		// shows what no management would send, so its provider takes anything.
		...(arm === "none" ? {} : { windowLimit: cfg.contextWindow }),
		...(cfg.idle ? { pauseEvery: cfg.idle.every } : {}),
		...(referBacks ? { referBacks } : {}),
	};
}

/** How the work phase went, from its branch: the final answer reached, requests stopped or refused as too long. */
function workOutcome(branch: readonly SessionEntry[]): Pick<ArmRun, "completed" | "stopped" | "refused"> {
	const answers = branch.flatMap((e) =>
		e.type === "message" && e.message.role === "assistant" ? [e.message as Answer] : [],
	);
	const text = (m: Answer) =>
		Array.isArray(m.content) ? m.content.map((b: { text?: string }) => b.text ?? "").join("") : "";
	return {
		completed: answers.some((m) => m.stopReason === "stop" && text(m).startsWith(WORKLOAD_DONE)),
		stopped: answers.filter((m) => m.stopReason === "aborted").length,
		refused: answers.filter((m) => m.stopReason === "error" && /prompt is too long/.test(m.errorMessage ?? "")).length,
	};
}

/** The usage Pi stored: each answer's, and each compaction's summary's. */
function sessionUsageOf(branch: readonly SessionEntry[]): ArmRun["sessionUsage"] {
	return {
		answers: branch.flatMap((e) =>
			e.type === "message" && e.message.role === "assistant" ? [usageFromProvider(e.message.usage)] : [],
		),
		compactions: branch.flatMap((e) => (e.type === "compaction" && e.usage ? [usageFromProvider(e.usage)] : [])),
	};
}

/** What the pi-fold arm's runtime reports of its run. */
function foldFigures(
	status: RuntimeStatus,
	index: IndexCoverage | undefined,
	stages: StagesNamed | undefined,
): NonNullable<ArmRun["fold"]> {
	const a = status.rewrites.attributed;
	return {
		budget: status.budget?.ok ? status.budget.tokens : null,
		commits: status.commits.length,
		rewrites: {
			attributed: a ? Object.values(a).reduce((n, k) => n + k, 0) : 0,
			unattributed: status.rewrites.unattributed,
			requests: status.rewrites.requests,
			pureAppends: status.rewrites.pureAppends,
		},
		handlerMs: status.timing.handlerMs,
		thresholdCancelled: status.compaction.thresholdCancelled,
		coldCommits: status.policy.coldCommits,
		warming: { stopped: status.policy.warmingStopped, kept: status.policy.warmingKept },
		problems: status.problems,
		...(index ? { index } : {}),
		...(stages ? { stages } : {}),
	};
}

/** The last response's usage is recorded on a promise callback: let it land before reading the records. */
async function settled(records: readonly unknown[], expected: number): Promise<void> {
	for (let i = 0; i < 50 && records.length < expected; i++) await new Promise((r) => setTimeout(r, 0));
}
