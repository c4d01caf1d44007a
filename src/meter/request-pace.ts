// The pace of the session as its requests show it: how much each request adds to the window, when
// the last one went out, and whether the provider's prompt cache still holds it. Fed by every
// request as it is sent and by the usage the provider reports back; read by the commit policy.

/** Pi's default retention when a model declares no cache lifetime: five minutes. */
const DEFAULT_CACHE_TTL_SECONDS = 300;

/** Weight of the newest request in the growth average: the session's recent pace counts most. */
const GROWTH_WEIGHT = 0.3;

/** Anthropic bills a 1-hour cache write at twice the input price (pi-ai's calculateCost does too). */
const ANTHROPIC_LONG_WRITE_FACTOR = 2;

/** How the requests to a model are cached: the retention Pi's providers use, its lifetime, and its write price. */
export interface CacheTerms {
	retention: "short" | "long";
	ttlSeconds: number;
	/** The long retention's write price as a multiple of the input price, where the card's cacheWrite is not it. */
	longWriteFactor?: number;
}

const seconds = (x: unknown): number | undefined =>
	typeof x === "number" && Number.isFinite(x) && x > 0 ? x : undefined;

/**
 * The cache terms of `model`'s requests: Pi's providers use the long retention when
 * PI_CACHE_RETENTION=long, else the short one; a model that declares only one lifetime has its
 * requests kept that long. A long Anthropic write costs twice the input price, not the card's
 * cacheWrite (the short write's).
 */
export function cacheTerms(model: unknown, env: Record<string, string | undefined> = process.env): CacheTerms {
	const m = model as { promptCache?: { short?: unknown; long?: unknown }; api?: unknown } | undefined;
	const short = seconds(m?.promptCache?.short);
	const long = seconds(m?.promptCache?.long);
	const wantsLong = env.PI_CACHE_RETENTION === "long" || (short === undefined && long !== undefined);
	if (wantsLong && long !== undefined) {
		return {
			retention: "long",
			ttlSeconds: long,
			...(m?.api === "anthropic-messages" ? { longWriteFactor: ANTHROPIC_LONG_WRITE_FACTOR } : {}),
		};
	}
	return { retention: "short", ttlSeconds: short ?? DEFAULT_CACHE_TTL_SECONDS };
}

/** The prompt cache lifetime of a model's requests (seconds; see cacheTerms), or Pi's default. */
export function cacheTtlSeconds(model: unknown, env?: Record<string, string | undefined>): number {
	return cacheTerms(model, env).ttlSeconds;
}

export type CacheVerdict =
	| { state: "warm" }
	| { state: "cold"; why: "expired"; idleSeconds: number; ttlSeconds: number }
	| { state: "cold"; why: "no cache reads" };

export class RequestPace {
	readonly #now: () => number;
	#growth: number | undefined;
	#lastTokens: number | undefined;
	/** When the last request went out, or Pi last refreshed its cache entry (ms). */
	#lastAt: number | undefined;
	/** Consecutive requests whose usage read nothing from the cache although the one before could be read. */
	#unread = 0;

	constructor(now: () => number = Date.now) {
		this.#now = now;
	}

	/**
	 * A request as it goes out: `tokens` its calibrated size; `appended` whether it is the previous
	 * one plus new messages (only those measure growth: a commit's request is smaller, not slower).
	 */
	sent(tokens: number, appended: boolean): void {
		if (appended && this.#lastTokens !== undefined && tokens >= this.#lastTokens) {
			const step = tokens - this.#lastTokens;
			this.#growth = this.#growth === undefined ? step : this.#growth + GROWTH_WEIGHT * (step - this.#growth);
		}
		this.#lastTokens = tokens;
		this.#lastAt = this.#now();
	}

	/** The provider's usage of a request: did it read anything back from the cache? */
	usage(usage: unknown): void {
		const u = usage as { cacheRead?: unknown; cacheWrite?: unknown; input?: unknown } | undefined;
		if (typeof u !== "object" || u === null) return;
		const read = typeof u.cacheRead === "number" ? u.cacheRead : 0;
		const fresh = (typeof u.input === "number" ? u.input : 0) + (typeof u.cacheWrite === "number" ? u.cacheWrite : 0);
		if (read > 0) this.#unread = 0;
		else if (fresh > 0) this.#unread++;
	}

	/** Pi refreshed the cache entry of the last request while idle. */
	warmed(): void {
		if (this.#lastAt !== undefined) this.#lastAt = this.#now();
	}

	/** Tokens a request adds to the window, on average lately; undefined before two requests. */
	get growth(): number | undefined {
		return this.#growth;
	}

	/** The calibrated size of the last request sent; undefined before one. */
	get lastTokens(): number | undefined {
		return this.#lastTokens;
	}

	/** When the last request went out (or was refreshed), ms by the pace's clock. */
	get lastAt(): number | undefined {
		return this.#lastAt;
	}

	/**
	 * What the cache holds for the next request: cold when the last request is older than the cache
	 * lifetime, or when the provider read nothing back on two requests in a row (the second repeated
	 * the first's prefix: a provider that caches would have read it, so this one does not cache).
	 */
	cache(ttlSeconds: number): CacheVerdict {
		if (this.#unread >= 2) return { state: "cold", why: "no cache reads" };
		if (this.#lastAt === undefined) return { state: "warm" };
		const idleSeconds = (this.#now() - this.#lastAt) / 1000;
		if (idleSeconds > ttlSeconds) return { state: "cold", why: "expired", idleSeconds, ttlSeconds };
		return { state: "warm" };
	}
}
