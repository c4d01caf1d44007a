// When a commit pays for itself. Between commits every request re-reads the whole window from the
// provider's prompt cache (at the cache-read rate) and writes only what was appended; a commit makes
// the window smaller for every request after it, but re-sends everything from its first changed
// entry on as a cache write. Those R tokens would have been read anyway, so the rewrite's extra
// cost is (write - read) per token, and what the turn just ended appended is not in R: the next
// request writes it with or without a commit. So a commit that frees F tokens and rewrites R tokens,
// in a session that grows by g tokens per request, runs a cycle: the window climbs back by F in F/g
// requests, each reading on average F/2 more than right after the commit, and the cycle pays one
// rewrite. Per request that is
//
//     read · F/2  +  (write - read) · R · g / F
//
// which is least at F* = sqrt(2 · ((write - read)/read) · R · g): the classic economic order quantity. A
// commit fires when the eligible marks free at least F*, and then folds all of them (a deeper fold
// only lowers both terms: less to read, and the same rewrite serves a longer cycle). When the cache
// is cold a rewrite costs nothing extra (the next request writes everything anyway), so any commit
// that frees enough to matter fires then. A provider that never reads anything back does not cache at
// all: nothing is kept by a stable prefix, but every commit is still a record, a receipt and a
// rewrite of the window, so there a commit waits until it frees a step of its own (`uncachedStep`).
// The serving budget stays a hard cap whatever the prices.
//
// Pure: the runtime measures the inputs and applies the decision.

/** Dollars per million tokens. */
export interface CacheRates {
	/** What a token costs the first time it is sent: the cache-write rate, or the input rate where writes cost nothing extra. */
	write: number;
	/** What a token read back from the prompt cache costs. */
	read: number;
}

/** A model's price card as Pi's catalog gives it (`model.cost`). */
interface PriceCardLike {
	input?: number;
	cacheRead?: number;
	cacheWrite?: number;
}

/** How the requests are cached: `long` retention writes at `longWrite` per input price when the provider charges so. */
export interface CacheTermsLike {
	retention: "short" | "long";
	/** The long retention's write price as a multiple of the input price (Anthropic's 1-hour writes: 2). */
	longWriteFactor?: number;
}

const rate = (x: unknown): number | undefined => (typeof x === "number" && Number.isFinite(x) && x > 0 ? x : undefined);

/**
 * The rates a commit is priced by, or undefined when the card cannot price one: no input price,
 * or no cache-read price below it (a model without prompt caching gains nothing from keeping the
 * prefix stable, and one with free reads loses nothing by it). Without rates the band decides.
 */
export function cacheRates(cost: PriceCardLike | undefined, terms?: CacheTermsLike): CacheRates | undefined {
	if (typeof cost !== "object" || cost === null) return undefined;
	const input = rate(cost.input);
	const read = rate(cost.cacheRead);
	if (input === undefined || read === undefined) return undefined;
	const longWrite = terms?.retention === "long" && terms.longWriteFactor ? input * terms.longWriteFactor : undefined;
	const write = longWrite ?? rate(cost.cacheWrite) ?? input;
	return read < write ? { write, read } : undefined;
}

/**
 * What the prompt cache holds for the next request: warm, cold (expired: the next request writes
 * everything anyway), or uncached (the provider never read anything back).
 */
export type CacheState = "warm" | "cold" | "uncached";

export interface CommitInput {
	rates: CacheRates;
	cache: CacheState;
	/** Calibrated tokens of the next request. */
	tokens: number;
	/** The most the window may hold before a commit, whatever the prices (the band's top). */
	cap: number;
	/** Calibrated tokens that folding every eligible mark would free. */
	freed: number;
	/** Calibrated tokens such a commit re-sends that the next request would have read: from its first changed entry on, after it, less what the last turn appended. */
	rewrite: number;
	/** Calibrated tokens a request adds to the window, measured over the session so far. */
	growth: number;
	/** Least tokens a commit must free to be worth a record, a receipt and a rewrite at all. */
	minFreed: number;
	/** Least tokens a commit must free when the provider does not cache (each commit is churn, and saves only reads of what it folds). */
	uncachedStep: number;
}

