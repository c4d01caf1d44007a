// A short run of both arms of the session benchmark (bench/session.bench.ts): the accounting adds up
// and agrees with what Pi itself recorded, and the planted values are reported for every arm. The
// figures themselves (ratios, targets) belong to the benchmark; nothing here is timed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plantValues } from "../bench/lib/recall-agent.ts";
import { type ArmConfig, type ArmRun, runArm } from "../bench/lib/session-arms.ts";
import { summarizeArm } from "../src/report/arm-report.ts";
import { costOf } from "../src/report/price-card.ts";
import { removeTempDirs } from "./helpers/pi-harness.ts";

const STAGES = 16;
/**
 * Small, so native compaction fires within 16 stages (threshold 40k - 16,384 tokens); pi-fold
 * consolidates past 2 roots, so early stages' briefs are folded into indexes and the recall agent
 * must read them back with peek.
 */
const CONFIG: ArmConfig = {
	stages: STAGES,
	seed: 3,
	contextWindow: 40_000,
	settings: { compaction: { enabled: true, reserveTokens: 16_384, keepRecentTokens: 8_000 } },
	values: plantValues(STAGES, 8, 3),
	summaryChars: 3000,
	readLines: { min: 200, max: 800 },
	piFoldOptions: { thresholds: { consolidateAfter: 2 } },
};

const runs = new Map<string, ArmRun>();

beforeAll(async () => {
	runs.set("native", await runArm("native", CONFIG));
	runs.set("pi-fold", await runArm("pi-fold", CONFIG));
}, 120_000);
afterAll(() => removeTempDirs());

const OUTCOMES = ["visible", "recovered", "lost", "lost (peek unavailable)"];
const strip = <T extends { kind?: string }>({ kind: _k, ...rest }: T) => rest;

describe.each(["native", "pi-fold"])("session benchmark arm %s", (arm) => {
	const run = () => runs.get(arm) as ArmRun;

	it("meters every request the provider received, and the totals are the sums over them", () => {
		const r = run();
		expect(r.records.length).toBe(r.captured);
		expect(r.records.filter((x) => x.kind === "work")).toHaveLength(STAGES + 1);
		const a = summarizeArm(arm, r.records);
		const sum = (f: (x: (typeof r.records)[number]) => number) => r.records.reduce((s, x) => s + f(x), 0);
		expect(a.totalTokens).toBe(sum((x) => x.input + x.cacheRead + x.cacheWrite + x.output));
		expect(a.freshInput).toBe(sum((x) => x.input + x.cacheWrite));
		expect(a.cacheRead).toBe(sum((x) => x.cacheRead));
		expect(a.output).toBe(sum((x) => x.output));
		expect(a.cost).toBeCloseTo(
			sum((x) => costOf(x)),
			9,
		);
		expect(a.peakPromptTokens).toBe(Math.max(...r.records.map((x) => x.promptTokens)));
		for (const x of r.records) expect(x.promptTokens).toBe(x.input + x.cacheRead + x.cacheWrite);
	});

	it("agrees with the usage Pi stored: each answer's usage, in order, and its compactions' summary usage", () => {
		const r = run();
		const answered = r.records.filter((x) => x.kind !== "summary").map(strip);
		expect(answered).toEqual(r.sessionUsage.answers);
		const summaries = r.records.filter((x) => x.kind === "summary").map(strip);
		// One compaction may send two summary requests (history and a split turn) and store their sum.
		expect(summaries.length).toBeGreaterThanOrEqual(r.compactions);
		const total = (xs: typeof summaries) =>
			xs.reduce((t, x) => [t[0] + x.input, t[1] + x.cacheRead, t[2] + x.cacheWrite, t[3] + x.output], [0, 0, 0, 0]);
		expect(total(summaries)).toEqual(total(r.sessionUsage.compactions));
		// Pi sends summary requests uncached (a fresh session id, cacheRetention none).
		for (const s of summaries) expect(s.input).toBe(s.promptTokens);
	});

	it("reports every planted value with one outcome", () => {
		const r = run();
		expect(r.values.map((v) => v.value)).toEqual(CONFIG.values.map((v) => v.value));
		for (const v of r.values) expect(OUTCOMES).toContain(v.outcome);
		expect(r.records.some((x) => x.kind === "recall")).toBe(true);
	});
});

describe("the arms differ where they should", () => {
	it("native compaction summarised history away and cannot recover what it dropped", () => {
		const r = runs.get("native") as ArmRun;
		expect(r.compactions).toBeGreaterThan(0);
		expect(r.values.some((v) => v.outcome === "lost")).toBe(true);
		expect(r.values.some((v) => v.outcome === "recovered")).toBe(false);
		expect(r.recallCalls).toEqual({ status: 0, probes: 0, peeks: 0 });
		expect(r.fold).toBeUndefined();
	});

	it("pi-fold cancelled Pi's compaction, committed folds with no unattributed rewrite, and kept every value", () => {
		const r = runs.get("pi-fold") as ArmRun;
		expect(r.compactions).toBe(0);
		expect(r.records.some((x) => x.kind === "summary")).toBe(false);
		expect(r.fold?.commits).toBeGreaterThan(0);
		expect(r.fold?.rewrites.unattributed).toBe(0);
		expect(r.fold?.problems).toEqual([]);
		expect(r.extensionErrors).toEqual([]);
		expect(r.values.filter((v) => v.outcome === "visible" || v.outcome === "recovered")).toHaveLength(8);
	});

	it("pi-fold's recall read consolidated values back through status (tree) and peek", () => {
		const r = runs.get("pi-fold") as ArmRun;
		const recovered = r.values.filter((v) => v.outcome === "recovered");
		expect(recovered.length).toBeGreaterThan(0);
		// Each came back in the result of a peek of a fold id the tree listed.
		for (const v of recovered) expect(v.via).toMatch(/^f[0-9a-f]{10}$/);
		expect(r.recallCalls.status).toBe(1);
		expect(r.recallCalls.peeks).toBeGreaterThan(0);
	});
});
