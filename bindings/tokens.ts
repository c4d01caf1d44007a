// Token estimation over the core (assembly/tokens.ts): o200k-calibrated estimates of UTF-8
// spans, one at a time or batched. Strings are UTF-8-encoded straight into Wasm memory.
import { type CoreInstance, describe, type Span } from "./instance.ts";

export interface TokensApi {
	/** Estimated tokens of one span: 0 when empty, at least 1 otherwise. */
	estimateTokens(text: Span): number;
	/** Estimated tokens of every span, in order. */
	estimateTokensBatch(spans: readonly Span[]): Uint32Array;
	/** Writes span i's estimate to out[offset + i]; returns the total (saturating at 2^32 - 1). */
	estimateTokensInto(spans: readonly Span[], out: Uint32Array, offset?: number): number;
}

/** The core's token-estimation exports (assembly/tokens.ts). */
export interface TokenExports {
	estimateTokens(ptr: number, len: number): number;
	estimateTokensBatch(data: number, offsets: number, count: number, out: number): number;
}

export function tokensApi(core: CoreInstance): TokensApi {
	const x = core.exports;

	function estimateTokensInto(spans: readonly Span[], out: Uint32Array, offset = 0): number {
		if (!Array.isArray(spans)) {
			throw new TypeError(`pi-fold core: estimateTokensInto needs an array of spans, got ${describe(spans)}`);
		}
		if (!(out instanceof Uint32Array)) {
			throw new TypeError(`pi-fold core: estimateTokensInto needs a Uint32Array output, got ${describe(out)}`);
		}
		if (!Number.isInteger(offset) || offset < 0 || offset + spans.length > out.length) {
			throw new RangeError(
				`pi-fold core: estimateTokensInto writes ${spans.length} estimate${spans.length === 1 ? "" : "s"} at offset ${offset}, output holds ${out.length}`,
			);
		}
		const p = core.packSpans(spans, 4); // throws TypeError naming a bad span before anything is written
		const total = x.estimateTokensBatch(p.data, p.offsets, p.count, p.out) >>> 0;
		const at = p.out >>> 2;
		out.set(core.u32.subarray(at, at + p.count), offset);
		return total;
	}

	return {
		estimateTokens(text) {
			const [ptr, len] = core.packOne(text, 0);
			return x.estimateTokens(ptr, len) >>> 0;
		},
		estimateTokensBatch(spans) {
			const out = new Uint32Array(Array.isArray(spans) ? spans.length : 0);
			estimateTokensInto(spans, out);
			return out;
		},
		estimateTokensInto,
	};
}
