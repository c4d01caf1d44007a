// npm run bench:runtime — what pi-fold adds to each request of a real Pi AgentSession, in three sections:
//
// Every section's model declares a price card with cache prices ($5 in, $0.50 cache read, $30 out per
// M, the session benchmark's), so pi-fold's cost model decides, weighing the pending marks each turn.
//
// budget: the scripted workload (harness/workload.ts, real read/bash/ls over Pi's own dist/) with
//   a budget small enough that several commits happen, and the same run without pi-fold for the wall
//   clock. The per-request figure is the runtime's own measurement (host/hooks.ts times every handler
//   and attributes it to the next request); each commit is the turn_end handler that made it, whole.
// sweep: the same workload at 64, 128, 256 and 512 stages, a 200k window, pi-fold at Pi's defaults,
//   timed from the outside: wall time between the first and the last extension handler of each event,
//   and between two turns (bench/lib/handler-probe.ts), so Pi's own work counts; per request median and
//   p95, commits, memory after GC and the session's shape; each length also without pi-fold.
// long: a synthetic session of 10k folds and about 50 MB (bench/lib/long-session.ts) opened in Pi,
//   then more stages run on it, timed the same way.
//
// Flags: --only=budget,sweep,long  --stages=64,128  --long-folds=10000. Prints Markdown and writes
// bench/results/runtime.json (the sections not run keep their previous results).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { ExtensionFactory } from "@earendil-works/pi-coding-agent";
import { nodeCore } from "../bindings/node.ts";
import { makeSession, removeTempDirs } from "../harness/pi-harness.ts";
import { isSummaryRequest, WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "../harness/workload.ts";
import { type PiFold, registerPiFold } from "../src/index.ts";
import { FoldLattice } from "../src/lattice/index.ts";
import { Meter } from "../src/meter/meter.ts";
import { RewriteRecorder } from "../src/meter/recorder.ts";
import { CommitTiming } from "../src/runtime/commit-timing.ts";
import type { FoldRuntime } from "../src/runtime/runtime.ts";
import { machineNotes } from "./lib/harness.ts";
import {
	type LongSection,
	longSection,
	printLengths,
	type SweepSection,
	sweepSection,
} from "./lib/runtime-sections.ts";
import type { SweepCommit, SweepRun } from "./lib/runtime-sweep.ts";
import { EQUAL_COST } from "./lib/session-scenarios.ts";
import { round, spread } from "./lib/stats.ts";

const STAGES = 64;
const WARMUP_STAGES = 16;
const SEED = 7;
/** Each stage adds about 1-5k tokens: the window refills to maxTarget every few stages. */
const BUDGET = 48_000;
/** Large enough that Pi's own compaction never comes into play in either run. */
const CONTEXT_WINDOW = 1_000_000;
/** A priced model, as a catalog's: the cost model decides and weighs the marks on every turn. */
const BUDGET_SESSION = { cwd: WORKLOAD_ROOT, persist: true, contextWindow: CONTEXT_WINDOW, cost: EQUAL_COST };
const TARGET_MEDIAN_MS = 1;
const TARGET_COMMIT_MS = 50;

const billed = (m: AssistantMessage | undefined) => (m ? m.usage.input + m.usage.cacheRead + m.usage.cacheWrite : 0);

/**
 * Time calls of one method of an object, in place (instance property over the prototype's, or the
 * prototype's own when given a prototype). Returns the restore: a prototype outlives the run.
 */
function timeMethod<T extends object>(
	target: T,
	name: keyof T & string,
	into: Map<string, number[]>,
	label: string = name,
): () => void {
	const had = Object.hasOwn(target, name);
	const original = target[name] as unknown as (...args: unknown[]) => unknown;
	const samples: number[] = [];
	into.set(label, samples);
	(target as Record<string, unknown>)[name] = function (this: unknown, ...args: unknown[]) {
		const t0 = performance.now();
		try {
			return original.apply(this, args);
		} finally {
			samples.push(performance.now() - t0);
		}
	};
	return () => {
		if (had) (target as Record<string, unknown>)[name] = original;
		else delete (target as Record<string, unknown>)[name];
	};
}

interface CommitSample extends SweepCommit {
	before: number;
	after: number;
	budget: number;
	billedBefore: number;
	billedAfter: number;
}

/** One timed run: the sweep's figures and health, with each commit's sizes and the time per phase. */
interface RunResult extends Pick<SweepRun, "wallMs" | "requests" | "health"> {
	handlerMs: number[];
	commits: CommitSample[];
	phases: Map<string, number[]>;
}

async function runWorkload(stages: number, withFold: boolean): Promise<RunResult> {
	let fold: PiFold | undefined;
	const extensions: ExtensionFactory[] = withFold
		? [
				(pi) => {
					fold = registerPiFold(pi, { providerInputBudget: BUDGET });
				},
			]
		: [];
	const h = await makeSession({ ...BUDGET_SESSION, extensions });
	const restore: (() => void)[] = [];
	try {
		const phases = new Map<string, number[]>();
		const rt: FoldRuntime | undefined = fold?.runtime.get();
		if (withFold && !rt) throw new Error(`no runtime: ${fold?.runtime.reason()}`);
		const commitTurns: { turn: number; ms: number }[] = [];
		if (rt) {
			// Where the time goes, per call (diagnostic; the reported figures are the runtime's own).
			restore.push(timeMethod(RewriteRecorder.prototype, "record", phases, "recorder.record"));
			timeMethod(rt, "recordRequest", phases, "context (record + align)");
			restore.push(timeMethod(Meter.prototype, "observeRequest", phases, "context_with_system (estimate)"));
			timeMethod(rt, "sync", phases, "turn_end: sync");
			restore.push(timeMethod(Meter.prototype, "occupancy", phases, "turn_end: occupancy"));
			// The lattice's own work in turn_end (every lattice object; commits' calls included).
			restore.push(timeMethod(FoldLattice.prototype, "extend", phases, "lattice.extend (sync)"));
			restore.push(timeMethod(FoldLattice.prototype, "markMany", phases, "lattice.markMany (frontier)"));
			// The cost model's weighing of the pending marks: at each boundary, and at each quiet turn's look ahead.
			restore.push(timeMethod(CommitTiming.prototype, "decide", phases, "cost model: decide (boundary)"));
			restore.push(timeMethod(CommitTiming.prototype, "prospect", phases, "cost model: prospect (look ahead)"));
			const turnEnd = rt.turnEnd;
			// Async: a commit's store writes are awaited (Pi awaits the handler), so time until it settles.
			rt.turnEnd = async (e, ctx) => {
				const before = rt.commits.length;
				const t0 = performance.now();
				try {
					return await turnEnd.call(rt, e, ctx);
				} finally {
					const ms = performance.now() - t0;
					if (rt.commits.length > before) commitTurns.push({ turn: e.turnIndex, ms });
					else
						(
							phases.get("turn_end (no commit)") ??
							phases.set("turn_end (no commit)", []).get("turn_end (no commit)") ??
							[]
						).push(ms);
				}
			};
		}
		h.script(workloadSteps(stages, { seed: SEED }));
		const t0 = performance.now();
		await h.session.prompt(WORKLOAD_PROMPT);
		const wallMs = performance.now() - t0;
		const work = h.captured.filter((c) => !isSummaryRequest(c.context));
		if (work.length !== stages + 1) throw new Error(`expected ${stages + 1} requests, the provider saw ${work.length}`);
		const answers = h.session.sessionManager
			.getBranch()
			.flatMap((e) => (e.type === "message" && e.message.role === "assistant" ? [e.message] : []));
		const status = rt?.status();
		const commits = (status?.commits ?? []).map((c, i): CommitSample => {
			const timed = commitTurns[i];
			if (timed?.turn !== c.turn) throw new Error(`commit ${i} at turn ${c.turn} was not timed`);
			return {
				turn: c.turn,
				ms: timed.ms,
				committed: c.committed.length,
				consolidated: c.consolidated.length,
				edits: c.edits,
				before: c.before,
				after: c.after,
				budget: c.budget,
				billedBefore: billed(answers[c.turn]),
				billedAfter: billed(answers[c.turn + 1]),
			};
		});
		return {
			wallMs,
			requests: work.length,
			handlerMs: status?.timing.handlerMs ?? [],
			commits,
			phases,
			health: {
				problems: status?.problems ?? [],
				extensionErrors: h.extensionErrors.length,
				unattributed: status?.rewrites.unattributed ?? 0,
			},
		};
	} finally {
		for (const r of restore) r();
		h.dispose();
	}
}

/** The budget section: the 64-stage workload at a 48k serving budget (the runtime's own timings). */
async function budgetSection() {
	console.log(
		`\n# budget: ${STAGES} stages (seed ${SEED}), serving budget ${BUDGET} tokens; warm-up run of ${WARMUP_STAGES}`,
	);
	// Warm-up (not reported): module loading, the core's first instantiation, V8's baseline tiers.
	await runWorkload(WARMUP_STAGES, true);
	await runWorkload(WARMUP_STAGES, false);
	const baseline = await runWorkload(STAGES, false);
	const folded = await runWorkload(STAGES, true);

	const ms = folded.handlerMs;
	const perRequest = {
		samples: ms.length,
		...spread(ms),
		totalMs: round(ms.reduce((a, b) => a + b, 0)),
	};
	const commitMs = folded.commits.map((c) => c.ms);
	const targets = [
		{ what: "median added time per request (ms)", measured: perRequest.medianMs, target: `< ${TARGET_MEDIAN_MS}` },
		{
			what: "slowest commit (ms)",
			measured: round(commitMs.length ? Math.max(...commitMs) : Number.NaN),
			target: `< ${TARGET_COMMIT_MS}`,
		},
	].map((t, i) => ({ ...t, met: t.measured < (i === 0 ? TARGET_MEDIAN_MS : TARGET_COMMIT_MS) }));

	console.log("\n## Per request (handlers' own time, as the runtime measures it)");
	console.log("| requests | median ms | p95 ms | max ms | total ms |");
	console.log("|---:|---:|---:|---:|---:|");
	console.log(
		`| ${perRequest.samples} | ${perRequest.medianMs.toFixed(3)} | ${perRequest.p95Ms.toFixed(3)} | ${perRequest.maxMs.toFixed(3)} | ${perRequest.totalMs.toFixed(1)} |`,
	);

	console.log(`\n## Commits (${folded.commits.length})`);
	console.log("| turn | ms | marks | consolidated | edits | est. before → after (share) | billed before → after |");
	console.log("|---:|---:|---:|---:|---:|---|---|");
	for (const c of folded.commits) {
		const share = (t: number) => `${t} (${(t / c.budget).toFixed(2)})`;
		console.log(
			`| ${c.turn} | ${c.ms.toFixed(2)} | ${c.committed} | ${c.consolidated} | ${c.edits} | ${share(c.before)} → ${share(c.after)} | ${c.billedBefore} → ${c.billedAfter} |`,
		);
	}

	console.log("\n## Where the time goes (per call, diagnostic)");
	console.log("| phase | calls | median ms | p95 ms | max ms |");
	console.log("|---|---:|---:|---:|---:|");
	const phases = [...folded.phases].map(([phase, xs]) => ({
		phase,
		calls: xs.length,
		...spread(xs),
	}));
	for (const p of phases) {
		console.log(
			`| ${p.phase} | ${p.calls} | ${p.medianMs.toFixed(3)} | ${p.p95Ms.toFixed(3)} | ${p.maxMs.toFixed(3)} |`,
		);
	}

	console.log("\n## Wall clock of the whole run");
	console.log("| run | requests | wall ms |");
	console.log("|---|---:|---:|");
	console.log(`| without pi-fold | ${baseline.requests} | ${baseline.wallMs.toFixed(0)} |`);
	console.log(`| with pi-fold | ${folded.requests} | ${folded.wallMs.toFixed(0)} |`);

	console.log("\n## Targets");
	console.log("| target | measured | needed | |");
	console.log("|---|---:|---:|---|");
	for (const t of targets) console.log(`| ${t.what} | ${t.measured} | ${t.target} | ${t.met ? "met" : "MISSED"} |`);
	const health = folded.health;
	if (health.problems.length || health.extensionErrors || health.unattributed) {
		console.log(`\nWARNING: the run was not clean: ${JSON.stringify(health)}`);
	}
	return {
		workload: {
			stages: STAGES,
			seed: SEED,
			budget: BUDGET,
			contextWindow: CONTEXT_WINDOW,
			warmupStages: WARMUP_STAGES,
		},
		perRequest: { ...perRequest, handlerMs: ms.map((x) => round(x)) },
		commits: folded.commits.map((c) => ({ ...c, ms: round(c.ms) })),
		phases,
		wallClock: { withoutPiFoldMs: round(baseline.wallMs, 1), withPiFoldMs: round(folded.wallMs, 1) },
		health,
		targets,
	};
}

/** The flat-cost targets, from the sweep and the long session (whichever ran). */
function flatCostTargets(sweep: SweepSection | undefined, long: LongSection | undefined) {
	const out: { what: string; measured: number | null; target: string; met: boolean }[] = [];
	const add = (what: string, measured: number | null | undefined, target: string, ok: (x: number) => boolean) =>
		out.push({ what, measured: measured ?? null, target, met: measured != null && ok(measured) });
	for (const l of sweep?.lengths ?? []) {
		add(`${l.stages} stages: median added per request (ms)`, l.added.medianMs, "<= 1", (x) => x <= 1);
		add(`${l.stages} stages: p95 added per request (ms)`, l.added.p95Ms, "<= 5", (x) => x <= 5);
	}
	const first = sweep?.lengths.find((l) => l.stages === 64);
	const last = sweep?.lengths.find((l) => l.stages === 512);
	if (first && last) {
		add(
			"512-stage median / 64-stage median",
			round(last.added.medianMs / first.added.medianMs),
			"<= 1.3",
			(x) => x <= 1.3,
		);
	}
	if (last) {
		add("512 stages: slowest commit (ms)", last.piFold.slowestCommitMs, "<= 50", (x) => x <= 50);
		add("512 stages: context_edit entries per message", last.piFold.shape.editsPerMessage, "<= 2", (x) => x <= 2);
		add("512 stages: fold tree levels", last.piFold.shape.maxDepth + 1, "<= 6", (x) => x <= 6);
	}
	if (long) {
		add("long session: median added per request (ms)", long.added.medianMs, "<= 1", (x) => x <= 1);
		add("long session: p95 added per request (ms)", long.added.p95Ms, "<= 5", (x) => x <= 5);
		add("long session: slowest commit (ms)", long.piFold.slowestCommitMs, "<= 50", (x) => x <= 50);
	}
	return out;
}

const { values: flags } = parseArgs({
	options: {
		only: { type: "string", default: "budget,sweep,long" },
		stages: { type: "string", default: "64,128,256,512" },
		"long-folds": { type: "string", default: "10000" },
	},
});
const only = new Set(String(flags.only).split(","));
const machine = machineNotes();
console.log(`# pi-fold runtime benchmark (${machine.date})`);
console.log(`${machine.cpu}, ${machine.cores} cores, Node ${machine.node}`);

const file = new URL("./results/runtime.json", import.meta.url);
const previous = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>) : {};
try {
	const result: Record<string, unknown> = { ...previous, machine };
	if (only.has("budget")) Object.assign(result, await budgetSection());
	if (only.has("sweep")) {
		const lengths = String(flags.stages).split(",").map(Number);
		const sweep = await sweepSection({ lengths, seed: SEED, contextWindow: 200_000, warmupStages: WARMUP_STAGES });
		printLengths(
			"sweep: 200k window, pi-fold at Pi's defaults; wall time between the first and the last handler",
			sweep.lengths.flatMap((l) => [
				{ label: `${l.stages} stages, pi-fold`, s: l.piFold },
				{ label: `${l.stages} stages, Pi alone`, s: l.piAlone },
			]),
		);
		result.sweep = sweep;
	}
	if (only.has("long")) {
		const core = nodeCore();
		const long = await longSection(core, {
			folds: Number(flags["long-folds"]),
			stagesPerCommit: 32,
			resultChars: { min: 200, max: 850 },
			// Enough that one commit happens after the opening (over the last chunk's pending marks).
			stagesAfter: 96,
			contextWindow: 200_000,
			seed: SEED,
		});
		const g = long.generated;
		console.log(
			`\n# long session: ${g.folds} folds, ${g.messages} messages, ${(g.fileBytes / 1e6).toFixed(1)} MB, ${g.contextEdits} context_edit entries (${g.redundantEdits} redundant drafts left out), fold levels ${g.maxDepth + 1}; generated in ${(g.generateMs / 1000).toFixed(1)} s; pi-fold reopens it in ${long.reopenMs} ms`,
		);
		printLengths(`long session + ${long.config.stagesAfter} stages`, [
			{ label: "pi-fold", s: long.piFold },
			{ label: "Pi alone", s: long.piAlone },
		]);
		result.longSession = long;
	}
	const targets = flatCostTargets(
		result.sweep as SweepSection | undefined,
		result.longSession as LongSection | undefined,
	);
	result.flatCostTargets = targets;
	console.log("\n## Flat-cost targets");
	console.log("| target | measured | needed | |");
	console.log("|---|---:|---:|---|");
	for (const t of targets) console.log(`| ${t.what} | ${t.measured} | ${t.target} | ${t.met ? "met" : "MISSED"} |`);

	mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
	writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
	console.log(`\nwrote ${file.pathname}`);
} finally {
	removeTempDirs();
}
