// The commit policy's arithmetic, pure: which cards it can price, that its trigger minimises the cost
// per request it models, when it fires (warm, cold, at the cap), and that the working set stays raw.
import { describe, expect, it } from "vitest";
import { commitNeed, occupancyOf } from "../src/meter/occupancy.ts";
import { commitPolicy, type WeighedMark } from "../src/policy/commit-policy.ts";
import { cacheRates, commitTrigger, decideCommit } from "../src/policy/cost-model.ts";
import { DEFAULT_THRESHOLDS } from "../src/policy/thresholds.ts";
import { WORKING_SET_SHARE, workingSetStart } from "../src/policy/working-set.ts";

describe("cacheRates", () => {
	it("writes at the cache-write rate, or at the input rate where a card charges none", () => {
		expect(cacheRates({ input: 3, cacheRead: 0.3, cacheWrite: 3.75 })).toEqual({ write: 3.75, read: 0.3 });
		expect(cacheRates({ input: 5, cacheRead: 0.5, cacheWrite: 0 })).toEqual({ write: 5, read: 0.5 });
	});

	it("cannot price a card without input or cache-read prices, or with reads no cheaper than writes", () => {
		expect(cacheRates(undefined)).toBeUndefined();
		expect(cacheRates({ input: 0, cacheRead: 0, cacheWrite: 0 })).toBeUndefined();
		expect(cacheRates({ input: 5 })).toBeUndefined();
		expect(cacheRates({ input: 1, cacheRead: 1 })).toBeUndefined();
		expect(cacheRates({ input: Number.NaN, cacheRead: 0.5 })).toBeUndefined();
	});
});

describe("commitTrigger", () => {
	// What a cycle costs per request when a commit frees F (see cost-model.ts): reads of the growing
	// window above the landing level, and the rewrite spread over the F/g requests of the cycle.
	const perRequest = (F: number, write: number, read: number, R: number, g: number) =>
		(read * F) / 2 + (write * R * g) / F;

	it("is where the modelled cost per request is least", () => {
		const cases = [
			{ write: 5, read: 0.5, R: 12_000, g: 3_000 },
			{ write: 3.75, read: 0.3, R: 40_000, g: 8_000 },
			{ write: 1.25, read: 0.125, R: 2_000, g: 500 },
		];
		for (const c of cases) {
			const t = commitTrigger({ write: c.write, read: c.read }, c.R, c.g);
			const at = perRequest(t, c.write, c.read, c.R, c.g);
			for (const f of [0.5, 0.8, 0.95, 1.05, 1.25, 2]) {
				expect(perRequest(t * f, c.write, c.read, c.R, c.g)).toBeGreaterThan(at);
			}
		}
	});

	it("grows with the rewrite and with the pace, and shrinks as reads get dearer", () => {
		const rates = { write: 5, read: 0.5 };
		expect(commitTrigger(rates, 20_000, 3_000)).toBeGreaterThan(commitTrigger(rates, 10_000, 3_000));
		expect(commitTrigger(rates, 10_000, 6_000)).toBeGreaterThan(commitTrigger(rates, 10_000, 3_000));
		expect(commitTrigger({ write: 5, read: 1 }, 10_000, 3_000)).toBeLessThan(commitTrigger(rates, 10_000, 3_000));
	});
});

describe("decideCommit", () => {
	const rates = { write: 5, read: 0.5 };
	const base = { rates, tokens: 50_000, cap: 160_000, rewrite: 10_000, growth: 3_000, minFreed: 2_000 };
	const trigger = commitTrigger(rates, 10_000, 3_000);

	it("on a warm cache, waits until the marks free the trigger, then fires", () => {
		expect(decideCommit({ ...base, cache: "warm", freed: trigger - 1 }).commit).toBe(false);
		const fires = decideCommit({ ...base, cache: "warm", freed: trigger });
		expect(fires.commit).toBe(true);
		expect(fires.rewriteCost).toBeCloseTo(10_000 * 5e-6);
		expect(fires.savingPerRequest).toBeCloseTo(trigger * 0.5e-6);
	});

	it("on a cold cache, fires for anything worth folding: the rewrite costs nothing extra", () => {
		const cold = decideCommit({ ...base, cache: "cold", freed: base.minFreed });
		expect(cold.commit).toBe(true);
		expect(cold.rewriteCost).toBe(0);
		expect(decideCommit({ ...base, cache: "cold", freed: base.minFreed - 1 }).commit).toBe(false);
	});

	it("at the cap, fires whatever the prices", () => {
		expect(decideCommit({ ...base, cache: "warm", tokens: base.cap, freed: 1 }).commit).toBe(true);
	});
});

