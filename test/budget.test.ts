// The serving budget: providerInputBudget when set, else the smaller of the window minus the output
// reservation and the model's first price tier (Pi's `cost.tiers`), with the wording status, the fold
// bar and the editor use to say which limit binds. Real catalog models and a real session's model too.
import { InMemoryCredentialStore, InMemoryModelsStore } from "@earendil-works/pi-ai";
import { ModelRuntime } from "@earendil-works/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAUX_MODEL, FAUX_PROVIDER, makeSession, removeTempDirs } from "../harness/pi-harness.ts";
import { piCompactionOf } from "../src/host/pi-compaction.ts";
import { type PiFold, registerPiFold } from "../src/index.ts";
import {
	ANSWER_FLOOR_TOKENS,
	budgetText,
	COMPACTION_LEAST_SHARE,
	firstPriceTier,
	type ModelLimits,
	OUTPUT_RESERVE_SHARE,
	type PiCompaction,
	pastWindowWarning,
	servingBudget,
} from "../src/meter/budget.ts";
import { fenceMessage } from "../src/meter/fence.ts";
import { limitText } from "../src/ui/fold-bar.ts";
import { recordingUi } from "./helpers/recording-ui.ts";

afterAll(removeTempDirs);

/** gpt-5.x's shape: $5/$0.50/$30 per M, the whole request at $10/$1/$45 above 272,000 input tokens. */
const GPT_COST = {
	input: 5,
	output: 30,
	cacheRead: 0.5,
	cacheWrite: 0,
	tiers: [{ inputTokensAbove: 272_000, input: 10, output: 45, cacheRead: 1, cacheWrite: 0 }],
};

const served = (model: ModelLimits | undefined, providerInputBudget?: number, pi?: PiCompaction) => {
	const b = servingBudget(model, providerInputBudget, pi);
	if (!b.ok) throw new Error(b.reason);
	return b;
};

describe("serving budget: the window", () => {
	it("is the context window minus the model's maxTokens when that is under the cap", () => {
		const b = servingBudget({ contextWindow: 128_000, maxTokens: 4096 });
		expect(b).toEqual({
			ok: true,
			budget: 128_000 - 4096,
			reserve: 4096,
			source: "model",
			limit: "window",
			window: 128_000,
			// What stops a request: the window less the least answer worth asking for.
			sendLimit: 128_000 - ANSWER_FLOOR_TOKENS,
		});
		expect(budgetText(served({ contextWindow: 128_000, maxTokens: 4096 }))).toBe(
			"123,904 (window 128,000 minus 4,096 reserved for output)",
		);
	});

	it("caps the output reservation at a share of the window, and uses the cap when maxTokens is unknown", () => {
		const window = 400_000;
		const cap = Math.floor(window * OUTPUT_RESERVE_SHARE);
		expect(servingBudget({ contextWindow: window, maxTokens: 128_000 })).toMatchObject({
			budget: window - cap,
			reserve: cap,
		});
		expect(servingBudget({ contextWindow: window })).toMatchObject({ budget: window - cap, reserve: cap });
		expect(servingBudget({ contextWindow: window, maxTokens: 0 })).toMatchObject({ budget: window - cap });
	});

	it("a model without cost, or with a cost without tiers, is held to its window", () => {
		for (const model of [
			{ contextWindow: 200_000, maxTokens: 8_000 },
			{ contextWindow: 200_000, maxTokens: 8_000, cost: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 } },
			{
				contextWindow: 200_000,
				maxTokens: 8_000,
				cost: { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25, tiers: [] },
			},
		]) {
			const b = served(model);
			expect(b).toMatchObject({ budget: 192_000, limit: "window" });
			expect(b.tier).toBeUndefined();
		}
	});

	it("refuses what cannot be a budget, with the reason", () => {
		expect(servingBudget({ contextWindow: 128_000 }, 0)).toMatchObject({
			ok: false,
			reason: expect.stringContaining("providerInputBudget"),
		});
		expect(servingBudget({ contextWindow: 128_000 }, 1.5)).toMatchObject({ ok: false });
		expect(servingBudget({ contextWindow: 0 })).toMatchObject({
			ok: false,
			reason: expect.stringContaining("context window"),
		});
		expect(servingBudget(undefined)).toMatchObject({ ok: false, reason: expect.stringContaining("no model") });
	});
});

