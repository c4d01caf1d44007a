// Dollars so far, request by request, under native compaction and under pi-fold as `pi-fold
// replay` prices them: the saving grows where the curves part. Under the window chart, its requests
// at the same x (same width and margins).
import type { NativeCurve } from "../view-data.ts";
import { axisTicks, PAD, W } from "./chart.ts";
import { niceAxis } from "./chart-scale.ts";
import { s, usd } from "./dom.ts";

const H = 130;
const TOP = 10;
const BOTTOM = 18;

/** Running sums. */
function cumulative(costs: readonly number[], n: number): number[] {
	const out: number[] = [];
	let sum = 0;
	for (let i = 0; i < n; i++) {
		sum += costs[i] ?? 0;
		out.push(sum);
	}
	return out;
}

export function costChart(curve: NativeCurve, requests: number): SVGElement {
	const native = cumulative(curve.native.costs, requests);
	const fold = cumulative(curve.fold.costs, requests);
	const axis = niceAxis(Math.max(native.at(-1) ?? 0, fold.at(-1) ?? 0) * 1.04);
	const plotW = W - PAD.left - PAD.right;
	const plotH = H - TOP - BOTTOM;
	const step = plotW / Math.max(1, requests);
	const x = (i: number) => PAD.left + i * step + step / 2;
	const y = (d: number) => TOP + plotH - (d / axis.top) * plotH;
	const svg = s("svg", {
		viewBox: `0 0 ${W} ${H}`,
		class: "cost-chart",
		role: "img",
		"aria-label": "dollars so far per request",
		"data-top": axis.top,
		"data-step": axis.step,
	});
	axisTicks(svg, axis, y, usd);
	const nativeHigher = (native.at(-1) ?? 0) >= (fold.at(-1) ?? 0);
	for (const [cls, sums, who, above] of [
		["native", native, "native compaction", nativeHigher],
		["fold", fold, "pi-fold", !nativeHigher],
	] as const) {
		const last = sums.at(-1) ?? 0;
		// The dearer one's label above its line's end, the other's below, so the two never meet.
		svg.append(
			s("polyline", {
				points: sums.map((d, i) => `${x(i).toFixed(1)},${y(d).toFixed(1)}`).join(" "),
				class: `${cls} spent`,
				"data-total": last,
			}),
			s(
				"text",
				{
					x: W - PAD.right - 4,
					y: above ? y(last) - 5 : y(last) + 13,
					"text-anchor": "end",
					class: `spent-label ${cls}`,
				},
				`${who}: ${usd(last)}`,
			),
		);
	}
	svg.append(
		s("text", { x: PAD.left + 4, y: TOP + 10, class: "axis" }, "dollars so far (replayed, at the prices below)"),
	);
	return svg;
}
