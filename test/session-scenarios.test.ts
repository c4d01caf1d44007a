// The session benchmark's scenarios: the flags pick them and their defaults (the tiered one's faux
// model carries its own cost with a price tier, which prices every request unless --price-card is
// given), and a short tiered run of the pi-fold and native arms shows what the scenario measures:
// pi-fold's requests stay under the tier where anything can fold, native's pass it. The figures belong to the benchmark.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plantValues } from "../bench/lib/recall-agent.ts";
import { type ArmConfig, type ArmRun, runArm } from "../bench/lib/session-arms.ts";
import { parseSessionArgs, SessionArgsError } from "../bench/lib/session-compare.ts";
import { SCENARIO_NAMES, SCENARIOS, TIERED_COST } from "../bench/lib/session-scenarios.ts";
import { aboveTier } from "../bench/lib/session-targets.ts";
import { removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { firstPriceTier } from "../src/meter/budget.ts";
import { cardOfModel, costOf, DEFAULT_PRICE_CARD, tierOf } from "../src/report/price-card.ts";

afterAll(removeTempDirs);

describe("the benchmark's flags pick the scenarios", () => {
	it("all by default, each with its own defaults; the tiered model's own cost prices its requests", async () => {
		const args = await parseSessionArgs([]);
		expect(args.scenarios).toEqual([...SCENARIO_NAMES]);
		// The edges of the window: small windows and more tool output per stage.
		expect(args.optionsFor("window32k").window).toBe(32_000);
		expect(args.optionsFor("output2x").outputScale).toBe(2);
		expect(args.optionsFor("equal").outputScale).toBeUndefined();
		expect(args.options.scenario).toBe("equal");
		for (const name of args.scenarios) {
			const { stages, seed, window, maxTokens, summaryChars } = SCENARIOS[name].defaults;
			expect(SCENARIOS[name].name).toBe(name);
			expect(args.optionsFor(name)).toMatchObject({ scenario: name, stages, seed, window, maxTokens, summaryChars });
			expect(args.optionsFor(name).cost).toEqual(SCENARIOS[name].cost);
		}
		// Each scenario gets its own options, not the first one's: the tiered window differs from the equal one.
		expect(args.optionsFor("tiered").window).not.toBe(args.optionsFor("equal").window);
		const equal = args.optionsFor("equal");
		// The equal model declares a cost (so pi-fold can price a commit), with no tier: the default card's base rates.
		expect(firstPriceTier(equal.cost)).toBeUndefined();
		expect(tierOf(1_000_000, equal.card)).toEqual(DEFAULT_PRICE_CARD.base);
		const tiered = args.optionsFor("tiered");
		const tier = TIERED_COST.tiers?.[0];
		if (!tier) throw new Error("the tiered scenario's cost has no tier");
		// Below the tier the base rates, above it the tier's, for the whole request; writes at the input rate.
		const { input, cacheRead, output } = TIERED_COST;
		expect(tierOf(tier.inputTokensAbove, tiered.card)).toEqual({ input, cacheRead, cacheWrite: input, output });
		expect(tierOf(tier.inputTokensAbove + 1, tiered.card)).toMatchObject({
			input: tier.input,
			cacheRead: tier.cacheRead,
			cacheWrite: tier.input,
			output: tier.output,
		});
	});

	it("--scenario runs one; --price-card overrides the model's own prices; a bad scenario is named", async () => {
		const card = join(tempDir("scenario-card"), "flat.json");
		writeFileSync(card, JSON.stringify({ name: "flat", input: 1, cacheRead: 1, output: 1 }));
		const args = await parseSessionArgs(["--scenario", "tiered", "--price-card", card, "--stages", "80"]);
		expect(args.scenarios).toEqual(["tiered"]);
		expect(args.options).toMatchObject({ scenario: "tiered", stages: 80, cost: TIERED_COST });
		expect(args.options.card.name).toBe("flat");
		await expect(parseSessionArgs(["--scenario", "tiers"])).rejects.toThrow(SessionArgsError);
		await expect(parseSessionArgs(["--scenario", "tiers"])).rejects.toThrow(
			new RegExp(`--scenario must be ${SCENARIO_NAMES.join(", ")} or all`),
		);
	});
});

describe("a short tiered run: a 2x tier far below the window", () => {
	const STAGES = 16;
	const COST = {
		...TIERED_COST,
		tiers: [{ ...(TIERED_COST.tiers?.[0] as object), inputTokensAbove: 12_000 }],
	} as typeof TIERED_COST;
	const TIER = firstPriceTier(COST);
	const CONFIG: ArmConfig = {
		stages: STAGES,
		seed: 3,
		contextWindow: 40_000,
		maxTokens: 4096,
		cost: COST,
		values: plantValues(STAGES, 4, 3),
		summaryChars: 3000,
		readLines: { min: 200, max: 800 },
	};
	const runs: Record<string, ArmRun> = {};
	beforeAll(async () => {
		for (const arm of ["pi-fold", "native"] as const) runs[arm] = await runArm(arm, CONFIG);
	}, 600_000);

	it("pi-fold's budget is the tier, and its requests pass it only where nothing could fold; native's pass it freely", () => {
		expect(TIER).toEqual({ above: 12_000, multiplier: 2 });
		expect(runs["pi-fold"].fold?.budget).toBe(12_000);
		// With a budget this small a due commit can find everything foldable already folded (the recall
		// phase's small answers are not marked yet); that is said, and is no fault.
		expect(
			runs["pi-fold"].fold?.problems.filter((p) => !p.endsWith("nothing folded: no pending marks to commit")),
		).toEqual([]);
		expect(runs["pi-fold"].fold?.commits).toBeGreaterThan(0);
		// The tier is a price, not a wall: a request whose newest tool output alone leaves no room below it
		// still goes out (the session goes on), and the commit right after it brings the window back.
		expect(runs["pi-fold"].completed).toBe(true);
		expect(runs["pi-fold"].stopped).toBe(0);
		expect(aboveTier(runs["pi-fold"], TIER)).toBeLessThan(aboveTier(runs.native, TIER));
		const records = runs["pi-fold"].records;
		records.forEach((r, i) => {
			if (r.promptTokens > 12_000 && i + 1 < records.length)
				expect(records[i + 1].promptTokens).toBeLessThan(r.promptTokens);
		});
		expect(aboveTier(runs.native, TIER)).toBeGreaterThan(0);
		expect(aboveTier(runs.native, TIER)).toBe(runs.native.records.filter((r) => r.promptTokens > 12_000).length);
		expect(aboveTier(runs.native, undefined)).toBe(0);
	});

	it("the model's own card bills a request above the tier at the tier's rates, whole, and one below at the base", () => {
		const card = cardOfModel({ provider: "p", id: "m", cost: COST });
		const over = runs.native.records.find((r) => r.promptTokens > 12_000);
		const under = runs.native.records.find((r) => r.promptTokens <= 12_000 && r.promptTokens > 0);
		if (!card || !over || !under) throw new Error("no card, or no request above or below the tier");
		const price = (r: typeof over, t: { input: number; cacheRead: number; output: number }) =>
			(r.input * t.input + r.cacheRead * t.cacheRead + r.cacheWrite * t.input + r.output * t.output) / 1e6;
		expect(costOf(over, card)).toBeCloseTo(price(over, { input: 10, cacheRead: 1, output: 45 }), 12);
		expect(costOf(under, card)).toBeCloseTo(price(under, { input: 5, cacheRead: 0.5, output: 30 }), 12);
	});
});