describe("serving budget: price tiers", () => {
	it("a tier below the window binds: the budget is its threshold, said with its multiplier and the window", () => {
		const b = served({ contextWindow: 400_000, maxTokens: 128_000, cost: GPT_COST });
		expect(b).toEqual({
			ok: true,
			budget: 272_000,
			reserve: 100_000,
			source: "model",
			limit: "price tier",
			window: 400_000,
			tier: { above: 272_000, multiplier: 2 },
			// The tier is a price, not a wall: a request past it can still be sent.
			sendLimit: 400_000 - ANSWER_FLOOR_TOKENS,
		});
		expect(budgetText(b)).toBe("272,000 (price tier: 2x above 272,000; window 400,000)");
		expect(limitText(b)).toBe("price tier: 2x above; window 400k");
	});

	it("a tier at or above the window minus the reservation does not bind, and is named as not reached", () => {
		// openai/gpt-5.4's shape: a 272,000 window and a tier at 272,000: the window binds first.
		const atWindow = served({ contextWindow: 272_000, maxTokens: 128_000, cost: GPT_COST });
		expect(atWindow).toMatchObject({ budget: 272_000 - 68_000, limit: "window", tier: { above: 272_000 } });
		expect(budgetText(atWindow)).toBe(
			"204,000 (window 272,000 minus 68,000 reserved for output; price tier 2x above 272,000 not reached)",
		);
		// Just above the window's budget (400,000 - 4,096): still the window.
		const cost = { ...GPT_COST, tiers: [{ ...GPT_COST.tiers[0], inputTokensAbove: 396_000 }] };
		expect(served({ contextWindow: 400_000, maxTokens: 4_096, cost })).toMatchObject({
			budget: 395_904,
			limit: "window",
		});
		// One token lower, and the tier binds.
		const lower = { ...GPT_COST, tiers: [{ ...GPT_COST.tiers[0], inputTokensAbove: 395_903 }] };
		expect(served({ contextWindow: 400_000, maxTokens: 4_096, cost: lower })).toMatchObject({
			budget: 395_903,
			limit: "price tier",
		});
	});

	it("of several tiers, the lowest binds, in whatever order the catalog lists them", () => {
		const cost = {
			input: 0.25,
			output: 1.25,
			cacheRead: 0.05,
			cacheWrite: 0.3125,
			tiers: [
				{ inputTokensAbove: 128_000, input: 0.52, output: 2.6, cacheRead: 0.104, cacheWrite: 0.65 },
				{ inputTokensAbove: 32_000, input: 0.325, output: 1.625, cacheRead: 0.065, cacheWrite: 0.40625 },
			],
		};
		const b = served({ contextWindow: 1_000_000, maxTokens: 65_536, cost });
		expect(b).toMatchObject({ budget: 32_000, limit: "price tier", tier: { above: 32_000, multiplier: 1.3 } });
		expect(budgetText(b)).toBe("32,000 (price tier: 1.3x above 32,000; window 1,000,000)");
	});

	it("a tier that charges no more, or has no usable threshold, is no limit; an unknown base rate loses the multiplier", () => {
		const base = { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 5 };
		const same = { ...base, tiers: [{ inputTokensAbove: 50_000, ...base }] };
		const cheaper = {
			...base,
			tiers: [{ inputTokensAbove: 50_000, input: 4, output: 20, cacheRead: 0.4, cacheWrite: 4 }],
		};
		const broken = { ...base, tiers: [{ inputTokensAbove: -1, input: 10, output: 60, cacheRead: 1, cacheWrite: 10 }] };
		for (const cost of [same, cheaper, broken]) {
			expect(firstPriceTier(cost)).toBeUndefined();
			expect(served({ contextWindow: 100_000, maxTokens: 4_000, cost })).toMatchObject({
				limit: "window",
				budget: 96_000,
			});
		}
		const free = {
			input: 0,
			output: 0,
			cacheRead: 0,
			cacheWrite: 0,
			tiers: [{ inputTokensAbove: 50_000, input: 1, output: 2, cacheRead: 0, cacheWrite: 0 }],
		};
		const b = served({ contextWindow: 100_000, maxTokens: 4_000, cost: free });
		expect(b).toMatchObject({ budget: 50_000, limit: "price tier", tier: { above: 50_000 } });
		expect(b.tier?.multiplier).toBeUndefined();
		expect(budgetText(b)).toBe("50,000 (price tier: above 50,000; window 100,000)");
	});

	it("providerInputBudget wins whatever the model says, and the wording says what it passes", () => {
		const model = { contextWindow: 400_000, maxTokens: 128_000, cost: GPT_COST };
		const above = served(model, 350_000);
		expect(above).toEqual({
			ok: true,
			budget: 350_000,
			reserve: 0,
			source: "providerInputBudget",
			limit: "providerInputBudget",
			window: 400_000,
			tier: { above: 272_000, multiplier: 2 },
			// The person's limit is a hard one.
			sendLimit: 350_000,
		});
		expect(budgetText(above)).toBe(
			"350,000 (providerInputBudget; past the model's price tier 2x above 272,000: larger requests cost 2x; window 400,000)",
		);
		expect(budgetText(served(model, 100_000))).toBe(
			"100,000 (providerInputBudget; model's price tier 2x above 272,000; window 400,000)",
		);
		expect(limitText(above)).toBe("providerInputBudget; window 400k");
		expect(served(undefined, 50_000)).toMatchObject({ budget: 50_000, limit: "providerInputBudget" });
		expect(budgetText(served(undefined, 50_000))).toBe("50,000 (providerInputBudget)");
	});
});

