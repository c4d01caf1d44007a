// The prefix-cache model, per policy: the leading messages a request shares with that policy's
// previous request (equal canonical JSON) are read from the cache, the rest is written to it
// (fresh input); a hidden prefix (provider-tokens.ts) is always read. Sizes are provider tokens
// (ProviderTokens), so the split is the provider's count of each part. A request later than the
// cache's lifetime after the one before it reads nothing back: the provider's entry expired.
import type { RequestRecord } from "../report/arm-report.ts";
import type { RequestMeter } from "./measure.ts";
import type { ProviderTokens } from "./provider-tokens.ts";

/** One request of a policy, as measured. */
export interface Measured {
	record: RequestRecord;
	/** Leading messages shared with the policy's previous request. */
	prefix: number;
	/** The previous request's messages are all a prefix of this one. */
	append: boolean;
}

export class PromptCache {
	readonly #meter: RequestMeter;
	readonly #tokens: ProviderTokens;
	readonly #ttlMs: number;
	#previous: readonly unknown[] | undefined;
	#previousAt: number | undefined;

	/** `ttlSeconds`: the cache's lifetime (infinite when omitted). */
	constructor(meter: RequestMeter, tokens: ProviderTokens, ttlSeconds = Number.POSITIVE_INFINITY) {
		this.#meter = meter;
		this.#tokens = tokens;
		this.#ttlMs = ttlSeconds * 1000;
	}

	/** Measure a work request carrying `messages` to `model` at time `at` (ms), answered with `output` tokens. */
	measure(messages: readonly unknown[], model: string, output: number, at = Number.NaN): Measured {
		const expired = this.#previousAt !== undefined && at - this.#previousAt > this.#ttlMs;
		this.#previousAt = Number.isFinite(at) ? at : this.#previousAt;
		const estimate = this.#meter.estimate(messages);
		const per = this.#tokens.perMessage(estimate, model);
		const promptTokens = this.#tokens.request(estimate, per, model);
		const prev = this.#previous;
		const prefix = prev ? this.#meter.sharedPrefix(prev, messages) : 0;
		let read = prev && !expired ? this.#tokens.hidden.real : 0;
		if (!expired) for (let i = 0; i < prefix; i++) read += per[i];
		const cacheRead = Math.min(promptTokens, Math.round(read));
		this.#previous = messages;
		return {
			record: { input: 0, cacheRead, cacheWrite: promptTokens - cacheRead, output, promptTokens, kind: "work", model },
			prefix,
			append: prev !== undefined && prefix === prev.length,
		};
	}
}

/** The usage a replayed answer carries: what the provider would have reported for the policy's request. */
export function usageOf(record: RequestRecord): {
	input: number;
	output: number;
	cacheRead: number;
	cacheWrite: number;
	totalTokens: number;
	cost: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
} {
	return {
		input: record.input,
		output: record.output,
		cacheRead: record.cacheRead,
		cacheWrite: record.cacheWrite,
		totalTokens: record.promptTokens + record.output,
		cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
	};
}
