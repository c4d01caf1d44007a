// Price cards: what one request costs, from the usage the provider reports for it.
//
// API (host-neutral; no Node APIs at load time):
// - `RequestUsage`: one request's usage — fresh `input`, `cacheRead`, `cacheWrite`, `output` tokens and
//   `promptTokens` (input + cacheRead + cacheWrite: the size of the prompt, which picks the tier).
// - `PriceCard`: dollars per million tokens for a base tier and optional long-context tiers that price
//   the WHOLE request (every token class) once its prompt exceeds their `abovePromptTokens`: `longContext`,
//   and `tiers` for further ones (a catalog model may have several; the highest one passed applies, as in
//   pi-ai's calculateCost).
// - `DEFAULT_PRICE_CARD`: $5 input, $0.50 cache read, $30 output per M; above 272k prompt tokens $10/$1/$45.
//   Cache writes are priced as fresh input (no write premium) unless a card sets `cacheWrite`.
// - `tierOf(promptTokens, card)`, `costOf(usage, card)`: the tier a request lands in and its cost in dollars.
// - `cardOfModel(model)`: a card from a Pi catalog model's `cost` (tiers included), or undefined without one.
// - `Pricing`: a card per request's model (a replay of a session that switched models); `costOf` and
//   `cardFor` take either.
// - `parsePriceCard(value, source)` / `parsePriceCardText(text, source)`: validate a card (JSON shape below),
//   throwing `PriceCardError` with the source and the exact field at fault; nothing is clamped or guessed.
// - `loadPriceCardFile(path)`: read and validate a JSON card file (Node only; fs is imported on call).
//
// JSON shape (all prices in $ per million tokens, non-negative; `cacheWrite` optional, defaults to `input`):
//   { "name"?: string, "input": 5, "cacheRead": 0.5, "cacheWrite"?: 5, "output": 30,
//     "longContext"?: { "abovePromptTokens": 272000, "input": 10, "cacheRead": 1, "cacheWrite"?: 10, "output": 45 } }
import { describeValue, errorMessage } from "../vocabulary.ts";

export interface RequestUsage {
	/** prompt tokens neither read from nor written to the cache */
	input: number;
	cacheRead: number;
	cacheWrite: number;
	output: number;
	/** input + cacheRead + cacheWrite */
	promptTokens: number;
}

/** Dollars per million tokens. */
interface PriceTier {
	input: number;
	cacheRead: number;
	cacheWrite: number;
	output: number;
}

interface LongContextTier extends PriceTier {
	/** a request whose prompt has MORE than this many tokens is priced at this tier, whole */
	abovePromptTokens: number;
}

export interface PriceCard {
	name: string;
	base: PriceTier;
	longContext?: LongContextTier;
	/** Further long-context tiers (any order); the highest `abovePromptTokens` a request passes prices it. */
	tiers?: readonly LongContextTier[];
}

/** Cards chosen per request, by the model the request went to ("provider/id"). */
export interface Pricing {
	name: string;
	cardFor(model: string | undefined): PriceCard;
}

export const DEFAULT_PRICE_CARD: PriceCard = Object.freeze({
	name: "default ($5 in / $0.50 cache read / $30 out per M; $10/$1/$45 above 272k; cache write = input)",
	base: Object.freeze({ input: 5, cacheRead: 0.5, cacheWrite: 5, output: 30 }),
	longContext: Object.freeze({ abovePromptTokens: 272_000, input: 10, cacheRead: 1, cacheWrite: 10, output: 45 }),
});

export class PriceCardError extends Error {
	override name = "PriceCardError";
}

/** The tier that prices a request with this many prompt tokens (the boundary itself stays in the base tier). */
export function tierOf(promptTokens: number, card: PriceCard = DEFAULT_PRICE_CARD): PriceTier {
	let tier: PriceTier = card.base;
	let passed = -1;
	for (const long of [...(card.longContext ? [card.longContext] : []), ...(card.tiers ?? [])]) {
		if (promptTokens > long.abovePromptTokens && long.abovePromptTokens > passed) {
			tier = long;
			passed = long.abovePromptTokens;
		}
	}
	return tier;
}

/** The card that prices a request to `model` (a Pricing's choice, or the one card). */
export function cardFor(prices: PriceCard | Pricing, model?: string): PriceCard {
	return "cardFor" in prices ? prices.cardFor(model) : prices;
}

/** Cost of one request in dollars (with a Pricing, at the card of the request's `model`). */
export function costOf(
	usage: RequestUsage & { model?: string },
	prices: PriceCard | Pricing = DEFAULT_PRICE_CARD,
): number {
	const t = tierOf(usage.promptTokens, cardFor(prices, usage.model));
	return (
		(usage.input * t.input +
			usage.cacheRead * t.cacheRead +
			usage.cacheWrite * t.cacheWrite +
			usage.output * t.output) /
		1e6
	);
}

const TIER_KEYS = ["input", "cacheRead", "cacheWrite", "output"] as const;

