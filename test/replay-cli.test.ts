// `pi-fold replay` through its real CLI entry and the built bin: bad files get one clear message and a
// non-zero exit; the CLI's outputs (text, JSON, chart), price cards, --model, the Node check, --version.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSession, piEnv, removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "../harness/workload.ts";
import { hostVersionProblem } from "../src/replay/host-library.ts";
import { nodeVersionProblem } from "../src/replay/launch-check.ts";
import { requestRuns } from "../src/replay/output.ts";
import type { ReplayResult } from "../src/replay/replay.ts";
import { childEnv, REPO_ROOT, type RunResult, run } from "./helpers/pi-cli.ts";
import { FOLD_BUDGET, FOLD_WINDOW, policy, type Recording, recordedFold } from "./helpers/replay-recordings.ts";

const CLI = fileURLToPath(new URL("../src/cli/cli.ts", import.meta.url));
const BUILT_BIN = join(REPO_ROOT, "dist/src/cli/bin.js");

afterAll(removeTempDirs);

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
	return run(process.execPath, [script, ...args], { cwd: REPO_ROOT, env: ENV, timeoutMs: 240_000 });
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
		expect(r.stderr).toContain(`skipped 1 line that is not a session entry`);
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
		expect(r.stdout).toContain(
			`pi-fold: ${rec.commits} commits, first carried by requests ${requestRuns(rec.rewritten)}`,
		);
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

	it("the built bin (dist/src/cli) runs the same replay, and says its version", async () => {
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

describe("the Pi the replay runs on", () => {
	it("one older than pi-fold needs is refused by name, with the command that updates it", () => {
		const at = (version: string) => hostVersionProblem({ dir: "/opt/pi", version, via: "path" });
		expect(at("1.5.9")).toBe(
			"the Pi found at /opt/pi is 1.5.9; the replay needs Pi 1.6.0 or later: update it (npm install -g @earendil-works/pi-coding-agent)",
		);
		expect(at("0.9.0")).toContain("is 0.9.0");
		for (const ok of ["1.6.0", "1.6.1", "1.10.0", "2.0.0", "1.7.0-beta.1", "unknown"])
			expect(at(ok), ok).toBeUndefined();
	});
});
