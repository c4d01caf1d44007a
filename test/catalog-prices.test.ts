// Prices from Pi's own catalog: a price card made from a catalog model's `cost` (price tiers
// included) bills every request as pi-ai's calculateCost bills it (the oracle), across the tier
// boundaries of every tiered chat model Pi 1.6 ships; a replay picks each recorded model's card and
// falls back to the default card only for a model the catalog cannot price.
import {
	calculateCost,
	InMemoryCredentialStore,
	InMemoryModelsStore,
	type Model,
	type Usage,
} from "@earendil-works/pi-ai";
import { ModelRuntime } from "@earendil-works/pi-coding-agent";
import { beforeAll, describe, expect, it } from "vitest";
import { pricesOf } from "../src/replay/prices.ts";
import { cardFor, cardOfModel, costOf, DEFAULT_PRICE_CARD, type PriceCard, tierOf } from "../src/report/price-card.ts";
import { seededInts } from "./helpers/seeded-ints.ts";

let models: readonly Model<string>[];
beforeAll(async () => {
	const runtime = await ModelRuntime.create({
		credentials: new InMemoryCredentialStore(),
		modelsStore: new InMemoryModelsStore(),
		modelsPath: null,
		refreshOnCreate: false,
		allowModelNetwork: false,
	});
	models = runtime.getModels();
});

/** pi-ai's usage for a request of `read` cached and `fresh` uncached prompt tokens, as that provider reports it. */
function piUsage(model: Model<string>, read: number, fresh: number, output: number): Usage {
	// A provider that bills no cache write reports the uncached prompt as input.
	const writes = model.cost.cacheWrite > 0;
	return {
		input: writes ? 0 : fresh,
		cacheRead: read,
		cacheWrite: writes ? fresh : 0,
		output,
		totalTokens: read + fresh + output,
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
	};
}

describe("a card from a catalog model", () => {
	it("bills what pi-ai's calculateCost bills, below, at and above every tier of every tiered chat model", () => {
		const tiered = models.filter((m) => (m.cost.tiers?.length ?? 0) > 0);
		expect(tiered.length).toBeGreaterThan(50);
		expect(tiered.some((m) => (m.cost.tiers?.length ?? 0) > 1)).toBe(true);
		const next = seededInts(14);
		for (const model of tiered) {
			const card = cardOfModel(model) as PriceCard;
			expect(card, `${model.provider}/${model.id}`).toBeDefined();
			const edges = (model.cost.tiers ?? []).flatMap((t) => [
				t.inputTokensAbove - 1,
				t.inputTokensAbove,
				t.inputTokensAbove + 1,
			]);
			for (const prompt of [1_000, ...edges]) {
				const read = Math.floor((prompt * next(1000)) / 1000);
				const fresh = prompt - read;
				const output = next(20_000);
				const expected = calculateCost(model, piUsage(model, read, fresh, output)).total;
				// The replay's record: every uncached prompt token is a cache write (prompt-cache.ts).
				const got = costOf({ input: 0, cacheRead: read, cacheWrite: fresh, output, promptTokens: prompt }, card);
				expect(got, `${model.provider}/${model.id} at ${prompt}`).toBeCloseTo(expected, 9);
			}
		}
	});

	it("names the model and its tiers; a model with no cost (or all zeros, as a faux one) has no card", () => {
		const gpt = models.find((m) => m.provider === "opencode" && m.id === "gpt-5.5") as Model<string>;
		expect(cardOfModel(gpt)?.name).toBe(
			"opencode/gpt-5.5's own cost ($5 in / $0.5 cache read / $30 out per M; $10 in / $1 cache read / $45 out above 272,000)",
		);
		expect(cardOfModel({ provider: "x", id: "y" })).toBeUndefined();
		expect(
			cardOfModel({ provider: "x", id: "y", cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } }),
		).toBeUndefined();
	});

	it("of several tiers, the highest one a request passes prices it whole", () => {
		const card: PriceCard = {
			name: "t",
			base: { input: 1, cacheRead: 0.1, cacheWrite: 1, output: 2 },
			longContext: { abovePromptTokens: 32_000, input: 2, cacheRead: 0.2, cacheWrite: 2, output: 4 },
			tiers: [{ abovePromptTokens: 128_000, input: 3, cacheRead: 0.3, cacheWrite: 3, output: 6 }],
		};
		expect(tierOf(32_000, card).input).toBe(1);
		expect(tierOf(32_001, card).input).toBe(2);
		expect(tierOf(128_000, card).input).toBe(2);
		expect(tierOf(128_001, card).input).toBe(3);
	});
});

describe("a replay's prices", () => {
	const byModel = new Map([
		["anthropic/claude-opus-4-5", 30],
		["acme/unknown-1", 2],
	]);
	const catalogOf = () =>
		new Map(
			models
				.filter(
					(m) =>
						`${m.provider}/${m.id}` === "anthropic/claude-opus-4-5" || `${m.provider}/${m.id}` === "opencode/gpt-5.5",
				)
				.map((m) => [
					`${m.provider}/${m.id}`,
					{ contextWindow: m.contextWindow, maxTokens: m.maxTokens, cost: m.cost },
				]),
		);

	it("each recorded model at its own catalog card, the default card only for an unknown one, and says which", () => {
		const p = pricesOf(byModel, catalogOf(), {});
		expect(p.models.map((m) => [m.model, m.requests, m.source])).toEqual([
			["anthropic/claude-opus-4-5", 30, "catalog"],
			["acme/unknown-1", 2, "default"],
		]);
		expect(cardFor(p.pricing, "anthropic/claude-opus-4-5").name).toMatch(/^anthropic\/claude-opus-4-5's own cost/);
		expect(cardFor(p.pricing, "acme/unknown-1")).toBe(DEFAULT_PRICE_CARD);
		expect(p.pricing.name).toContain("anthropic/claude-opus-4-5: catalog, acme/unknown-1: default");
	});

	it("--price-card prices everything; --model prices everything as that model", () => {
		const flat: PriceCard = { name: "flat", base: { input: 1, cacheRead: 1, cacheWrite: 1, output: 1 } };
		const card = pricesOf(byModel, catalogOf(), { card: flat });
		expect(card.pricing).toBe(flat);
		expect(card.models.every((m) => m.source === "--price-card" && m.card === "flat")).toBe(true);
		const as = pricesOf(byModel, catalogOf(), { servedAs: { provider: "opencode", id: "gpt-5.5" } });
		expect(as.models.every((m) => m.source === "catalog" && m.pricedAs === "opencode/gpt-5.5")).toBe(true);
		expect(cardFor(as.pricing, "acme/unknown-1").longContext?.abovePromptTokens).toBe(272_000);
	});
});
