// The chart's scale and labels, pure: an axis of round ticks sized by what is drawn, tick values
// a person reads at a glance (50k, 1.5M), and which of many labels along the x axis fit without
// overlapping.

/** The most intervals the y axis is cut into. */
const MOST_TICKS = 5;

/** Steps are 1, 2, 2.5 or 5 times a power of ten. */
const NICE = [1, 2, 2.5, 5] as const;

export interface Axis {
	/** The axis's top value: a whole number of steps. */
	top: number;
	step: number;
}

/** The smallest round step that covers `max` (tokens, dollars: any size above 0) in at most MOST_TICKS intervals, and the top it reaches. */
export function niceAxis(max: number): Axis {
	const target = max > 0 && Number.isFinite(max) ? max : 1;
	let power = 10 ** Math.floor(Math.log10(target / MOST_TICKS));
	for (;;) {
		for (const m of NICE) {
			const step = m * power;
			if (Math.ceil(target / step) <= MOST_TICKS) return { top: Math.ceil(target / step) * step, step };
		}
		power *= 10;
	}
}

/** Whether `n` is a round step: 1, 2, 2.5 or 5 times a power of ten. */
export function isNiceStep(n: number): boolean {
	if (!(n > 0)) return false;
	const power = 10 ** Math.floor(Math.log10(n));
	return NICE.some((m) => Math.abs(n - m * power) < 1e-9 * n) || Math.abs(n - 10 * power) < 1e-9 * n;
}

/** A tick value as a person reads it: 0, 500, 2.5k, 50k, 1.25M. */
export function tickLabel(n: number): string {
	const short = (v: number, unit: string) => `${Number(v.toFixed(2))}${unit}`;
	if (n >= 1_000_000) return short(n / 1_000_000, "M");
	if (n >= 1_000) return short(n / 1_000, "k");
	return String(Math.round(n));
}

/** A label placed along the x axis: where it starts and how wide it is. */
export interface Span {
	x: number;
	width: number;
}

/**
 * Which labels to draw, left to right: each one that starts at least `gap` after the last one
 * kept ends (the first always). `spans` in drawing order.
 */
export function labelsThatFit(spans: readonly Span[], gap: number): boolean[] {
	let end = Number.NEGATIVE_INFINITY;
	return spans.map((s) => {
		if (s.x < end + gap) return false;
		end = s.x + s.width;
		return true;
	});
}
