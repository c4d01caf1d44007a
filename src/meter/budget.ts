// The serving budget: the one denominator of every share pi-fold reports, the size a commit aims
// below, and the limit the fence and expand's refusal hold to.
//
// `providerInputBudget` when the user gives one. Otherwise the smaller of two limits of the model:
// - the window minus an output reservation: the model's `maxTokens`, capped at OUTPUT_RESERVE_SHARE
//   of the window. Why not Pi's compaction `reserveTokens` (Pi compacts when tokens > window -
//   reserveTokens)? It is a setting of the compaction we replace, sized for a summary prompt and its
//   answer (default 16384: it would leave nothing of a 16k window), not a property of the model. The
//   provider needs room for the answer: pi-ai asks for `maxTokens` and only clamps it to the room
//   left, so reserving it keeps a full-length answer possible. Some models declare a maxTokens that
//   is a large part of the window (128k of 400k); the cap keeps most of the window for input, and the
//   commit at maxTarget leaves further headroom below the budget.
// - the first price tier: Pi's catalog carries `cost.tiers[]`, each billing a WHOLE request at its
//   rates once the request's input (input + cache read + cache write, as pi-ai's calculateCost
//   counts it) passes `inputTokensAbove`: 2x above 272,000 for gpt-5.x, 2x above 200,000 for
//   gemini-2.5-pro on a 1M window, 5x above 100,000 for claude-haiku-5-5. A request of exactly
//   `inputTokensAbove` is still billed at the base rates, so that is the budget. Output does not
//   count toward a tier, so no reservation comes off it. A tier that charges no more than the base
//   rates is no reason to stay below it and is ignored.
// - Pi's own compaction, which stays on underneath: it summarises the session once the context
//   passes the window minus its `reserveTokens` (16,384 by default), but only what lies beyond the
//   newest `keepRecentTokens` (20,000), so below that it has nothing to do. On a small window Pi's
//   threshold sits below the window's budget (32,000 - 16,384 = 15,616), and every turn above it Pi
//   would ask to compact and pi-fold would say no (Pi prints "Auto-compaction cancelled" each time):
//   the budget stays at or below where Pi acts, max(window - reserveTokens, keepRecentTokens).
// The budget is what pi-fold aims below, not a wall. What stops a request is the send limit: what
// the provider cannot take (the window minus the least answer worth asking for; pi-ai shrinks the
// answer to the room left), or providerInputBudget, a limit the person set.
// The model is read afresh each time it is asked for (ctx.model, which Pi swaps on /model), so a
// model switch moves the budget from the next decision on.

import type { PiCompactionSettings } from "../vocabulary.ts";

/** The output reservation never takes more than this share of the context window. */
export const OUTPUT_RESERVE_SHARE = 0.25;

/** Dollars per million tokens, as Pi's catalog gives them. */
interface PriceRates {
	input?: number;
	output?: number;
	cacheRead?: number;
	cacheWrite?: number;
}

/** One of a catalog model's `cost.tiers`: its rates price a whole request whose input passes `inputTokensAbove`. */
interface CostTier extends PriceRates {
	inputTokensAbove: number;
}

/** What the budget reads of a model (Pi's `Model`: contextWindow, maxTokens, cost). */
export interface ModelLimits {
	contextWindow: number;
	/** The model's output ceiling; 0 or absent means unknown. */
	maxTokens?: number;
	/** Pi's catalog cost; absent for a model that declares none. */
	cost?: PriceRates & { tiers?: readonly CostTier[] };
}

/** The price tier a budget stays below: its threshold and how much more it charges (its input rate over the base's). */
export interface PriceTierLimit {
	above: number;
	/** tier rate / base rate (input, else output); undefined when the base rate is 0 or unknown. */
	multiplier?: number;
}

/** Which limit sets the budget. */
export type BudgetLimit = "providerInputBudget" | "window" | "price tier" | "compaction";

/** Pi's compaction settings for the model (`compaction.reserveTokens`, `keepRecentTokens`), when it is enabled. */
export type PiCompaction = PiCompactionSettings;

/** Where Pi's compaction acts: max(window - reserveTokens, keepRecentTokens), with the settings behind it. */
export interface CompactionLimit extends PiCompaction {
	threshold: number;
}

/** Pi's compaction threshold binds the budget only from this share of the window's budget up. */
export const COMPACTION_LEAST_SHARE = 0.5;

/** The least answer a request past the budget must still leave room for in the window. */
export const ANSWER_FLOOR_TOKENS = 1024;

