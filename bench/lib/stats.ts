// Small statistics shared by the benchmarks.

/** The q-quantile of xs (nearest rank, no interpolation); NaN when empty. */
export function quantile(xs: readonly number[], q: number): number {
	const s = [...xs].sort((a, b) => a - b);
	return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

/** The middle value (the upper one of an even count); NaN when empty. */
export function median(xs: readonly number[]): number {
	return quantile(xs, 0.5);
}

export function round(x: number, digits = 3): number {
	return Number(x.toFixed(digits));
}

export function mean(xs: readonly number[]): number {
	return xs.length === 0 ? Number.NaN : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Median, p95 and max of a sample, rounded. */
export function spread(xs: readonly number[]): { medianMs: number; p95Ms: number; maxMs: number } {
	return {
		medianMs: round(quantile(xs, 0.5)),
		p95Ms: round(quantile(xs, 0.95)),
		maxMs: round(xs.length === 0 ? Number.NaN : Math.max(...xs)),
	};
}