function isRecord(v: unknown): v is Record<string, unknown> {
	return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A card's field as a refusal names it: a number as written (a price), anything else described. */
function describe(v: unknown): string {
	return typeof v === "number" ? String(v) : describeValue(v, 40);
}

function parseTier(
	v: Record<string, unknown>,
	where: string,
	fail: (msg: string) => never,
	extra: string[],
): PriceTier {
	const allowed = new Set<string>([...TIER_KEYS, ...extra]);
	for (const key of Object.keys(v)) {
		if (!allowed.has(key)) fail(`${where}: unknown field "${key}" (allowed: ${[...allowed].join(", ")})`);
	}
	const price = (key: string, optional: boolean): number | undefined => {
		const x = v[key];
		if (x === undefined && optional) return undefined;
		if (typeof x !== "number" || !Number.isFinite(x) || x < 0) {
			fail(`${where}.${key} must be a non-negative number of dollars per million tokens, got ${describe(x)}`);
		}
		return x;
	};
	const input = price("input", false) as number;
	const cacheRead = price("cacheRead", false) as number;
	const output = price("output", false) as number;
	const cacheWrite = price("cacheWrite", true) ?? input;
	return { input, cacheRead, cacheWrite, output };
}

/** Validate a parsed JSON value as a price card. `source` names it in errors (a file path, "--price-card"...). */
export function parsePriceCard(value: unknown, source = "price card"): PriceCard {
	const fail = (msg: string): never => {
		throw new PriceCardError(`${source}: ${msg}`);
	};
	if (!isRecord(value)) fail(`must be a JSON object, got ${describe(value)}`);
	const v = value as Record<string, unknown>;
	if (v.name !== undefined && (typeof v.name !== "string" || v.name.trim() === "")) {
		fail(`name must be a non-empty string, got ${describe(v.name)}`);
	}
	const base = parseTier(v, "card", fail, ["name", "longContext"]);
	const card: PriceCard = { name: typeof v.name === "string" ? v.name : source, base };
	if (v.longContext !== undefined) {
		if (!isRecord(v.longContext)) fail(`longContext must be an object, got ${describe(v.longContext)}`);
		const lc = v.longContext as Record<string, unknown>;
		const above = lc.abovePromptTokens;
		if (typeof above !== "number" || !Number.isSafeInteger(above) || above <= 0) {
			fail(`longContext.abovePromptTokens must be a positive whole number of tokens, got ${describe(above)}`);
		}
		const tier = parseTier(lc, "longContext", fail, ["abovePromptTokens"]);
		card.longContext = { abovePromptTokens: above as number, ...tier };
	}
	return card;
}

/** Parse JSON text and validate it as a price card. */
export function parsePriceCardText(text: string, source = "price card"): PriceCard {
	let value: unknown;
	try {
		value = JSON.parse(text);
	} catch (e) {
		throw new PriceCardError(`${source}: not valid JSON (${errorMessage(e)})`);
	}
	return parsePriceCard(value, source);
}

/** Read and validate a JSON price card file (Node; fs is imported only when called, so browsers can load this module). */
export async function loadPriceCardFile(path: string): Promise<PriceCard> {
	const { readFile } = await import("node:fs/promises");
	let text: string;
	try {
		text = await readFile(path, "utf8");
	} catch (e) {
		const code = (e as { code?: string }).code;
		throw new PriceCardError(`${path}: cannot read the price card file (${code ?? (e as Error).message})`);
	}
	return parsePriceCardText(text, path);
}

/** What a card reads of a Pi catalog model: its id and `cost` ($ per M tokens, `tiers` by input tokens). */
interface CatalogModelCost {
	provider: string;
	id: string;
	cost?: {
		input?: number;
		output?: number;
		cacheRead?: number;
		cacheWrite?: number;
		tiers?: readonly {
			inputTokensAbove?: number;
			input?: number;
			output?: number;
			cacheRead?: number;
			cacheWrite?: number;
		}[];
	};
}

const money = (x: number) => `$${Number(x.toFixed(4))}`;

/** "$5 in / $0.5 cache read / $6.25 cache write / $25 out per M" (cache write left out when it is the input price). */
function ratesText(t: PriceTier): string {
	const write = t.cacheWrite === t.input ? "" : ` / ${money(t.cacheWrite)} cache write`;
	return `${money(t.input)} in / ${money(t.cacheRead)} cache read${write} / ${money(t.output)} out`;
}

/**
 * The card of a Pi catalog model, its price tiers included, or undefined when it declares no usable
 * cost. A catalog cache-write price of 0 means the provider bills no separate write (OpenAI, Google):
 * a prompt token it did not read from the cache is billed as input, so that is what the card's
 * cache writes (the part of a prompt not read from the cache) cost.
 */
export function cardOfModel(model: CatalogModelCost): PriceCard | undefined {
	const c = model.cost;
	const rate = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x) && x >= 0;
	const tierOfRates = (r: NonNullable<CatalogModelCost["cost"]>): PriceTier | undefined => {
		if (!rate(r.input) || !rate(r.output) || !rate(r.cacheRead)) return undefined;
		const write = rate(r.cacheWrite) && r.cacheWrite > 0 ? r.cacheWrite : r.input;
		return { input: r.input, cacheRead: r.cacheRead, cacheWrite: write, output: r.output };
	};
	if (!c) return undefined;
	const base = tierOfRates(c);
	if (!base || base.input + base.output + base.cacheRead === 0) return undefined;
	const tiers: LongContextTier[] = [];
	for (const t of c.tiers ?? []) {
		const rates = tierOfRates(t);
		const above = t.inputTokensAbove;
		if (rates && typeof above === "number" && Number.isSafeInteger(above) && above > 0) {
			tiers.push({ abovePromptTokens: above, ...rates });
		}
	}
	tiers.sort((a, b) => a.abovePromptTokens - b.abovePromptTokens);
	const tiersText = tiers.map((t) => `; ${ratesText(t)} above ${t.abovePromptTokens.toLocaleString("en-US")}`).join("");
	return {
		name: `${model.provider}/${model.id}'s own cost (${ratesText(base)} per M${tiersText})`,
		base,
		...(tiers.length > 0 ? { longContext: tiers[0] } : {}),
		...(tiers.length > 1 ? { tiers: tiers.slice(1) } : {}),
	};
}