describe("Pi's compaction threshold", () => {
	const pi = { reserveTokens: 16_384, keepRecentTokens: 20_000 };

	it("binds where it sits below the window's budget: where Pi compacts, with its keepRecentTokens as the floor", () => {
		// 64k: Pi acts past 64,000 - 16,384; 32k: past the newest 20,000 (32,000 - 16,384 is below it).
		for (const window of [64_000, 32_000]) {
			const b = served({ contextWindow: window, maxTokens: 4_096 }, undefined, pi);
			const threshold = Math.max(window - pi.reserveTokens, pi.keepRecentTokens);
			expect(b).toMatchObject({ budget: threshold, limit: "compaction", compaction: { ...pi, threshold } });
			expect(b.sendLimit).toBe(window - ANSWER_FLOOR_TOKENS);
		}
		expect(budgetText(served({ contextWindow: 64_000, maxTokens: 4_096 }, undefined, pi))).toBe(
			"47,616 (Pi's compaction threshold: window 64,000 minus reserveTokens 16,384)",
		);
		expect(budgetText(served({ contextWindow: 32_000, maxTokens: 4_096 }, undefined, pi))).toBe(
			"20,000 (Pi's compaction: it keeps the newest keepRecentTokens 20,000 (window 32,000 minus reserveTokens 16,384 is below it))",
		);
	});

	it("does not bind where the window or a tier is lower, nor when Pi's compaction is off, nor over providerInputBudget", () => {
		// A 20k window: Pi has nothing to summarise below its 20,000 recent tokens; the window binds.
		expect(served({ contextWindow: 20_000, maxTokens: 2_000 }, undefined, pi)).toMatchObject({
			budget: 18_000,
			limit: "window",
		});
		expect(served({ contextWindow: 400_000, maxTokens: 128_000, cost: GPT_COST }, undefined, pi)).toMatchObject({
			budget: 272_000,
			limit: "price tier",
		});
		expect(served({ contextWindow: 64_000, maxTokens: 4_096 })).toMatchObject({ budget: 59_904, limit: "window" });
		expect(served({ contextWindow: 64_000, maxTokens: 4_096 }, 60_000, pi)).toMatchObject({
			budget: 60_000,
			limit: "providerInputBudget",
		});
	});

	it("does not bind where Pi would compact at almost every turn: below half of what the window holds", () => {
		// keepRecentTokens 2,000 on a 16k window: Pi acts past 2,000, far below the window's 14,000.
		const low = { reserveTokens: 16_384, keepRecentTokens: 2_000 };
		expect(served({ contextWindow: 16_000, maxTokens: 2_000 }, undefined, low)).toMatchObject({
			budget: 14_000,
			limit: "window",
			compaction: { threshold: 2_000 },
		});
		const half = { reserveTokens: 16_000 - 7_000, keepRecentTokens: 2_000 };
		expect(served({ contextWindow: 16_000, maxTokens: 2_000 }, undefined, half)).toMatchObject({
			budget: 14_000 * COMPACTION_LEAST_SHARE,
			limit: "compaction",
		});
	});

	it("agrees with Pi's own settings reader: model overrides, then the setting, then Pi's defaults; off is off", () => {
		const model = { provider: "acme", id: "m1" };
		expect(piCompactionOf({}, model)).toEqual(pi);
		expect(piCompactionOf({ compaction: { reserveTokens: 4_000 } }, model)).toEqual({ ...pi, reserveTokens: 4_000 });
		expect(
			piCompactionOf(
				{ compaction: { reserveTokens: 4_000, modelOverrides: { "acme/m1": { keepRecentTokens: 8_000 } } } },
				model,
			),
		).toEqual({ reserveTokens: 4_000, keepRecentTokens: 8_000 });
		expect(piCompactionOf({ compaction: { enabled: false } }, model)).toBeUndefined();
		// Values Pi itself refuses count as absent.
		expect(piCompactionOf({ compaction: { reserveTokens: -1, keepRecentTokens: "x" } }, model)).toEqual(pi);
	});
});

