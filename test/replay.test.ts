// `pi-fold replay`: sessions recorded here by a real Pi AgentSession (faux provider, offline), one
// with pi-fold and one with Pi's native compaction, replayed and compared with what they really
// sent; the real Pi session fixture; bad files through the real CLI entry; the built bin.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { FIXTURE_MISSING, FIXTURE_SESSION, hasFixture } from "../harness/fixture.ts";
import { makeSession, piEnv, removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { isSummaryRequest, WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "../harness/workload.ts";
import { type PiFold, registerPiFold } from "../src/index.ts";
import { parseArgs } from "../src/replay/args.ts";
import { MIN_NODE, nodeVersionProblem } from "../src/replay/launch-check.ts";
import { textReport } from "../src/replay/output.ts";
import { progressBar } from "../src/replay/progress.ts";
import { fitHiddenPrefix } from "../src/replay/provider-tokens.ts";
import { type PolicyResult, type ReplayResult, replayFile } from "../src/replay/replay.ts";
import { summarizeArm } from "../src/report/arm-report.ts";
import { cardOfModel, type PriceCard } from "../src/report/price-card.ts";
import { childEnv, REPO_ROOT, type RunResult, run } from "./helpers/pi-cli.ts";

const core = nodeCore();
const CLI = fileURLToPath(new URL("../src/replay/cli.ts", import.meta.url));
const BUILT_BIN = join(REPO_ROOT, "dist/src/replay/bin.js");
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

/** Native recording: Pi compacts above 16000 - 4000 tokens and keeps 3000. */
const NATIVE_WINDOW = 16_000;
const NATIVE_RESERVE = 4_000;
const NATIVE_KEEP = 3_000;

/** anthropic/claude-opus-4-5 in Pi 1.6's catalog ($ per M tokens). */
const OPUS_COST = { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 };

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
			// Priced as Pi's catalog prices the recorded model (it has no price tier).
			expect(result.settings.prices).toEqual([
				expect.objectContaining({ model: "anthropic/claude-opus-4-5", requests: assistants, source: "catalog" }),
			]);
			const card = cardOfModel({ provider: "anthropic", id: "claude-opus-4-5", cost: OPUS_COST }) as PriceCard;
			expect(fold.cost).toBeCloseTo(summarizeArm("x", foldPolicy.records, card).cost, 9);
			// The text names no internal refusal: a usage report the runtime set aside is explained in one line.
			const text = textReport(result);
			expect(text).not.toContain("implausible");
			const setAside = foldPolicy.problems.filter((p) => p.includes("implausible calibration")).length;
			if (setAside > 0) expect(text).toMatch(new RegExp(`^pi-fold: set aside ${setAside} usage report`, "m"));
			// Rows with no data in a replay are left out.
			expect(text).not.toContain("| wall clock |");
			expect(text).not.toContain("| values visible");
			// The target (pi-fold cost <= 0.85x native, total tokens <= 1.0x) is reported, not asserted.
			console.log(
				`fixture: pi-fold/native cost ${(fold.cost / native.cost).toFixed(3)}x, total tokens ` +
					`${(fold.totalTokens / native.totalTokens).toFixed(3)}x; pi-fold ${foldPolicy.events.length} commits, ` +
					`peak ${fold.peakPromptTokens}, fence ${result.fenced}, ${foldPolicy.problems.length} problems`,
			);
		},
	);
	it.skipIf(!hasFixture)(
		"replayed as a model with a 2x price tier far below its window: pi-fold stays under the tier, native does not",
		{ timeout: 600_000 },
		async () => {
			const result = await replayFile(FIXTURE_SESSION, core, {
				model: { provider: "opencode", id: "gpt-5.5" },
				window: 400_000,
			});
			expect(result.settings).toMatchObject({
				servedAs: "opencode/gpt-5.5",
				budget: 272_000,
				budgetLimit: "price tier",
				budgetWhy: "price tier: 2x above 272,000; window 400,000",
			});
			expect(result.settings.prices.every((p) => p.source === "catalog" && p.pricedAs === "opencode/gpt-5.5")).toBe(
				true,
			);
			const [fold, native] = result.arms;
			const above = (name: PolicyResult["name"]) => policy(result, name).prompts.filter((t) => t > 272_000).length;
			expect(above("pi-fold")).toBe(0);
			expect(above("native")).toBeGreaterThan(0);
			expect(policy(result, "pi-fold").rewrites.unattributed).toBe(0);
			console.log(
				`fixture as opencode/gpt-5.5 (window 400,000, 2x above 272,000): pi-fold/native cost ` +
					`${(fold.cost / native.cost).toFixed(3)}x, total tokens ${(fold.totalTokens / native.totalTokens).toFixed(3)}x; ` +
					`requests above the tier: pi-fold ${above("pi-fold")}, native ${above("native")}`,
			);
		},
	);
	it.skipIf(hasFixture)(FIXTURE_MISSING, () => {});
});