export type Budget =
	| {
			ok: true;
			budget: number;
			/** Tokens of the window kept for the answer (0 when providerInputBudget sets the budget). */
			reserve: number;
			source: "providerInputBudget" | "model";
			limit: BudgetLimit;
			/** The model's context window, when a model is known. */
			window?: number;
			/** The model's first price tier, when it has one (binding or not). */
			tier?: PriceTierLimit;
			/** Where Pi's own compaction acts, when it is enabled: max(window - reserveTokens, keepRecentTokens). */
			compaction?: CompactionLimit;
			/**
			 * The most a request may carry when nothing lossless can bring it under the budget: the window
			 * minus the least answer (or providerInputBudget, the person's limit). Past it a request is stopped.
			 */
			sendLimit: number;
	  }
	| { ok: false; reason: string };

const isRate = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x) && x >= 0;
const RATE_KEYS = ["input", "output", "cacheRead", "cacheWrite"] as const;

/** The lowest tier of `cost` that charges more than its base rates, or undefined. */
export function firstPriceTier(cost: ModelLimits["cost"]): PriceTierLimit | undefined {
	if (typeof cost !== "object" || cost === null || !Array.isArray(cost.tiers)) return undefined;
	let first: CostTier | undefined;
	for (const tier of cost.tiers as readonly CostTier[]) {
		if (typeof tier !== "object" || tier === null) continue;
		const above = tier.inputTokensAbove;
		if (!Number.isSafeInteger(above) || above < 1) continue;
		const dearer = RATE_KEYS.some(
			(k) => isRate(tier[k]) && (!isRate(cost[k]) || (tier[k] as number) > (cost[k] as number)),
		);
		if (dearer && (first === undefined || above < first.inputTokensAbove)) first = tier;
	}
	if (!first) return undefined;
	const ratio = (k: "input" | "output") =>
		isRate(cost[k]) && (cost[k] as number) > 0 && isRate(first[k])
			? (first[k] as number) / (cost[k] as number)
			: undefined;
	const multiplier = ratio("input") ?? ratio("output");
	return { above: first.inputTokensAbove, ...(multiplier === undefined ? {} : { multiplier }) };
}

/** Where Pi's compaction acts on a `window`, or undefined when its settings are not usable numbers. */
function compactionLimit(window: number, c: PiCompaction | undefined): CompactionLimit | undefined {
	if (!c) return undefined;
	const whole = (n: unknown) => typeof n === "number" && Number.isSafeInteger(n) && n >= 0;
	if (!whole(c.reserveTokens) || !whole(c.keepRecentTokens)) return undefined;
	const threshold = Math.max(window - c.reserveTokens, c.keepRecentTokens);
	return { reserveTokens: c.reserveTokens, keepRecentTokens: c.keepRecentTokens, threshold };
}

/**
 * The serving budget: the one denominator of every share pi-fold reports. `compaction`: Pi's
 * compaction settings for the model, when Pi compacts (absent: compaction off, or unknown).
 */
export function servingBudget(
	model: ModelLimits | undefined,
	providerInputBudget?: number,
	compaction?: PiCompaction,
): Budget {
	const window = model?.contextWindow;
	const knownWindow = Number.isSafeInteger(window) && (window as number) >= 1;
	const tier = model ? firstPriceTier(model.cost) : undefined;
	const pi = knownWindow ? compactionLimit(window as number, compaction) : undefined;
	const modelFacts = {
		...(knownWindow ? { window: window as number } : {}),
		...(tier ? { tier } : {}),
		...(pi ? { compaction: pi } : {}),
	};
	if (providerInputBudget !== undefined) {
		if (!Number.isSafeInteger(providerInputBudget) || providerInputBudget < 1) {
			return {
				ok: false,
				reason: `providerInputBudget must be a positive integer, got ${String(providerInputBudget)}`,
			};
		}
		return {
			ok: true,
			budget: providerInputBudget,
			reserve: 0,
			source: "providerInputBudget",
			limit: "providerInputBudget",
			...modelFacts,
			sendLimit: providerInputBudget,
		};
	}
	if (!model) return { ok: false, reason: "no model is selected and no providerInputBudget is given" };
	if (!knownWindow) {
		return { ok: false, reason: `the model's context window is not a positive integer (${String(window)})` };
	}
	const w = window as number;
	const cap = Math.floor(w * OUTPUT_RESERVE_SHARE);
	const declared = model.maxTokens;
	const reserve = Number.isSafeInteger(declared) && (declared as number) > 0 ? Math.min(declared as number, cap) : cap;
	const byWindow = w - reserve;
	const sendLimit = Math.max(byWindow, w - Math.min(reserve, ANSWER_FLOOR_TOKENS));
	const limits: [number, BudgetLimit][] = [[byWindow, "window"]];
	if (tier) limits.push([tier.above, "price tier"]);
	// A threshold below half of what the window holds is a setting where Pi compacts at almost every
	// turn: pi-fold would have no room to work in, so it folds within the window and declines instead.
	if (pi && pi.threshold >= byWindow * COMPACTION_LEAST_SHARE) limits.push([pi.threshold, "compaction"]);
	// The lowest binds; on a tie the window, then the tier, says why (the order above).
	let [budget, limit] = limits[0];
	for (const [b, l] of limits) if (b < budget) [budget, limit] = [b, l];
	return { ok: true, budget, reserve, source: "model", limit, ...modelFacts, sendLimit };
}

