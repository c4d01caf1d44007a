// What prices a replay's requests. By default each request's own model, as Pi's catalog prices it,
// price tiers included (a tier prices the whole request once its prompt passes the tier's threshold,
// as pi-ai's calculateCost does), so the replay costs what that provider would bill; the default
// price card only for a model the catalog does not list or lists without a cost. `--price-card`
// prices everything; `--model` prices everything as that catalog model (the session as if it had
// run there). The report says, per recorded model, which was used.
import { cardOfModel, DEFAULT_PRICE_CARD, type PriceCard, type Pricing } from "../report/price-card.ts";
import type { CatalogLimits } from "./model-limits.ts";
import { type ModelRef, modelKeyOf, modelRefOf } from "./transcript.ts";

export interface ModelPrices {
	/** A recorded model, "provider/id". */
	model: string;
	/** Its requests in the recording (assistant messages). */
	requests: number;
	/** catalog: Pi's catalog entry of `pricedAs`; default: the default card (no catalog cost); --price-card. */
	source: "catalog" | "default" | "--price-card";
	/** The model whose prices applied (the recorded one, or --model's). */
	pricedAs: string;
	card: string;
}

interface ReplayPrices {
	pricing: PriceCard | Pricing;
	models: ModelPrices[];
}

/** The card of a catalog model, or the default card when the catalog has no cost for it. */
function catalogCard(ref: ModelRef, catalogs: ReadonlyMap<string, CatalogLimits>): PriceCard | undefined {
	const entry = catalogs.get(modelKeyOf(ref));
	return entry ? cardOfModel({ ...ref, ...(entry.cost ? { cost: entry.cost } : {}) }) : undefined;
}

/** Prices for the recorded `models` (request counts by "provider/id"). */
export function pricesOf(
	models: ReadonlyMap<string, number>,
	catalogs: ReadonlyMap<string, CatalogLimits>,
	opts: { card?: PriceCard; servedAs?: ModelRef },
): ReplayPrices {
	const cards = new Map<string, { card: PriceCard; source: ModelPrices["source"]; pricedAs: string }>();
	const servedCard = opts.servedAs ? catalogCard(opts.servedAs, catalogs) : undefined;
	for (const key of models.keys()) {
		const pricedAs = opts.servedAs ? modelKeyOf(opts.servedAs) : key;
		const own = opts.card ? undefined : opts.servedAs ? servedCard : catalogCard(modelRefOf(key), catalogs);
		const card = opts.card ?? own ?? DEFAULT_PRICE_CARD;
		cards.set(key, { card, source: opts.card ? "--price-card" : own ? "catalog" : "default", pricedAs });
	}
	const list: ModelPrices[] = [...models].map(([model, requests]) => {
		const c = cards.get(model) as { card: PriceCard; source: ModelPrices["source"]; pricedAs: string };
		return { model, requests, source: c.source, pricedAs: c.pricedAs, card: c.card.name };
	});
	const distinct = new Set(list.map((m) => m.card));
	const single = opts.card ?? (distinct.size === 1 ? cards.values().next().value?.card : undefined);
	if (single) return { pricing: single, models: list };
	return {
		pricing: {
			name: `each request at its model's prices (${list.map((m) => `${m.model}: ${m.source}`).join(", ")})`,
			// A request of a model the recording does not name (none: every turn's model is counted) gets the default.
			cardFor: (model) => (model === undefined ? undefined : cards.get(model)?.card) ?? DEFAULT_PRICE_CARD,
		},
		models: list,
	};
}
