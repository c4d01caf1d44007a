// npm run bench:tui — the session a new user would try first on a small local model: Pi's
// interactive TUI under a pty (harness/pty.ts), a 20,000-token window with a 2,000-token answer
// limit, the scripted 64-stage workload with ordinary reads, and a provider that refuses a request
// past the window (harness/tui-bench-ext.ts). Once with pi-fold (its defaults), once with Pi's own compaction.
// Reported per arm, from the session file and the screen: whether the run reached its final
// answer, requests stopped before sending and refused as too long, commits (or compactions) per 100
// requests, the "Auto-compaction cancelled" lines Pi printed, and the cost at the model's own prices.
// Flags: --window N --stages N --out-dir DIR. Writes bench/results/tui.json.
import { existsSync, mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { childEnv, PI_CLI } from "../harness/pi-cli.ts";
import { piEnv, removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { startPty } from "../harness/pty.ts";
import { TUI_BENCH_MODEL, TUI_BENCH_PROVIDER } from "../harness/tui-bench-ext.ts";
import { WORKLOAD_DONE, WORKLOAD_PROMPT, WORKLOAD_ROOT } from "../harness/workload.ts";
import { writeFileAtomic } from "../src/replay/output.ts";
import { type RequestRecord, summarizeArm, usageFromProvider } from "../src/report/arm-report.ts";
import { cardOfModel } from "../src/report/price-card.ts";
import { RECORD_TYPE } from "../src/vocabulary.ts";
import { machineNotes } from "./lib/harness.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const EXTENSION = join(ROOT, "harness/tui-bench-ext.ts");
const COST = { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 0 };
const ARMS = ["pi-fold", "native"] as const;
type Arm = (typeof ARMS)[number];

interface ArmResult {
	arm: Arm;
	completed: boolean;
	requests: number;
	stopped: number;
	refused: number;
	commits: number;
	compactions: number;
	eventsPer100Requests: number;
	cancelledLines: number;
	stoppedLines: number;
	cost: number;
	peak: number;
	wallMs: number;
}

/** The one session file Pi wrote under `dir`. */
function sessionFile(dir: string): string {
	const walk = (d: string): string[] =>
		readdirSync(d, { withFileTypes: true }).flatMap((e) =>
			e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith(".jsonl") ? [join(d, e.name)] : [],
		);
	const files = walk(dir);
	if (files.length !== 1) throw new Error(`expected one session file under ${dir}, found ${files.length}`);
	return files[0];
}

type Line = {
	type: string;
	customType?: string;
	data?: { op?: string };
	message?: Record<string, unknown>;
	usage?: unknown;
};

/** What the session file says of the run. */
function fromSession(file: string): Omit<ArmResult, "arm" | "cancelledLines" | "stoppedLines" | "wallMs"> {
	const lines = readFileSync(file, "utf8")
		.trim()
		.split("\n")
		.map((l) => JSON.parse(l) as Line);
	const answers = lines.flatMap((l) => (l.type === "message" && l.message?.role === "assistant" ? [l.message] : []));
	const text = (m: Record<string, unknown>) =>
		Array.isArray(m.content) ? m.content.map((b: { text?: string }) => b.text ?? "").join("") : "";
	const records: RequestRecord[] = [
		...answers.map((m) => usageFromProvider(m.usage as Parameters<typeof usageFromProvider>[0], "work")),
		...lines.flatMap((l) =>
			l.type === "compaction" && l.usage
				? [usageFromProvider(l.usage as Parameters<typeof usageFromProvider>[0], "summary")]
				: [],
		),
	];
	const card = cardOfModel({ provider: TUI_BENCH_PROVIDER, id: TUI_BENCH_MODEL, cost: COST });
	const report = summarizeArm("arm", records, card);
	const commits = lines.filter(
		(l) => l.type === "custom" && l.customType === RECORD_TYPE && l.data?.op === "commit",
	).length;
	const compactions = lines.filter((l) => l.type === "compaction").length;
	const requests = report.billedCalls;
	return {
		completed: answers.some((m) => m.stopReason === "stop" && text(m).startsWith(WORKLOAD_DONE)),
		requests,
		stopped: answers.filter((m) => m.stopReason === "aborted").length,
		refused: answers.filter((m) => m.stopReason === "error" && /too long/.test(String(m.errorMessage))).length,
		commits,
		compactions,
		eventsPer100Requests: Math.round((1000 * (commits + compactions)) / Math.max(1, requests)) / 10,
		cost: report.cost,
		peak: report.peakPromptTokens,
	};
}

async function runArm(arm: Arm, window: number, stages: number): Promise<ArmResult> {
	const sessions = tempDir("tui-bench-sessions");
	const done = join(tempDir("tui-bench"), "settled");
	const env = {
		...childEnv(piEnv()),
		PI_FOLD_TUI_ARM: arm,
		PI_FOLD_TUI_WINDOW: String(window),
		PI_FOLD_TUI_STAGES: String(stages),
		PI_FOLD_TUI_DONE: done,
	};
	const args = [
		process.execPath,
		PI_CLI,
		"-e",
		EXTENSION,
		"--provider",
		TUI_BENCH_PROVIDER,
		"--model",
		TUI_BENCH_MODEL,
	];
	args.push("--tools", "read,bash,ls", "--session-dir", sessions, WORKLOAD_PROMPT);
	const t0 = performance.now();
	const pty = startPty(args, { cwd: WORKLOAD_ROOT, env, cols: 120, rows: 40 });
	try {
		// The run is over when it settles (Pi says so to the extension): however long that takes here.
		await pty.waitFor(() => existsSync(done), `the ${arm} run to settle`, 600_000);
		const wallMs = performance.now() - t0;
		const drawn = pty.drawn();
		const count = (s: string) => drawn.split(s).length - 1;
		return {
			arm,
			...fromSession(sessionFile(sessions)),
			cancelledLines: count("Auto-compaction cancelled"),
			stoppedLines: count("pi-fold stopped a request"),
			wallMs,
		};
	} finally {
		await pty.close();
	}
}

async function main(): Promise<void> {
	const { values } = parseArgs({
		args: process.argv.slice(2),
		options: { window: { type: "string" }, stages: { type: "string" }, "out-dir": { type: "string" } },
	});
	const window = Number(values.window ?? 20_000);
	const stages = Number(values.stages ?? 64);
	if (!Number.isSafeInteger(window) || window < 4_000 || !Number.isSafeInteger(stages) || stages < 1) {
		throw new Error(`bench:tui: --window must be >= 4000 and --stages >= 1, got ${values.window} / ${values.stages}`);
	}
	const results: ArmResult[] = [];
	for (const arm of ARMS) results.push(await runArm(arm, window, stages));
	const [fold, native] = results;
	const usd = (x: number) => `$${x.toFixed(4)}`;
	console.log(`# pi-fold in Pi's TUI under a pty: ${window}-token window, 2,000-token answers, ${stages} stages`);
	console.log(
		"| | completed | requests | stopped | refused as too long | commits or compactions per 100 requests | 'Auto-compaction cancelled' lines | peak | cost |",
	);
	console.log("|---|---|---:|---:|---:|---:|---:|---:|---:|");
	for (const r of results) {
		console.log(
			`| ${r.arm} | ${r.completed ? "yes" : "NO"} | ${r.requests} | ${r.stopped} | ${r.refused} | ${r.eventsPer100Requests} | ${r.cancelledLines} | ${r.peak} | ${usd(r.cost)} |`,
		);
	}
	const unfinished = results.filter((r) => !r.completed).map((r) => r.arm);
	console.log(
		unfinished.length === 0
			? `\ncost, pi-fold / native: ${(fold.cost / native.cost).toFixed(3)}`
			: `\nnot finished: ${unfinished.join(", ")} (its cost covers only the requests it made: no cost ratio)`,
	);
	const out = values["out-dir"] ?? join(ROOT, "bench/results");
	mkdirSync(out, { recursive: true });
	const file = join(out, "tui.json");
	const command = `node bench/tui.bench.ts ${process.argv.slice(2).join(" ")}`.trim();
	writeFileAtomic(
		file,
		`${JSON.stringify({ machine: machineNotes(), command, window, stages, results, costRatio: unfinished.length === 0 ? fold.cost / native.cost : null }, null, 2)}\n`,
	);
	console.log(`wrote ${file}`);
}

try {
	await main();
} finally {
	removeTempDirs();
}
