// When a commit pays for itself. Between commits every request re-reads the whole window from the
// provider's prompt cache (at the cache-read rate) and writes only what was appended; a commit makes
// the window smaller for every request after it, but re-sends everything from its first changed
// entry on as a cache write. So a commit that frees F tokens and rewrites R tokens, in a session
// that grows by g tokens per request, runs a cycle: the window climbs back by F in F/g requests,
// each reading on average F/2 more than right after the commit, and the cycle pays one rewrite.
// Per request that is
//
//     read · F/2  +  write · R · g / F
//
// which is least at F* = sqrt(2 · (write/read) · R · g): the classic economic order quantity. A
// commit fires when the eligible marks free at least F*, and then folds all of them (a deeper fold
// only lowers both terms: less to read, and the same rewrite serves a longer cycle). When the cache
// is cold a rewrite costs nothing extra (the next request writes everything anyway), so any commit
// that frees enough to matter fires then. The serving budget stays a hard cap whatever the prices.
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

const rate = (x: unknown): number | undefined => (typeof x === "number" && Number.isFinite(x) && x > 0 ? x : undefined);

/**
 * The rates a commit is priced by, or undefined when the card cannot price one: no input price,
 * or no cache-read price below it (a model without prompt caching gains nothing from keeping the
 * prefix stable, and one with free reads loses nothing by it). Without rates the band decides.
 */
export function cacheRates(cost: PriceCardLike | undefined): CacheRates | undefined {
	if (typeof cost !== "object" || cost === null) return undefined;
	const input = rate(cost.input);
	const read = rate(cost.cacheRead);
	if (input === undefined || read === undefined) return undefined;
	const write = rate(cost.cacheWrite) ?? input;
	return read < write ? { write, read } : undefined;
}

/** What the prompt cache holds for the next request. */
export type CacheState = "warm" | "cold";

export interface CommitInput {
	rates: CacheRates;
	cache: CacheState;
	/** Calibrated tokens of the next request. */
	tokens: number;
	/** The most the window may hold before a commit, whatever the prices (the band's top). */
	cap: number;
	/** Calibrated tokens that folding every eligible mark would free. */
	freed: number;
	/** Calibrated tokens such a commit re-sends: the window from its first changed entry on, after it. */
	rewrite: number;
	/** Calibrated tokens a request adds to the window, measured over the session so far. */
	growth: number;
	/** Least tokens a commit must free to be worth a record, a receipt and a rewrite at all. */
	minFreed: number;
}

export interface CommitDecision {
	commit: boolean;
	/** Why it fires or waits, in a person's words. */
	why: string;
	/** F*: what a commit must free for its rewrite to pay off on a warm cache (tokens). */
	trigger: number;
	/** Dollars the rewrite costs above the requests' own writes (0 on a cold cache). */
	rewriteCost: number;
	/** Dollars each later request saves by reading `freed` tokens less. */
	savingPerRequest: number;
	/** Requests after the commit until the saving has paid for the rewrite. */
	breakEven: number;
}

const perToken = (dollarsPerMillion: number) => dollarsPerMillion / 1_000_000;

/** F* for these rates, rewrite size and growth (tokens); never below 1. */
export function commitTrigger(rates: CacheRates, rewrite: number, growth: number): number {
	const g = Math.max(1, growth);
	const r = Math.max(0, rewrite);
	return Math.max(1, Math.ceil(Math.sqrt((2 * rates.write * r * g) / rates.read)));
}

/** Commit now, or wait; see the file's head for the arithmetic. */
export function decideCommit(input: CommitInput): CommitDecision {
	const { rates, cache, tokens, cap, freed, rewrite, growth, minFreed } = input;
	const trigger = commitTrigger(rates, rewrite, growth);
	const rewriteCost = cache === "cold" ? 0 : rewrite * perToken(rates.write);
	const savingPerRequest = freed * perToken(rates.read);
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