describe("the fence names the limit it holds to", () => {
	it("the window: what it can take with room for an answer, and that Pi's compaction did not run", () => {
		const b = served({ contextWindow: 20_000, maxTokens: 2_000 });
		const text = fenceMessage({
			tokens: 19_500,
			sendLimit: b.sendLimit,
			pendingMarks: 0,
			why: budgetText(b),
			limit: b.limit,
			window: 20_000,
			compaction: "compaction is off in Pi's settings",
		});
		expect(text).toContain(
			"would exceed what the model's window of 20,000 can take with room for an answer (18,976) by ~524",
		);
		expect(text).toContain("Pi's compaction did not run: compaction is off in Pi's settings");
		expect(text).not.toContain("providerInputBudget");
	});

	it("providerInputBudget: the person's own limit", () => {
		const b = served({ contextWindow: 128_000, maxTokens: 4_096 }, 6_000);
		const text = fenceMessage({ tokens: 6_500, sendLimit: b.sendLimit, pendingMarks: 2, limit: b.limit });
		expect(text).toContain("would exceed your providerInputBudget of 6,000 by ~500");
		expect(text).toContain("2 staged marks could not be folded before it");
	});
});

describe("serving budget of Pi's own catalog models", () => {
	let runtime: ModelRuntime;
	beforeAll(async () => {
		runtime = await ModelRuntime.create({
			credentials: new InMemoryCredentialStore(),
			modelsStore: new InMemoryModelsStore(),
			modelsPath: null,
			refreshOnCreate: false,
			allowModelNetwork: false,
		});
	});

	it.each([
		["opencode", "gpt-5.5", 272_000, "price tier: 2x above 272,000; window 1,050,000"],
		["google", "gemini-2.5-pro", 200_000, "price tier: 2x above 200,000; window 1,048,576"],
		["anthropic", "claude-haiku-5-5", 100_000, "price tier: 5x above 100,000; window 1,000,000"],
		["anthropic", "claude-opus-4-5", 150_000, "window 200,000 minus 50,000 reserved for output"],
	])("%s/%s: %d", (provider, id, budget, why) => {
		const model = runtime.getModel(provider, id);
		expect(model, `${provider}/${id} in Pi's catalog`).toBeDefined();
		const b = served(model);
		expect(b.budget).toBe(budget);
		expect(budgetText(b)).toBe(`${budget.toLocaleString("en-US")} (${why})`);
	});
});

describe("serving budget of a session's model", () => {
	it("follows the model Pi serves, its price tiers included", async () => {
		const h = await makeSession({ contextWindow: 400_000, maxTokens: 4_096, cost: { ...GPT_COST, cacheWrite: 5 } });
		try {
			const model = h.session.model;
			expect(model?.cost.tiers).toHaveLength(1);
			expect(served(model)).toMatchObject({ budget: 272_000, limit: "price tier", window: 400_000 });
			expect(served(model, 20_000)).toMatchObject({ budget: 20_000, limit: "providerInputBudget" });
		} finally {
			h.dispose();
		}
	});
});

describe("a providerInputBudget larger than the model's window", () => {
	it("is taken as given, and every explanation of the budget says the provider refuses past the window", () => {
		const model = { contextWindow: 400_000, maxTokens: 128_000 };
		const past = served(model, 500_000);
		expect(past).toMatchObject({ budget: 500_000, limit: "providerInputBudget", window: 400_000 });
		expect(budgetText(past)).toBe(
			"500,000 (providerInputBudget; larger than the model's window 400,000: the provider refuses a request past it)",
		);
		expect(pastWindowWarning(past, "acme/big")).toMatch(
			/^providerInputBudget 500,000 is larger than acme\/big's context window of 400,000: .* Set providerInputBudget below 400,000/,
		);
		// At or under the window, or set by the model, there is nothing to say.
		expect(pastWindowWarning(served(model, 400_000), "acme/big")).toBeUndefined();
		expect(pastWindowWarning(served(model), "acme/big")).toBeUndefined();
		expect(pastWindowWarning(served(undefined, 500_000), "(no model)")).toBeUndefined();
	});

	it("inside Pi: one notice to the person and one line in status, when the session starts", async () => {
		const run = async (providerInputBudget: number) => {
			let fold: PiFold | undefined;
			const h = await makeSession({
				contextWindow: 16_000,
				extensions: [
					(pi) => {
						fold = registerPiFold(pi, { providerInputBudget });
					},
				],
			});
			try {
				const ui = recordingUi();
				await h.session.bindExtensions({ uiContext: ui.ui });
				const problems = fold?.runtime.get()?.status().problems ?? [];
				return { notes: ui.notes, problems };
			} finally {
				h.dispose();
			}
		};
		const model = `${FAUX_PROVIDER}/${FAUX_MODEL}`;
		const past = await run(20_000);
		const said = `providerInputBudget 20,000 is larger than ${model}'s context window of 16,000`;
		expect(past.notes.filter((n) => n.message.includes(said))).toEqual([expect.objectContaining({ type: "warning" })]);
		expect(past.problems.filter((p) => p.startsWith(`budget: ${said}`))).toHaveLength(1);
		const within = await run(12_000);
		expect(within.notes.filter((n) => n.message.includes("providerInputBudget"))).toEqual([]);
		expect(within.problems).toEqual([]);
	});
});
