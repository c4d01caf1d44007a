// The commit policy's arithmetic, pure: which cards it can price, that its trigger minimises the cost
// per request it models, when it fires (warm, cold, at the cap), and that the working set stays raw.
import { describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { commitNeed, occupancyOf } from "../src/meter/occupancy.ts";
import { cacheTerms } from "../src/meter/request-pace.ts";
import { commitPolicy, UNCACHED_STEP_SHARE, type WeighedMark } from "../src/policy/commit-policy.ts";
import { consolidationStart } from "../src/policy/consolidate.ts";
import { cacheRates, commitTrigger, decideCommit, refreshPays } from "../src/policy/cost-model.ts";
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

	it("prices a long retention's writes as the provider bills them, and a short one by the card", () => {
		const card = { input: 3, cacheRead: 0.3, cacheWrite: 3.75 };
		expect(cacheRates(card, { retention: "long", longWriteFactor: 2 })).toEqual({ write: 6, read: 0.3 });
		expect(cacheRates(card, { retention: "long" })).toEqual({ write: 3.75, read: 0.3 });
		expect(cacheRates(card, { retention: "short", longWriteFactor: 2 })).toEqual({ write: 3.75, read: 0.3 });
	});
});

describe("cacheTerms", () => {
	const anthropic = { api: "anthropic-messages", promptCache: { short: 300, long: 3600 } };

	it("reads the lifetime and the write price the requests will use", () => {
		expect(cacheTerms(anthropic, {})).toEqual({ retention: "short", ttlSeconds: 300 });
		expect(cacheTerms(anthropic, { PI_CACHE_RETENTION: "long" })).toEqual({
			retention: "long",
			ttlSeconds: 3600,
			longWriteFactor: 2,
		});
		// Another provider's long retention writes at the card's price; a model that declares only a long lifetime uses it.
		expect(cacheTerms({ api: "openai-responses", promptCache: { long: 86_400 } }, {})).toEqual({
			retention: "long",
			ttlSeconds: 86_400,
		});
	});

	it("falls back to the short lifetime, then to Pi's default of five minutes", () => {
		expect(cacheTerms({ promptCache: { short: 60 } }, { PI_CACHE_RETENTION: "long" })).toEqual({
			retention: "short",
			ttlSeconds: 60,
		});
		expect(cacheTerms(undefined, {})).toEqual({ retention: "short", ttlSeconds: 300 });
		expect(cacheTerms({ promptCache: { short: -1 } }, {})).toEqual({ retention: "short", ttlSeconds: 300 });
	});
});

