// `pi-fold replay`: sessions recorded here by a real Pi AgentSession (faux provider, offline), one
// with pi-fold and one with Pi's native compaction, replayed and compared with what they really
// sent; the real Pi session fixture; bad files through the real CLI entry; the built bin.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { type PiFold, registerPiFold } from "../src/index.ts";
import { parseArgs } from "../src/replay/args.ts";
import { progressBar } from "../src/replay/progress.ts";
import { fitHiddenPrefix } from "../src/replay/provider-tokens.ts";
import { type PolicyResult, type ReplayResult, replayFile } from "../src/replay/replay.ts";
import { FIXTURE_MISSING, FIXTURE_SESSION, hasFixture } from "./helpers/fixture.ts";
import { childEnv, REPO_ROOT, type RunResult, run } from "./helpers/pi-cli.ts";
import { makeSession, piEnv, removeTempDirs, tempDir } from "./helpers/pi-harness.ts";
import { isSummaryRequest, WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "./helpers/workload.ts";

const core = nodeCore();
const CLI = fileURLToPath(new URL("../src/replay/cli.ts", import.meta.url));
const BUILT_CLI = join(REPO_ROOT, "dist/cli/src/replay/cli.js");
const STAGES = 16;
/**
 * The estimator's tolerance, relative to the size (as in runtime.test.ts): a replayed request that
 * is not the recorded one counts the provider's tokens for every message the recording sent and an
 * estimate for the rest (a brief naming another fold id, a receipt with other numbers).
 */
const TOLERANCE = 0.1;

/** pi-fold recording: as in runtime.test.ts, a budget small enough for several commits in 16 stages. */
const FOLD_BUDGET = 14_000;
const FOLD_RESERVE = 16_384;
const FOLD_WINDOW = FOLD_RESERVE + 6_000;

/** Native recording: Pi compacts above 16000 - 4000 tokens and keeps 3000 (REPORT.md §4's setting). */
const NATIVE_WINDOW = 16_000;
const NATIVE_RESERVE = 4_000;
const NATIVE_KEEP = 3_000;

const promptOf = (m: AssistantMessage) => m.usage.input + m.usage.cacheRead + m.usage.cacheWrite;

interface Recording {
	file: string;
	/** Prompt tokens the provider billed for each work request, in order. */
	billed: number[];
	/** Messages of each work request as the provider received them. */
	work: unknown[][];
	/** Work requests that first carried a rewrite (a pi-fold commit, or a native compaction's summary). */
	rewritten: number[];
	commits?: number;
}

function assistantsOf(h: Awaited<ReturnType<typeof makeSession>>): AssistantMessage[] {
	return h.session.sessionManager
		.getBranch()
		.flatMap((e) => (e.type === "message" && e.message.role === "assistant" ? [e.message as AssistantMessage] : []));
}

/** One pi-fold recording for every test that needs one (made on first use). */
let foldRecording: Promise<Recording> | undefined;
const recordedFold = () => {
	foldRecording ??= recordFold();
	return foldRecording;
};

async function recordFold(): Promise<Recording> {
	let fold: PiFold | undefined;
	const h = await makeSession({
		cwd: WORKLOAD_ROOT,
		persist: true,
		contextWindow: FOLD_WINDOW,
		settings: { compaction: { enabled: true, reserveTokens: FOLD_RESERVE, keepRecentTokens: 2000 } },
		extensions: [
			(pi) => {
				fold = registerPiFold(pi, { providerInputBudget: FOLD_BUDGET });
			},
		],
	});
	try {
		h.script(workloadSteps(STAGES, { seed: 11 }));
		await h.session.prompt(WORKLOAD_PROMPT);
		const rt = fold?.runtime.get();
		const file = h.session.sessionManager.getSessionFile();
		if (!rt || !file) throw new Error("no runtime or no session file");
		expect(rt.status().problems).toEqual([]);
		return {
			file,
			billed: assistantsOf(h).map(promptOf),
			work: h.captured.filter((c) => !isSummaryRequest(c.context)).map((c) => c.context.messages),
			// A commit at turn k (the workload is one prompt run: turn k answers request k) shows from request k + 1.
			rewritten: rt.commits.map((c) => c.turn + 1),
			commits: rt.commits.length,
		};
	} finally {
		h.dispose();
	}
}

async function recordNative(): Promise<Recording> {
	const h = await makeSession({
		cwd: WORKLOAD_ROOT,
		persist: true,
		contextWindow: NATIVE_WINDOW,
		settings: { compaction: { enabled: true, reserveTokens: NATIVE_RESERVE, keepRecentTokens: NATIVE_KEEP } },
	});
	try {
		h.script(workloadSteps(STAGES, { seed: 7 }));
		await h.session.prompt(WORKLOAD_PROMPT);
		const file = h.session.sessionManager.getSessionFile();
		if (!file) throw new Error("no session file");
		const rewritten: number[] = [];
		let work = 0;
		for (const c of h.captured) {
			if (isSummaryRequest(c.context)) rewritten.push(work);
			else work++;
		}
		return {
			file,
			billed: assistantsOf(h).map(promptOf),
			work: h.captured.filter((c) => !isSummaryRequest(c.context)).map((c) => c.context.messages),
			rewritten,
		};
	} finally {
		h.dispose();
	}
}

const policy = (r: ReplayResult, name: PolicyResult["name"]) => {
	const p = r.policies.find((x) => x.name === name);
	if (!p) throw new Error(`no ${name} policy in the result`);
	return p;
};

function expectWithin(actual: number[], expected: number[], what: string): void {
	expect(actual).toHaveLength(expected.length);
	actual.forEach((a, i) => {
		expect(Math.abs(a - expected[i]), `${what}, request ${i}: ${a} vs ${expected[i]}`).toBeLessThanOrEqual(
			TOLERANCE * expected[i],
		);
	});
}

afterAll(removeTempDirs);

describe("a recorded pi-fold session replays as it ran", () => {
	let rec: Recording;
	let result: ReplayResult;
	beforeAll(async () => {
		rec = await recordedFold();
		result = await replayFile(rec.file, core, { window: FOLD_WINDOW, budget: FOLD_BUDGET });
	});

	it("the runtime commits at the same requests, at least twice, and all its rewrites are attributed", () => {
		const fold = policy(result, "pi-fold");
		expect(rec.rewritten.length).toBeGreaterThanOrEqual(2);
		expect(fold.events.map((e) => e.request)).toEqual(rec.rewritten);
		// A commit at the last turn rewrites a request that never comes: only the ones sent count.
		const sent = rec.rewritten.filter((r) => r < rec.work.length);
		expect(fold.rewrites).toEqual({ attributed: sent.length, unattributed: 0 });
		expect(fold.problems).toEqual([]);
		expect(result.fenced).toBe(0);
		// What the session's own management wrote was dropped, to be made again.
		expect(result.dropped.contextEdits).toBeGreaterThan(0);
		expect(result.dropped.piFold).toBeGreaterThan(0);
	});

	it("each request has the size the provider billed: exactly until the first commit, within the tolerance after", () => {
		const fold = policy(result, "pi-fold");
		expect(result.requests).toBe(rec.billed.length);
		const first = rec.rewritten[0];
		// Until then the replayed window is the recorded one: the recorded usage itself.
		expect(fold.prompts.slice(0, first)).toEqual(rec.billed.slice(0, first));
		expectWithin(fold.prompts, rec.billed, "pi-fold");
	});

	it("no management sends the whole conversation: pure appends, and never less than pi-fold", () => {
		const none = policy(result, "none");
		const fold = policy(result, "pi-fold");
		expect(none.rewrites).toEqual({ attributed: 0, unattributed: 0 });
		expect(none.events).toEqual([]);
		for (let i = 1; i < none.prompts.length; i++) expect(none.prompts[i]).toBeGreaterThanOrEqual(none.prompts[i - 1]);
		none.prompts.forEach((n, i) => {
			expect(n, `request ${i}`).toBeGreaterThanOrEqual(fold.prompts[i]);
		});
		// Before the first commit the two are the same requests.
		expect(none.prompts.slice(0, rec.rewritten[0])).toEqual(fold.prompts.slice(0, rec.rewritten[0]));
	});

	it("the three arms are summarized at the price card, the cache reads counted from each policy's own prefix", () => {
		expect(result.arms.map((a) => a.name)).toEqual(["pi-fold", "native", "none"]);
		for (const [k, arm] of result.arms.entries()) {
			const p = result.policies[k];
			expect(arm.requests).toBe(p.records.length);
			expect(arm.totalTokens).toBe(p.records.reduce((n, r) => n + r.promptTokens + r.output, 0));
			// The first request reads nothing from the cache; a pure append reads at least the previous request's prefix.
			expect(p.records[0].cacheRead).toBe(0);
		}
		const none = policy(result, "none");
		for (let i = 1; i < none.records.length; i++) expect(none.records[i].cacheRead).toBeGreaterThan(0);
	});
});

describe("a recorded session with Pi's native compaction replays as it ran", () => {
	let rec: Recording;
	let result: ReplayResult;
	beforeAll(async () => {
		rec = await recordNative();
		result = await replayFile(rec.file, core, {
			window: NATIVE_WINDOW,
			reserveTokens: NATIVE_RESERVE,
			keepRecentTokens: NATIVE_KEEP,
		});
	});

	it("compacts at the same requests, and each request has the billed size within the tolerance", () => {
		const native = policy(result, "native");
		expect(rec.rewritten.length).toBeGreaterThanOrEqual(2);
		expect(native.events.map((e) => e.request)).toEqual(rec.rewritten);
		expect(native.rewrites).toEqual({ attributed: rec.rewritten.length, unattributed: 0 });
		expectWithin(native.prompts, rec.billed, "native");
		// One summarization request per compaction, billed as fresh input.
		const summaries = native.records.filter((r) => r.kind === "summary");
		expect(summaries).toHaveLength(rec.rewritten.length);
		for (const s of summaries) expect(s.cacheRead + s.cacheWrite).toBe(0);
		expect(result.settings.summarySource).toBe("session");
	});
});

describe("the real Pi session fixture", () => {
	// Minutes on a loaded machine: 484 requests, each through three policies and the real runtime.
	it.skipIf(!hasFixture)(
		"replays under all three policies; pi-fold makes no unattributed rewrite",
		{ timeout: 600_000 },
		async () => {
			const result = await replayFile(FIXTURE_SESSION, core);
			const assistants = readFileSync(FIXTURE_SESSION, "utf8")
				.split("\n")
				.filter((l) => l.trim() !== "" && JSON.parse(l).message?.role === "assistant").length;
			expect(result.requests).toBe(assistants);
			for (const p of result.policies) expect(p.prompts).toHaveLength(assistants);
			const [fold, native, none] = result.arms;
			const foldPolicy = policy(result, "pi-fold");
			expect(foldPolicy.rewrites.unattributed).toBe(0);
			expect(foldPolicy.events.length).toBeGreaterThan(0);
			expect(policy(result, "native").events.length).toBeGreaterThan(0);
			expect(policy(result, "native").rewrites.unattributed).toBe(0);
			expect(policy(result, "none").rewrites).toEqual({ attributed: 0, unattributed: 0 });
			// Managing the window at all saves most of an unmanaged session's tokens.
			expect(fold.totalTokens).toBeLessThan(none.totalTokens);
			expect(native.totalTokens).toBeLessThan(none.totalTokens);
			// The target (pi-fold cost <= 0.85x native, total tokens <= 1.0x) is reported, not asserted.
			console.log(
				`fixture: pi-fold/native cost ${(fold.cost / native.cost).toFixed(3)}x, total tokens ` +
					`${(fold.totalTokens / native.totalTokens).toFixed(3)}x; pi-fold ${foldPolicy.events.length} commits, ` +
					`peak ${fold.peakPromptTokens}, fence ${result.fenced}, ${foldPolicy.problems.length} problems`,
			);
		},
	);
	it.skipIf(hasFixture)(FIXTURE_MISSING, () => {});
});

// ---- the CLI ----

const ENV = childEnv(piEnv());

function cli(args: readonly string[], script = CLI): Promise<RunResult> {
	return run(process.execPath, [script, ...args], { cwd: REPO_ROOT, env: ENV, timeoutMs: 120_000 });
}

function expectRefused(r: RunResult, file: string, ...parts: string[]): void {
	expect(r.code, r.stderr).toBe(1);
	expect(r.stdout).toBe("");
	expect(r.stderr).toContain(file);
	for (const p of parts) expect(r.stderr).toContain(p);
	expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
}

describe("bad input gets one clear message and a non-zero exit", () => {
	let dir: string;
	let good: string[];
	beforeAll(async () => {
		dir = tempDir("replay-bad");
		// A small real session to cut up: the first stages of the workload, without pi-fold.
		const h = await makeSession({ cwd: WORKLOAD_ROOT, persist: true });
		try {
			h.script(workloadSteps(3, { seed: 3 }));
			await h.session.prompt(WORKLOAD_PROMPT);
			const file = h.session.sessionManager.getSessionFile();
			if (!file) throw new Error("no session file");
			good = readFileSync(file, "utf8").trimEnd().split("\n");
		} finally {
			h.dispose();
		}
		expect(good.length).toBeGreaterThan(6);
	});

	const write = (name: string, text: string) => {
		const file = join(dir, name);
		writeFileSync(file, text);
		return file;
	};

	it("a missing file", async () => {
		const file = join(dir, "nope.jsonl");
		expectRefused(await cli(["replay", file, "--window", "16000"]), file, "no such file");
	});

	it("an empty file", async () => {
		const file = write("empty.jsonl", "");
		expectRefused(await cli(["replay", file, "--window", "16000"]), file, "empty");
	});

	it("a truncated file (the last entry cut short)", async () => {
		const last = good.length;
		const text = `${good.slice(0, -1).join("\n")}\n${good[last - 1].slice(0, 40)}`;
		const file = write("truncated.jsonl", text);
		expectRefused(await cli(["replay", file, "--window", "16000"]), file, `line ${last}: truncated`);
	});

	it("a JSON file that is not a Pi session", async () => {
		const file = write("other.jsonl", '{"name":"not a session","version":1}\n{"name":"x"}\n');
		expectRefused(await cli(["replay", file, "--window", "16000"]), file, "line 1:", "not a Pi session");
	});

	it("a text file", async () => {
		const file = write("notes.txt", "hello\nworld\n");
		expectRefused(await cli(["replay", file, "--window", "16000"]), file, "line 1: not valid JSON");
	});

	it("a bad line in the middle, named by its number", async () => {
		const lines = [...good];
		lines[4] = '{"type":"message","id":"x1","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"ty';
		const file = write("middle.jsonl", `${lines.join("\n")}\n`);
		const r = await cli(["replay", file, "--window", "16000"]);
		expectRefused(r, file, "line 5: not valid JSON");
		expect(r.stderr).not.toContain("line 6");
	});

	it("a session whose model Pi does not know, without --window", async () => {
		const file = write("good.jsonl", `${good.join("\n")}\n`);
		expectRefused(await cli(["replay", file]), file, "--window");
	});

	it("bad usage exits 2 with the usage text", async () => {
		const r = await cli(["replay", join(dir, "good.jsonl"), "--window", "lots"]);
		expect(r.code).toBe(2);
		expect(r.stderr).toContain("--window needs a positive whole number");
		expect(r.stderr).toContain("Usage: pi-fold replay");
	});
});

describe("the CLI", () => {
	let rec: Recording;
	beforeAll(async () => {
		rec = await recordedFold();
	});

	it("--json prints the result alone on stdout, --svg writes the chart", async () => {
		const svg = join(tempDir("replay-svg"), "chart.svg");
		const r = await cli([
			"replay",
			rec.file,
			"--json",
			`--window=${FOLD_WINDOW}`,
			"--budget",
			String(FOLD_BUDGET),
			"--svg",
			svg,
		]);
		expect(r.code, r.stderr).toBe(0);
		const json = JSON.parse(r.stdout) as ReplayResult;
		expect(json.arms.map((a) => a.name)).toEqual(["pi-fold", "native", "none"]);
		expect(policy(json, "pi-fold").events.map((e) => e.request)).toEqual(rec.rewritten);
		const chart = readFileSync(svg, "utf8");
		expect(chart.startsWith("<?xml")).toBe(true);
		for (const name of ["pi-fold", "native", "none"]) expect(chart).toContain(`>${name}</text>`);
	});

	it("prints the table with the settings it rests on", async () => {
		const r = await cli(["replay", rec.file, "--window", String(FOLD_WINDOW), "--budget", String(FOLD_BUDGET)]);
		expect(r.code, r.stderr).toBe(0);
		expect(r.stdout).toContain("| total tokens |");
		expect(r.stdout).toContain("pi-fold / native");
		expect(r.stdout).toContain(`pi-fold budget ${FOLD_BUDGET.toLocaleString("en-US")} (--budget)`);
		expect(r.stdout).toContain(`pi-fold: ${rec.commits} commits, first carried by request ${rec.rewritten.join(", ")}`);
		expect(r.stderr).toBe(""); // not a terminal: no progress bar
	});

	it("a price card changes the cost and nothing else", async () => {
		const card = join(tempDir("replay-card"), "card.json");
		writeFileSync(card, JSON.stringify({ name: "flat", input: 1, cacheRead: 1, output: 1 }));
		const base = ["replay", rec.file, "--json", "--window", String(FOLD_WINDOW), "--budget", String(FOLD_BUDGET)];
		const a = JSON.parse((await cli(base)).stdout) as ReplayResult;
		const b = JSON.parse((await cli([...base, "--price-card", card])).stdout) as ReplayResult;
		expect(b.settings.priceCard).toBe("flat");
		for (const [k, arm] of b.arms.entries()) {
			// $1 per million tokens of every kind: the cost is the token count.
			expect(arm.cost).toBeCloseTo(arm.totalTokens / 1e6, 9);
			expect(arm.totalTokens).toBe(a.arms[k].totalTokens);
		}
		const bad = join(tempDir("replay-card"), "bad.json");
		writeFileSync(bad, JSON.stringify({ input: -1, cacheRead: 0, output: 1 }));
		expectRefused(await cli([...base, "--price-card", bad]), bad, "input");
	});

	it("the built bin (dist/cli) runs the same replay", async () => {
		const tsc = await run(join(REPO_ROOT, "node_modules/.bin/tsc"), ["-p", "tsconfig.bin.json"], {
			cwd: REPO_ROOT,
			env: ENV,
			timeoutMs: 120_000,
		});
		expect(tsc.code, tsc.stdout + tsc.stderr).toBe(0);
		expect(existsSync(BUILT_CLI)).toBe(true);
		const r = await cli(
			["replay", rec.file, "--json", "--window", String(FOLD_WINDOW), "--budget", String(FOLD_BUDGET)],
			BUILT_CLI,
		);
		expect(r.code, r.stderr).toBe(0);
		const json = JSON.parse(r.stdout) as ReplayResult;
		expect(policy(json, "pi-fold").events.map((e) => e.request)).toEqual(rec.rewritten);
		const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8"));
		expect(join(REPO_ROOT, pkg.bin["pi-fold"])).toBe(BUILT_CLI);
	});
});

describe("pieces", () => {
	it("arguments: flags with = or a separate value, one file, every mistake named", () => {
		expect(parseArgs(["replay", "s.jsonl", "--window=100", "--budget", "80", "--json"])).toEqual({
			kind: "replay",
			args: { file: "s.jsonl", window: 100, budget: 80, json: true, progress: false },
		});
		expect(parseArgs(["--help"])).toEqual({ kind: "help" });
		const errors = [
			[[], "no command"],
			[["fold", "s.jsonl"], "unknown command"],
			[["replay"], "no session file"],
			[["replay", "a", "b"], "one session file"],
			[["replay", "a", "--budget"], "--budget needs a value"],
			[["replay", "a", "--budget", "0"], "positive whole number"],
			[["replay", "a", "--wat"], "unknown option --wat"],
			[["replay", "a", "--json=yes"], "takes no value"],
		] as const;
		for (const [argv, message] of errors) {
			const r = parseArgs(argv);
			expect(r.kind, argv.join(" ")).toBe("error");
			if (r.kind === "error") expect(r.message).toContain(message);
		}
	});

	it("the progress bar stays silent for the first second, then draws on a terminal only", () => {
		let t = 0;
		const out: string[] = [];
		const tty = { isTTY: true, write: (s: string) => out.push(s) };
		const bar = progressBar(tty, { now: () => t });
		bar.update(1, 10);
		t = 999;
		bar.update(2, 10);
		expect(out).toEqual([]);
		t = 1000;
		bar.update(3, 10);
		expect(out.join("")).toContain("3/10 requests");
		bar.finish();
		expect(out.at(-1)?.trim()).toBe("");
		const pipe: string[] = [];
		const quiet = progressBar({ isTTY: false, write: (s: string) => pipe.push(s) }, { now: () => t });
		t = 5000;
		quiet.update(5, 10);
		quiet.finish();
		expect(pipe).toEqual([]);
		const forced = progressBar({ isTTY: false, write: (s: string) => pipe.push(s) }, { force: true, now: () => 0 });
		t = 0;
		forced.update(1, 2);
		expect(pipe).toEqual([]); // forced, but still not in the first second
	});

	it("the hidden prefix is the fitted line's intercept, and none without a clear one", () => {
		// real = 3000 + 1.2 × estimate, exactly.
		const points = [1000, 5000, 20000, 80000].map((estimate) => ({ estimate, real: 3000 + 1.2 * estimate }));
		expect(fitHiddenPrefix(points)).toEqual({ real: 3000, estimate: 2500 });
		expect(fitHiddenPrefix(points.slice(0, 2))).toEqual({ real: 0, estimate: 0 }); // too few points
		const proportional = points.map((p) => ({ estimate: p.estimate, real: 1.2 * p.estimate }));
		expect(fitHiddenPrefix(proportional).real).toBe(0);
	});
});