export interface CommitDecision {
	commit: boolean;
	/** Why it fires or waits, in a person's words. */
	why: string;
	/** F*: what a commit must free for its rewrite to pay off on a warm cache (tokens). */
	trigger: number;
	/** Dollars the rewrite costs above what the next request would have paid to read it (0 on a cold or uncached cache). */
	rewriteCost: number;
	/** Dollars each later request saves by reading `freed` tokens less (sending them, uncached). */
	savingPerRequest: number;
	/** Requests after the commit until the saving has paid for the rewrite. */
	breakEven: number;
}

const perToken = (dollarsPerMillion: number) => dollarsPerMillion / 1_000_000;

/** Dollars a rewritten token costs above reading it back. */
const extraWrite = (rates: CacheRates) => Math.max(0, rates.write - rates.read);

/** F* for these rates, rewrite size and growth (tokens); never below 1. */
export function commitTrigger(rates: CacheRates, rewrite: number, growth: number): number {
	const g = Math.max(1, growth);
	const r = Math.max(0, rewrite);
	return Math.max(1, Math.ceil(Math.sqrt((2 * extraWrite(rates) * r * g) / rates.read)));
}

/** Commit now, or wait; see the file's head for the arithmetic. */
export function decideCommit(input: CommitInput): CommitDecision {
	const { rates, cache, tokens, cap, freed, rewrite, growth, minFreed } = input;
	const trigger = cache === "uncached" ? Math.max(minFreed, input.uncachedStep) : commitTrigger(rates, rewrite, growth);
	const rewriteCost = cache === "warm" ? rewrite * perToken(extraWrite(rates)) : 0;
	const savingPerRequest = freed * perToken(cache === "uncached" ? rates.write : rates.read);
	const breakEven = savingPerRequest > 0 ? Math.ceil(rewriteCost / savingPerRequest) : Number.POSITIVE_INFINITY;
	const base = { trigger, rewriteCost, savingPerRequest, breakEven };
	const k = (n: number) => `${Math.round(n / 100) / 10}k`;
	if (tokens >= cap) return { ...base, commit: true, why: `the window reaches ${k(cap)}, the most it may hold` };
	if (freed < minFreed) {
		return { ...base, commit: false, why: `the marks past the raw working set free ${k(freed)}, too little to fold` };
	}
	if (cache === "cold") {
		return { ...base, commit: true, why: "the prompt cache is cold: a rewrite costs nothing extra now" };
	}
	if (cache === "uncached") {
		return freed >= trigger
			? {
					...base,
					commit: true,
					why: `the provider does not cache; the marks free ${k(freed)}, a step of ${k(trigger)}`,
				}
			: {
					...base,
					commit: false,
					why: `the provider does not cache; the marks free ${k(freed)}, a commit waits for ${k(trigger)}`,
				};
	}
	if (freed >= trigger) {
		return {
			...base,
			commit: true,
			why: `the marks free ${k(freed)}, past the ${k(trigger)} at which a rewrite of ${k(rewrite)} pays off`,
		};
	}
	return {
		...base,
		commit: false,
		why: `the marks free ${k(freed)}; a rewrite of ${k(rewrite)} pays off from ${k(trigger)}`,
	};
}

/**
 * Whether an idle refresh of the cache pays when the next request commits: the refresh reads the
 * whole window (`tokens`) back, and keeps warm only what lies before the commit's first change
 * (`kept`), worth its rewrite above a read, if a request comes before the entry expires (`chance`).
 */
export function refreshPays(rates: CacheRates, tokens: number, kept: number, chance: number): boolean {
	const refresh = rates.read * Math.max(0, tokens);
	const keeps = Math.max(0, Math.min(1, chance)) * extraWrite(rates) * Math.max(0, kept);
	return keeps >= refresh;
}
