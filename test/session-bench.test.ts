// A short run of the three arms of the session benchmark (bench/session.bench.ts): the accounting adds
// up and agrees with what Pi itself recorded, the planted values are reported for every arm, and the
// "none" arm is what the fresh-input floor says it is (the conversation written to the cache once). Also
// the floor verdict and the report extensions the benchmark uses. The figures themselves (ratios,
// targets) belong to the benchmark; nothing here is timed.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plantValues } from "../bench/lib/recall-agent.ts";
import { type ArmConfig, type ArmName, type ArmRun, runArm } from "../bench/lib/session-arms.ts";
import { floorAnalysis } from "../bench/lib/session-targets.ts";
import { removeTempDirs } from "../harness/pi-harness.ts";
import { summarizeArm } from "../src/report/arm-report.ts";
import { renderRequestChart } from "../src/report/chart-svg.ts";
import { costOf } from "../src/report/price-card.ts";
import { ARM_TABLE_ROWS, FRESH_ABOVE_FLOOR_ROW, OVER_WINDOW_ROW, renderArmTable } from "../src/report/table.ts";

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

const ARMS: ArmName[] = ["native", "pi-fold", "none"];
const runs = new Map<string, ArmRun>();

beforeAll(async () => {
	for (const arm of ARMS) runs.set(arm, await runArm(arm, CONFIG));
}, 180_000);
afterAll(() => removeTempDirs());

const strip = <T extends { kind?: string }>({ kind: _k, ...rest }: T) => rest;

describe.each(ARMS)("session benchmark arm %s", (arm) => {
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
		expect(r.overWindow).toBe(r.records.filter((x) => x.promptTokens > CONFIG.contextWindow).length);
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

	it("reports every planted value; only a value found by calls counts them, and only pi-fold can find one so", () => {
		const r = run();
		expect(r.values.map((v) => v.value)).toEqual(CONFIG.values.map((v) => v.value));
		expect(r.values.map((v) => [v.stage, (v.calls ?? 0) > 0])).toEqual(
			r.values.map((v) => [v.stage, v.outcome === "recovered"]),
		);
		expect(r.values.some((v) => v.outcome === "recovered")).toBe(arm === "pi-fold");
		expect(r.records.some((x) => x.kind === "recall")).toBe(true);
	});
});