describe("workingSetStart", () => {
	const u = { role: "user" as const };
	const batch = { role: "assistant" as const, toolCallIds: ["c"] };
	const result = { role: "toolResult" as const };
	const text = { role: "assistant" as const };

	it("starts at the third newest batch of the chapter", () => {
		const entries = [u, batch, result, batch, result, batch, result, batch, result, text];
		expect(workingSetStart(entries, 3)).toBe(3);
		expect(workingSetStart(entries, 4)).toBe(1);
	});

	it("holds the whole chapter from its user message when it has fewer batches", () => {
		const entries = [u, batch, result, text, u, batch, result, batch, result];
		expect(workingSetStart(entries, 3)).toBe(4);
		expect(workingSetStart([batch, result], 3)).toBe(0);
	});

	describe("fits the budget: it shrinks toward the batch in progress past a share of it", () => {
		// A chapter of 6 batches, each a call (100 tokens) and its result (`result` tokens).
		const chapter = [u, ...Array.from({ length: 6 }, () => [batch, result]).flat()];
		const start = (k: number) => chapter.length - 2 * k; // the k newest batches
		const sized = (resultTokens: number, budget: number) =>
			workingSetStart(chapter, 3, {
				budget,
				tokensAt: (p) => (chapter[p] === batch ? 100 : chapter[p] === result ? resultTokens : 20),
			});
		// How many newest batches of `size` tokens fit the share, one at least, three at most.
		const fitting = (size: number, budget: number) =>
			Math.max(1, Math.min(3, Math.floor((WORKING_SET_SHARE * budget) / size)));

		it.each([16_000, 32_000, 64_000, 200_000])("a %d-token budget", (budget) => {
			for (const resultTokens of [500, 1_500, 3_000, 6_000, 12_000]) {
				const k = fitting(100 + resultTokens, budget);
				expect(sized(resultTokens, budget), `${resultTokens}-token results`).toBe(start(k));
			}
		});

		it("keeps three batches on a large budget, as without a measure", () => {
			expect(sized(3_000, 200_000)).toBe(workingSetStart(chapter, 3));
		});

		it("never drops the batch in progress, however large", () => {
			expect(sized(50_000, 16_000)).toBe(start(1));
		});

		it("a chapter without batches is kept from its user message", () => {
			const talk = [u, text, text];
			expect(workingSetStart(talk, 3, { budget: 16_000, tokensAt: () => 10_000 })).toBe(0);
		});
	});
});

describe("commitPolicy", () => {
	const thresholds = { ...DEFAULT_THRESHOLDS };
	const rates = { write: 5, read: 0.5 };
	const mark = (end: number, freed: number, prefixRewritten: number): WeighedMark => ({
		end,
		freed,
		prefixRewritten,
		choosable: true,
	});

	it("without rates, is exactly the band", () => {
		for (const tokens of [10_000, 79_999, 80_000, 95_000]) {
			const occupancy = occupancyOf(tokens, 100_000);
			const out = commitPolicy({
				thresholds,
				rates: undefined,
				cache: "warm",
				occupancy,
				marks: [mark(10, 50_000, 90_000)],
				workingSetStart: 20,
				growth: 2_000,
			});
			expect(out).toEqual({ need: commitNeed(occupancy, thresholds) });
		}
	});

	it("never counts or chooses a mark inside the working set, nor one it may not choose", () => {
		const marks = [
			mark(10, 30_000, 60_000),
			{ ...mark(12, 9_000, 30_000), choosable: false },
			mark(30, 20_000, 20_000),
		];
		const out = commitPolicy({
			thresholds,
			rates,
			cache: "cold",
			occupancy: occupancyOf(60_000, 100_000),
			marks,
			workingSetStart: 20,
			growth: 2_000,
		});
		expect(out.need).toBe(30_000);
		expect(out.eligibleEnd).toBe(20);
		expect(out.cost?.freed).toBe(30_000);
		expect(out.cost?.rewrite).toBe(30_000);
	});

	it("at the cap with too little outside the working set, lets the band fold whatever it must", () => {
		const occupancy = occupancyOf(85_000, 100_000);
		const out = commitPolicy({
			thresholds,
			rates,
			cache: "warm",
			occupancy,
			marks: [mark(10, 2_000, 80_000), mark(30, 40_000, 60_000)],
			workingSetStart: 20,
			growth: 2_000,
		});
		expect(out.need).toBe(commitNeed(occupancy, thresholds));
		expect(out.eligibleEnd).toBeUndefined();
	});

	it("at the cap, waits when every mark together could not bring the window under it (unless it could not be sent)", () => {
		const occupancy = occupancyOf(85_000, 100_000);
		const input = {
			thresholds,
			rates,
			cache: "warm" as const,
			occupancy,
			marks: [mark(10, 2_000, 80_000), mark(30, 1_500, 60_000)],
			workingSetStart: 20,
			growth: 2_000,
		};
		const out = commitPolicy({ ...input, holdLimit: 120_000 });
		expect(out.need).toBe(0);
		expect(out.held).toMatch(/cannot bring the window under the commit threshold/);
		expect(
			commitPolicy({ ...input, occupancy: occupancyOf(125_000, 100_000), holdLimit: 120_000 }).need,
		).toBeGreaterThan(0);
	});

	describe("right after a rewrite", () => {
		const input = (tokens: number, lastRewrote: boolean, withRates = true) => ({
			thresholds,
			rates: withRates ? rates : undefined,
			cache: "warm" as const,
			occupancy: occupancyOf(tokens, 100_000),
			marks: [mark(10, 50_000, 90_000)],
			workingSetStart: 20,
			growth: 2_000,
			holdLimit: 120_000,
			lastRewrote,
		});

		it("waits a request, past the cap and past the budget, under either policy", () => {
			for (const withRates of [true, false]) {
				for (const tokens of [85_000, 100_000, 120_000]) {
					expect(commitPolicy(input(tokens, false, withRates)).need, `${tokens} without a rewrite`).toBeGreaterThan(0);
					const held = commitPolicy(input(tokens, true, withRates));
					expect(held.need, `${tokens} after a rewrite`).toBe(0);
					expect(held.held).toMatch(/rewrote the window already/);
				}
			}
		});

		it("commits anyway when the next request could not be sent otherwise", () => {
			expect(commitPolicy(input(120_001, true)).need).toBeGreaterThan(0);
			expect(commitPolicy(input(120_001, true, false)).need).toBeGreaterThan(0);
		});
	});
});