type Served = Extract<Budget, { ok: true }>;

const int = (n: number) => Math.round(n).toLocaleString("en-US");

/** "2x", "1.5x", "5x"; undefined when the multiplier is unknown. */
export function multiplierText(m: number | undefined): string | undefined {
	return m === undefined ? undefined : `${Number(m.toFixed(2))}x`;
}

/** "price tier 2x above 272,000" (or without the multiplier when the base rate is unknown). */
function tierText(t: PriceTierLimit, colon = false): string {
	const m = multiplierText(t.multiplier);
	return `price tier${colon ? ":" : ""} ${m ? `${m} ` : ""}above ${int(t.above)}`;
}

/**
 * Why the budget is what it is, e.g. "price tier: 2x above 272,000; window 400,000" or "window
 * 400,000 minus 4,096 reserved for output": which limit binds, and the others it was weighed against.
 */
export function budgetWhy(b: Served): string {
	const win = b.window === undefined ? undefined : `window ${int(b.window)}`;
	if (b.limit === "price tier" && b.tier) return [tierText(b.tier, true), win].filter(Boolean).join("; ");
	if (b.limit === "compaction" && b.compaction && b.window !== undefined) return compactionText(b.compaction, b.window);
	if (b.limit === "window") {
		const parts = [`${win} minus ${int(b.reserve)} reserved for output`];
		if (b.tier) parts.push(`${tierText(b.tier)} not reached`);
		return parts.join("; ");
	}
	const parts = ["providerInputBudget"];
	if (b.tier) {
		parts.push(
			b.budget > b.tier.above
				? `past the model's ${tierText(b.tier)}: larger requests cost ${multiplierText(b.tier.multiplier) ?? "more"}`
				: `model's ${tierText(b.tier)}`,
		);
	}
	if (win) parts.push(pastWindow(b) ? `larger than the model's ${win}: the provider refuses a request past it` : win);
	return parts.join("; ");
}

/** Where Pi's own compaction acts, and why there. */
function compactionText(c: CompactionLimit, window: number): string {
	const reserved = `window ${int(window)} minus reserveTokens ${int(c.reserveTokens)}`;
	if (c.threshold > window - c.reserveTokens) {
		return `Pi's compaction: it keeps the newest keepRecentTokens ${int(c.keepRecentTokens)} (${reserved} is below it)`;
	}
	return `Pi's compaction threshold: ${reserved}`;
}

/** A providerInputBudget larger than the model's context window: pi-fold would let requests grow past it. */
function pastWindow(b: Served): boolean {
	return b.source === "providerInputBudget" && b.window !== undefined && b.budget > b.window;
}

/**
 * What to tell the person when providerInputBudget is larger than `model`'s context window (it is
 * taken as given: the window of a model can change under a budget chosen for another), or undefined.
 */
export function pastWindowWarning(b: Budget, model: string): string | undefined {
	if (!b.ok || !pastWindow(b)) return undefined;
	const window = b.window as number;
	return (
		`providerInputBudget ${int(b.budget)} is larger than ${model}'s context window of ${int(window)}: pi-fold ` +
		`folds only as the window nears the budget, so requests can grow past what the provider accepts. Set ` +
		`providerInputBudget below ${int(window)}, or leave it out (the window minus the output reservation)`
	);
}

/** "272,000 (price tier: 2x above 272,000; window 400,000)". */
export function budgetText(b: Served): string {
	return `${int(b.budget)} (${budgetWhy(b)})`;
}