describe("commitTrigger", () => {
	// What a cycle costs per request when a commit frees F (see cost-model.ts): reads of the growing
	// window above the landing level, and the rewrite (above reading those tokens) spread over the
	// F/g requests of the cycle.
	const perRequest = (F: number, write: number, read: number, R: number, g: number) =>
		(read * F) / 2 + ((write - read) * R * g) / F;

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
	const base = {
		rates,
		tokens: 50_000,
		cap: 160_000,
		rewrite: 10_000,
		growth: 3_000,
		minFreed: 2_000,
		uncachedStep: 16_000,
	};
	const trigger = commitTrigger(rates, 10_000, 3_000);

	it("on a warm cache, waits until the marks free the trigger, then fires", () => {
		expect(decideCommit({ ...base, cache: "warm", freed: trigger - 1 }).commit).toBe(false);
		const fires = decideCommit({ ...base, cache: "warm", freed: trigger });
		expect(fires.commit).toBe(true);
		// The rewritten tokens would have been read anyway: the rewrite costs write minus read.
		expect(fires.rewriteCost).toBeCloseTo(10_000 * 4.5e-6);
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

	it("with a provider that does not cache, waits for a step of its own, not one commit per turn", () => {
		const waits = decideCommit({ ...base, cache: "uncached", freed: base.uncachedStep - 1 });
		expect(waits.commit).toBe(false);
		expect(waits.why).toContain("does not cache");
		const fires = decideCommit({ ...base, cache: "uncached", freed: base.uncachedStep });
		expect(fires.commit).toBe(true);
		expect(fires.rewriteCost).toBe(0);
		// Uncached, every token sent is paid in full: the saving is at the write rate.
		expect(fires.savingPerRequest).toBeCloseTo(base.uncachedStep * 5e-6);
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
	const warm = (over: Partial<Parameters<typeof commitPolicy>[0]> = {}) =>
		commitPolicy({
			thresholds,
			rates,
			cache: "warm",
			occupancy: occupancyOf(60_000, 100_000),
			marks: [mark(10, 10_000, 40_000)],
			workingSetStart: 20,
			growth: 2_000,
			...over,
		});

	it("prices the rewrite without what the turn just ended appended: the next request writes it anyway", () => {
		expect(warm().cost?.rewrite).toBe(30_000);
		expect(warm({ appended: 4_000 }).cost?.rewrite).toBe(26_000);
		expect(warm({ appended: 90_000 }).cost?.rewrite).toBe(0);
	});

	it("prices a consolidation over older roots from its first root, and a peek's own mark wherever it is", () => {
		// A consolidation starting before the stalest mark re-sends the window from there.
		expect(warm({ consolidationRewritten: 55_000 }).cost?.rewrite).toBe(45_000);
		expect(warm({ consolidationRewritten: 20_000 }).cost?.rewrite).toBe(30_000);
		// A peek's mark inside the working set goes with every commit: counted in what it frees and re-sends.
		const peek = { ...mark(30, 3_000, 50_000), always: true };
		const out = warm({ marks: [mark(10, 10_000, 40_000), peek] });
		expect(out.cost?.freed).toBe(13_000);
		expect(out.cost?.rewrite).toBe(37_000);
		expect(out.cost?.kept).toBe(10_000);
	});

	it("with a provider that does not cache, steps by a tenth of the budget", () => {
		const budget = 100_000;
		const step = UNCACHED_STEP_SHARE * budget;
		expect(warm({ cache: "uncached", marks: [mark(10, step - 1, 40_000)] }).need).toBe(0);
		expect(warm({ cache: "uncached", marks: [mark(10, step, 40_000)] }).need).toBe(step);
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

		it("commits anyway when the cache expired: the next request is written whole, rewrite or not", () => {
			expect(commitPolicy({ ...input(60_000, true), cache: "cold" }).need).toBeGreaterThan(0);
			expect(commitPolicy({ ...input(60_000, true), cache: "uncached" }).need).toBe(0);
		});
	});
});

describe("consolidationStart", () => {
	const core = nodeCore();
	const root = (start: number, height = 1) => ({ start, end: start + 2, height, pinned: false });
	const roots = (n: number, height = 1) => Array.from({ length: n }, (_, i) => root(2 * i, height));
	const after = DEFAULT_THRESHOLDS.consolidateAfter;

	it("is undefined while the roots after the commit are few enough", () => {
		expect(consolidationStart(core, roots(after - 1), [root(2 * (after - 1))], after)).toBeUndefined();
	});

	it("names the first root a consolidation takes once the commit's marks push them past the limit", () => {
		const start = consolidationStart(core, roots(after), [root(2 * after)], after);
		expect(start).toBeDefined();
		expect(start).toBeLessThan(2 * after);
	});

	it("does not count a visible root a mark covers", () => {
		const visible = roots(after);
		const covering = { start: 0, end: 2 * after, height: 2, pinned: false };
		expect(consolidationStart(core, visible, [covering], after)).toBeUndefined();
	});
});

describe("refreshPays", () => {
	const rates = { write: 5, read: 0.5 };

	it("keeps a refresh whose kept prefix is worth more than reading the window back", () => {
		// Reading 100k costs 0.5 x 100k; keeping k tokens warm saves 4.5 x k, if a request comes.
		expect(refreshPays(rates, 100_000, 50_000, 1)).toBe(true);
		expect(refreshPays(rates, 100_000, 11_112, 1)).toBe(true);
		expect(refreshPays(rates, 100_000, 11_110, 1)).toBe(false);
	});

	it("weighs what it keeps by the chance that a request comes before the entry expires", () => {
		expect(refreshPays(rates, 100_000, 50_000, 0.15)).toBe(false);
		expect(refreshPays(rates, 100_000, 90_000, 0.15)).toBe(true);
		expect(refreshPays(rates, 100_000, 90_000, 0)).toBe(false);
	});
});