// ---- the CLI ----

const ENV = childEnv(piEnv());

/** A Node older than MIN_NODE installed on this machine (the system one here), if any. */
async function olderNode(): Promise<{ path: string; version: string } | undefined> {
	for (const path of ["/usr/bin/node", "/usr/local/bin/node", "/bin/node"]) {
		if (!existsSync(path)) continue;
		const r = await run(path, ["-p", "process.versions.node"], { cwd: REPO_ROOT, env: ENV });
		const version = r.stdout.trim();
		if (r.code === 0 && nodeVersionProblem(version)) return { path, version };
	}
	return undefined;
}

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

	it("a truncated last line (normal after a crash) is skipped and named, as Pi does; the rest replays", async () => {
		const last = good.length;
		const text = `${good.slice(0, -1).join("\n")}\n${good[last - 1].slice(0, 40)}`;
		const file = write("truncated.jsonl", text);
		const r = await cli(["replay", file, "--window", "16000"]);
		expect(r.code, r.stderr).toBe(0);
		expect(r.stderr).toContain(`skipped 1 line that are not session entries`);
		expect(r.stderr).toContain(`line ${last}: truncated`);
		expect(r.stdout).toContain("pi-fold");
	});

	it("a FIFO or a device is refused at once, never read or waited on", async () => {
		const fifo = join(dir, "fifo.jsonl");
		execFileSync("mkfifo", [fifo]);
		expectRefused(await cli(["replay", fifo, "--window", "16000"]), fifo, "not a regular file");
		expectRefused(await cli(["replay", "/dev/zero", "--window", "16000"]), "/dev/zero", "not a regular file");
	});

	it("a JSON file that is not a Pi session", async () => {
		const file = write("other.jsonl", '{"name":"not a session","version":1}\n{"name":"x"}\n');
		expectRefused(await cli(["replay", file, "--window", "16000"]), file, "line 1:", "not a Pi session");
	});

	it("a text file", async () => {
		const file = write("notes.txt", "hello\nworld\n");
		expectRefused(await cli(["replay", file, "--window", "16000"]), file, "line 1: not valid JSON");
	});

	it("a bad line in the middle is skipped and named by its number; the rest replays", async () => {
		const lines = [...good];
		lines[4] = '{"type":"message","id":"x1","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"ty';
		const file = write("middle.jsonl", `${lines.join("\n")}\n`);
		const r = await cli(["replay", file, "--window", "16000"]);
		expect(r.code, r.stderr).toBe(0);
		expect(r.stderr).toContain("line 5: not valid JSON");
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
		expect(r.stdout).toContain(`pi-fold budget ${FOLD_BUDGET.toLocaleString("en-US")} (providerInputBudget; window `);
		// The faux model is not in Pi's catalog: the default card prices it, and the report says so.
		expect(r.stdout).toMatch(
			/prices for pi-fold-faux\/faux-1 \(\d+ requests\): not in Pi's catalog \(or no cost there\): the default card: default \(/,
		);
		expect(r.stdout).toContain(`pi-fold: ${rec.commits} commits, first carried by request ${rec.rewritten.join(", ")}`);
		// Which limit each ratio is measured against, in words.
		expect(r.stdout).toContain(
			`its share of pi-fold's serving budget, ${FOLD_BUDGET.toLocaleString("en-US")} tokens, in every column`,
		);
		expect(r.stdout).toMatch(
			/Native compacts above its own threshold, [\d,]+ \(the window [\d,]+ minus reserveTokens [\d,]+\)/,
		);
		// No figure anywhere: no row.
		expect(r.stdout).not.toContain("| wall clock |");
		// stderr holds at most progress lines (a replay over a second shows them, terminal or not).
		expect(r.stderr.split("\n").filter((l) => l !== "" && !l.startsWith("replaying ["))).toEqual([]);
		const quiet = await cli([
			"replay",
			rec.file,
			"--quiet",
			"--window",
			String(FOLD_WINDOW),
			"--budget",
			String(FOLD_BUDGET),
		]);
		expect(quiet.code, quiet.stderr).toBe(0);
		expect(quiet.stderr).toBe("");
		// The same report; only the timing row may differ between two runs.
		const untimed = (text: string) => text.split("\n").filter((l) => !l.startsWith("| added time"));
		expect(untimed(quiet.stdout)).toEqual(untimed(r.stdout));
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

	it("--model replays as a catalog model: its price tier sets pi-fold's budget and its prices the cost", async () => {
		const svg = join(tempDir("replay-model"), "chart.svg");
		const r = await cli(["replay", rec.file, "--json", "--model", "google/gemini-2.5-pro", "--svg", svg]);
		expect(r.code, r.stderr).toBe(0);
		const json = JSON.parse(r.stdout) as ReplayResult;
		expect(json.settings).toMatchObject({
			servedAs: "google/gemini-2.5-pro",
			window: 1_048_576,
			windowSource: "catalog",
			budget: 200_000,
			budgetLimit: "price tier",
		});
		expect(json.settings.prices).toEqual([
			expect.objectContaining({ model: "pi-fold-faux/faux-1", source: "catalog", pricedAs: "google/gemini-2.5-pro" }),
		]);
		expect(json.settings.priceCard).toMatch(/^google\/gemini-2\.5-pro's own cost \(\$1\.25 in/);
		expect(readFileSync(svg, "utf8")).toContain("price tier: 2x above 200,000");
		const unknown = await cli(["replay", rec.file, "--model", "acme/nothing-9"]);
		expect(unknown.code).toBe(1);
		expect(unknown.stderr).toContain("--model acme/nothing-9 is not in Pi's model catalog");
	});

	it("the built bin (dist/src/replay) runs the same replay, and says its version", async () => {
		// Built with the package by `npm run build` (npm test runs it first), from the same compile as dist/bindings.
		expect(existsSync(BUILT_BIN), "run `npm run build` first").toBe(true);
		const r = await cli(
			["replay", rec.file, "--json", "--window", String(FOLD_WINDOW), "--budget", String(FOLD_BUDGET)],
			BUILT_BIN,
		);
		expect(r.code, r.stderr).toBe(0);
		const json = JSON.parse(r.stdout) as ReplayResult;
		expect(policy(json, "pi-fold").events.map((e) => e.request)).toEqual(rec.rewritten);
		const pkg = JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8"));
		expect(join(REPO_ROOT, pkg.bin["pi-fold"])).toBe(BUILT_BIN);
		for (const args of [["--version"], ["replay", "--version"]]) {
			const v = await cli(args, BUILT_BIN);
			expect(v, args.join(" ")).toMatchObject({ code: 0, stdout: `pi-fold ${pkg.version}\n`, stderr: "" });
		}
		const dev = await cli(["--version"]);
		expect(dev.stdout).toBe(`pi-fold ${pkg.version}\n`);
	});

	it("under a Node older than 22.19 the bin says so in one line (with the Node found on this machine)", async () => {
		const old = await olderNode();
		if (!old) {
			console.info(
				"[replay] no Node older than 22.19 on this machine: the version check is tested by its function only",
			);
			return;
		}
		const r = await run(old.path, [BUILT_BIN, "replay", rec.file], { cwd: REPO_ROOT, env: ENV });
		expect(r).toEqual({ code: 1, stdout: "", stderr: `pi-fold: needs Node >= 22.19 (found ${old.version})\n` });
		// --version needs nothing newer.
		expect((await run(old.path, [BUILT_BIN, "--version"], { cwd: REPO_ROOT, env: ENV })).code).toBe(0);
	});
});

describe("pieces", () => {
	it("arguments: flags with = or a separate value, one file, every mistake named", () => {
		expect(parseArgs(["replay", "s.jsonl", "--window=100", "--budget", "80", "--json"])).toEqual({
			kind: "replay",
			args: { file: "s.jsonl", window: 100, budget: 80, json: true, quiet: false },
		});
		expect(parseArgs(["replay", "s.jsonl", "--quiet"])).toMatchObject({ kind: "replay", args: { quiet: true } });
		expect(parseArgs(["--help"])).toEqual({ kind: "help" });
		expect(parseArgs(["replay", "s.jsonl", "--model=openrouter/qwen/qwen3-coder-flash"])).toMatchObject({
			args: { model: { provider: "openrouter", id: "qwen/qwen3-coder-flash" } },
		});
		expect(parseArgs(["--version"])).toEqual({ kind: "version" });
		expect(parseArgs(["replay", "-V"])).toEqual({ kind: "version" });
		const errors = [
			[[], "no command"],
			[["fold", "s.jsonl"], "unknown command"],
			[["replay"], "no session file"],
			[["replay", "a", "b"], "one session file"],
			[["replay", "a", "--budget"], "--budget needs a value"],
			[["replay", "a", "--budget", "0"], "positive whole number"],
			[["replay", "a", "--wat"], "unknown option --wat"],
			[["replay", "a", "--json=yes"], "takes no value"],
			[["replay", "a", "--model", "gpt-5.5"], "--model needs provider/id"],
			[["replay", "a", "--model"], "--model needs provider/id"],
			[["replay", "a", "--quiet=1"], "takes no value"],
			[["replay", "a", "--progress"], "unknown option --progress"],
		] as const;
		for (const [argv, message] of errors) {
			const r = parseArgs(argv);
			expect(r.kind, argv.join(" ")).toBe("error");
			if (r.kind === "error") expect(r.message).toContain(message);
		}
	});

	it("progress stays silent for the first second, then redraws a bar on a terminal and writes lines to a log", () => {
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
		expect(out.join("")).toMatch(/^\r/);
		bar.finish();
		expect(out.at(-1)?.trim()).toBe("");
		// Not a terminal (a pipe, a CI log): whole lines, at most one a second.
		const log: string[] = [];
		t = 0;
		const lines = progressBar({ isTTY: false, write: (s: string) => log.push(s) }, { now: () => t });
		t = 1500;
		lines.update(4, 10);
		t = 2000;
		lines.update(5, 10);
		t = 2600;
		lines.update(6, 10);
		expect(log).toEqual([
			"replaying [############------------------] 4/10 requests\n",
			"replaying [##################------------] 6/10 requests\n",
		]);
		lines.finish();
		expect(log).toHaveLength(2);
		// --quiet: nothing, however long it takes.
		const none: string[] = [];
		t = 0;
		const quiet = progressBar({ isTTY: true, write: (s: string) => none.push(s) }, { quiet: true, now: () => t });
		t = 60_000;
		quiet.update(5, 10);
		quiet.finish();
		expect(none).toEqual([]);
	});

	it("the Node version check: older than 22.19 is named with the version found", () => {
		expect(MIN_NODE).toEqual([22, 19]);
		expect(nodeVersionProblem("20.20.2")).toBe("needs Node >= 22.19 (found 20.20.2)");
		expect(nodeVersionProblem("22.18.9")).toBe("needs Node >= 22.19 (found 22.18.9)");
		for (const ok of ["22.19.0", "22.23.3", "23.0.0", "24.1.0"]) expect(nodeVersionProblem(ok), ok).toBeUndefined();
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