describe("the arms differ where they should", () => {
	it("native compaction summarised history away and cannot recover what it dropped", () => {
		const r = runs.get("native") as ArmRun;
		expect(r.compactions).toBeGreaterThan(0);
		expect(r.values.some((v) => v.outcome === "lost")).toBe(true);
		expect(r.values.some((v) => v.outcome === "recovered")).toBe(false);
		expect(r.recallCalls).toEqual({ search: 0, peek: 0, tokens: 0 });
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

	it("pi-fold's recall found the values it could not see with one search for the question's words", () => {
		const r = runs.get("pi-fold") as ArmRun;
		const recovered = r.values.filter((v) => v.outcome === "recovered");
		expect(recovered.length).toBeGreaterThan(0);
		for (const v of recovered) expect(v).toMatchObject({ via: "search", calls: 1 });
		expect(r.recallCalls.search).toBe(1);
		expect(r.recallCalls.peek).toBe(0);
	});

	it("without search, the same agent reads the index and peeks its way to every value", async () => {
		const r = await runArm("pi-fold", { ...CONFIG, recallSearch: false });
		expect(r.values.filter((v) => v.outcome === "lost")).toEqual([]);
		const recovered = r.values.filter((v) => v.outcome === "recovered");
		expect(recovered.length).toBeGreaterThan(0);
		for (const v of recovered) expect(v.via).toMatch(/^f[0-9a-f]{10}$/);
		expect(r.recallCalls.search).toBe(0);
		expect(r.recallCalls.peek).toBeGreaterThanOrEqual(recovered.length);
	}, 60_000);
});

describe("the none arm: no compaction, no pi-fold", () => {
	const none = () => runs.get("none") as ArmRun;

	it("ran with Pi's compaction off over the shared settings, and nothing summarised or folded", () => {
		const r = none();
		const shared = CONFIG.settings?.compaction as Record<string, unknown>;
		expect(r.settings).toEqual({ compaction: { ...shared, enabled: false } });
		expect(runs.get("native")?.settings).toEqual(CONFIG.settings);
		expect(r.compactions).toBe(0);
		expect(r.records.some((x) => x.kind === "summary")).toBe(false);
		expect(r.fold).toBeUndefined();
		expect(r.recallCalls).toEqual({ search: 0, peek: 0, tokens: 0 });
		expect(r.values.every((v) => v.outcome === "visible")).toBe(true);
	});

	it("went past the window (a real provider would have refused those requests), where the managed arms did not", () => {
		expect(none().overWindow).toBeGreaterThan(0);
		expect(runs.get("native")?.overWindow).toBe(0);
		expect(runs.get("pi-fold")?.overWindow).toBe(0);
	});

	it("only ever appends: each request reads the previous prompt from the cache, so its fresh input is the conversation written once", () => {
		const r = none().records;
		for (let i = 1; i < r.length; i++) expect(r[i].cacheRead).toBe(r[i - 1].promptTokens);
		const fresh = summarizeArm("none", r).freshInput;
		expect(fresh).toBe(r[r.length - 1].promptTokens);
		// The floor: every policy writes each appended message at least once.
		for (const arm of ["native", "pi-fold"]) {
			expect(summarizeArm(arm, runs.get(arm)?.records ?? []).freshInput).toBeGreaterThanOrEqual(fresh);
		}
	});
});

describe("the fresh-input floor verdict", () => {
	const withFresh = (name: string, freshInput: number) => ({ ...summarizeArm(name, []), freshInput });

	it("calls a target below the floor unreachable by any policy, with the numbers", () => {
		// 0.7 x 1000 = 700 < floor 800
		const f = floorAnalysis(withFresh("pi-fold", 900), withFresh("native", 1000), withFresh("none", 800));
		expect(f).toMatchObject({ floor: 800, piFoldAbove: 100, nativeAbove: 200, target: 700, reachable: false });
		expect(f.nativeOverheadShare).toBeCloseTo(0.2, 12);
		expect(f.verdict).toContain("pi-fold fresh input = floor 800 + 100");
		expect(f.verdict).toContain("0.7 x native = 700 < floor 800: unreachable by any policy on this workload");
	});

	it("calls a target at or above the floor reachable, and says whether pi-fold met it", () => {
		// 0.7 x 2000 = 1400 >= floor 1000
		const met = floorAnalysis(withFresh("pi-fold", 1300), withFresh("native", 2000), withFresh("none", 1000));
		expect(met.reachable).toBe(true);
		expect(met.verdict).toContain("0.7 x native = 1,400 >= floor 1,000: reachable");
		expect(met.verdict).toContain("pi-fold meets it");
		const over = floorAnalysis(withFresh("pi-fold", 1500), withFresh("native", 2000), withFresh("none", 1000));
		expect(over.verdict).toContain("pi-fold is 100 over it");
	});
});

describe("report extensions the benchmark uses", () => {
	const a = (name: string, freshInput: number, overWindow?: number) => ({
		...summarizeArm(name, [{ input: 0, cacheRead: 0, cacheWrite: freshInput, output: 0, promptTokens: freshInput }]),
		...(overWindow === undefined ? {} : { overWindow }),
	});

	it("adds the above-the-floor row after fresh input and the over-the-window row after the peak, only when asked", () => {
		const arms = [a("pi-fold", 1200, 0), a("native", 1500, 0), a("none", 1000, 3)];
		const lines = renderArmTable(arms, {
			ratio: { numerator: "pi-fold", denominator: "native" },
			freshInputFloor: 1000,
		}).split("\n");
		const labels = lines.slice(2).map((l) => l.split(" | ")[0].slice(2));
		expect(labels).toHaveLength(ARM_TABLE_ROWS.length + 2);
		expect(labels[labels.indexOf("fresh input") + 1]).toBe(FRESH_ABOVE_FLOOR_ROW);
		expect(labels[labels.indexOf("peak request context") + 1]).toBe(OVER_WINDOW_ROW);
		expect(lines.find((l) => l.startsWith(`| ${FRESH_ABOVE_FLOOR_ROW} |`))).toBe(
			`| ${FRESH_ABOVE_FLOOR_ROW} | 200 | 500 | 0 | 0.40x |`,
		);
		expect(lines.find((l) => l.startsWith(`| ${OVER_WINDOW_ROW} |`))).toBe(`| ${OVER_WINDOW_ROW} | 0 | 0 | 3 |  |`);
		// Without the option and the counts: the fixed rows only.
		const plain = renderArmTable([a("pi-fold", 1200), a("native", 1500)]).split("\n");
		expect(plain).toHaveLength(2 + ARM_TABLE_ROWS.length);
		expect(() => renderArmTable(arms, { freshInputFloor: Number.NaN })).toThrow(/freshInputFloor must be a finite/);
	});

	it("draws a series in the color it names, and the palette's otherwise", () => {
		const svg = renderRequestChart({
			budget: 100,
			series: [
				{ name: "a", points: [1, 2] },
				{ name: "b", points: [2, 3], color: "#7f7f7f" },
			],
		});
		const strokes = [...svg.matchAll(/<polyline[^>]* stroke="([^"]+)"/g)].map((m) => m[1]);
		expect(strokes).toEqual(["#1f77b4", "#7f7f7f"]);
	});
});
