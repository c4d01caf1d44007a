// The window over the session: one stacked bar per request (what was raw, pending, shown as
// briefs or summaries, and the rest of the prompt the provider billed), the commits as marks, and
// what `pi-fold replay` computes beside it: native compaction's curve and, for a session pi-fold
// never folded, the pi-fold curve with its commits. The y axis is sized by the bars and curves, in
// round steps; lines far above them (the "with nothing folded" line of a long session, a budget of
// a large window) are capped or left off, and the legend says so.
import type { NativeAnswer, NativeCurve, RequestPoint, ViewData } from "../view-data.ts";
import { type Axis, labelsThatFit, niceAxis, tickLabel } from "./chart-scale.ts";
import { num, s, usd } from "./dom.ts";

export const W = 1000;
const H = 290;
/** The plot's margins; the cost chart below uses the same left and right, so their requests line up. */
export const PAD = { left: 52, right: 12, top: 18, bottom: 28 };

/** Lines (budget, threshold, price tier) are drawn when within this factor of the tallest bar or curve. */
const LINE_REACH = 1.5;
/** The "with nothing folded" line sizes the axis only within this factor of the tallest bar or curve; past it, it is capped. */
const UNFOLDED_REACH = 2;
/** A commit label's width per character and the least gap between two labels (viewBox units; labels are 10px). */
const LABEL_CHAR = 6.5;
const LABEL_GAP = 4;

export const PARTS = [
	["raw", "raw entries"],
	["pending", "pending (marked, folds at the next commit)"],
	["folded", "briefs of folded spans"],
	["summary", "compaction summaries"],
	["other", "rest of the prompt (system, tools) as billed"],
] as const;

type Part = (typeof PARTS)[number][0];

function partsOf(r: RequestPoint): Record<Part, number> {
	const shown = r.raw + r.pending + r.folded + r.summary;
	const other = r.billed !== undefined && r.billed > shown ? r.billed - shown : 0;
	return { raw: r.raw, pending: r.pending, folded: r.folded, summary: r.summary, other };
}

/** A request's bar: everything it carried. */
export const barTotal = (r: RequestPoint) => Object.values(partsOf(r)).reduce((a, b) => a + b, 0);

/** The request with what folds and compactions kept out put back (an estimate: the originals' size). */
const unfolded = (r: RequestPoint) => barTotal(r) - r.folded - r.summary + r.hidden;

/** A line across the chart at one size. */
export interface Limit {
	tokens: number;
	label: string;
	cls: string;
	anchor: "start" | "middle" | "end";
}

/** A commit mark: the first request that carries it, and what its tooltip says. */
interface Mark {
	request: number;
	title: string;
}

/** What the chart draws, decided before drawing: the legend tells the same. */
export interface ChartPlan {
	axis: Axis;
	/** The tallest bar or curve drawn. */
	drawn: number;
	/** The commits marked: the session's own, or (a session never folded) the replayed pi-fold's. */
	marks: Mark[];
	replayedCommits: boolean;
	/** The replayed pi-fold curve, drawn for a session pi-fold never folded. */
	foldCurve?: number[];
	limits: Limit[];
	/** Lines left off: above the axis by more than LINE_REACH. */
	offScale: Limit[];
	/** The "with nothing folded" line's peak, and whether it is capped at the axis top. */
	unfoldedPeak: number;
	unfoldedCapped: boolean;
}

const ready = (native: NativeAnswer): NativeCurve | undefined => (native.state === "ready" ? native : undefined);

const sizes = (before: number | undefined, after: number | undefined) =>
	before !== undefined && after !== undefined ? `: ${num(before)} → ${num(after)} tokens` : "";

export function chartPlan(view: ViewData, native: NativeAnswer): ChartPlan {
	const reqs = view.requests;
	const curve = ready(native);
	const n = reqs.length;
	const replayedCommits = view.commits.length === 0 && curve !== undefined;
	const foldCurve = replayedCommits ? curve.fold.prompts.slice(0, n) : undefined;
	const marks: Mark[] = replayedCommits
		? curve.fold.rewrites
				.filter((c) => c.request < n)
				.map((c, k) => ({ request: c.request, title: `pi-fold commit ${k + 1} (replayed)${sizes(c.before, c.after)}` }))
		: view.commits.map((c, k) => ({
				request: c.request,
				title: `commit ${k + 1}, ${c.folds.length} folds${sizes(c.before, c.after)}`,
			}));
	const drawn = Math.max(1, ...reqs.map(barTotal), ...(curve?.native.prompts.slice(0, n) ?? []), ...(foldCurve ?? []));
	const candidates: Limit[] = [];
	// The budget the session ran with (its receipts say it); else the one the replay works out.
	const ran = reqs.findLast((r) => r.budget !== undefined)?.budget;
	const budget = ran ?? curve?.budget;
	const tierIsBudget = curve?.priceTier !== undefined && curve.priceTier.tokens === budget;
	if (budget !== undefined) {
		const whose = ran !== undefined ? "pi-fold's serving budget" : "pi-fold's serving budget (replayed)";
		candidates.push({
			tokens: budget,
			label: `${whose} ${num(budget)}${tierIsBudget ? " (the price tier)" : ""}`,
			cls: "budget",
			anchor: "end",
		});
	}
	if (curve) {
		candidates.push({
			tokens: curve.threshold,
			label: `native compacts above ${num(curve.threshold)}`,
			cls: "threshold",
			anchor: "start",
		});
		if (curve.priceTier && !tierIsBudget)
			candidates.push({ tokens: curve.priceTier.tokens, label: curve.priceTier.label, cls: "tier", anchor: "middle" });
	}
	const limits = candidates.filter((l) => l.tokens <= LINE_REACH * drawn);
	const offScale = candidates.filter((l) => l.tokens > LINE_REACH * drawn);
	const unfoldedPeak = Math.max(0, ...reqs.map(unfolded));
	const unfoldedCapped = unfoldedPeak > UNFOLDED_REACH * drawn;
	const top = Math.max(drawn, ...limits.map((l) => l.tokens), unfoldedCapped ? 0 : unfoldedPeak);
	// A little headroom, so the tallest bar does not touch the commit labels.
	const axis = niceAxis(Math.max(1, top * 1.04));
	return {
		axis,
		drawn,
		marks,
		replayedCommits,
		...(foldCurve ? { foldCurve } : {}),
		limits,
		offScale,
		unfoldedPeak,
		unfoldedCapped,
	};
}

/** The chart's scales: request index to x, tokens to y (capped at the axis top). */
interface Plot {
	step: number;
	x(i: number): number;
	y(tokens: number): number;
}

function plotOf(requests: number, top: number): Plot {
	const plotW = W - PAD.left - PAD.right;
	const plotH = H - PAD.top - PAD.bottom;
	const step = plotW / Math.max(1, requests);
	return { step, x: (i) => PAD.left + i * step, y: (t) => PAD.top + plotH - (Math.min(t, top) / top) * plotH };
}

/** A grid line and its tick label at every step of `axis` (the window chart and the cost chart alike). */
export function axisTicks(
	svg: SVGElement,
	axis: { top: number; step: number },
	y: (value: number) => number,
	label: (value: number) => string,
): void {
	for (let k = 0; k * axis.step <= axis.top * (1 + 1e-9); k++) {
		const v = k * axis.step;
		svg.append(s("line", { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: "grid" }));
		svg.append(
			s("text", { x: PAD.left - 6, y: y(v) + 4, class: "axis tick", "text-anchor": "end", "data-value": v }, label(v)),
		);
	}
}

export function chart(view: ViewData, native: NativeAnswer, plan = chartPlan(view, native)): SVGElement {
	const reqs = view.requests;
	const curve = ready(native);
	const { axis } = plan;
	const plot = plotOf(reqs.length, axis.top);
	const { x, y, step } = plot;
	const svg = s("svg", {
		viewBox: `0 0 ${W} ${H}`,
		class: "chart",
		role: "img",
		"aria-label": "request size per request",
		"data-top": axis.top,
		"data-step": axis.step,
		"data-drawn": plan.drawn,
	});
	axisTicks(svg, axis, y, tickLabel);
	reqs.forEach((r, i) => {
		svg.append(bar(plot, i, r, curve, plan.foldCurve !== undefined));
	});
	const mid = (i: number) => x(i) + step / 2;
	// What the window would have held with nothing folded or compacted (estimated); capped at the top when it dwarfs the rest.
	svg.append(
		line(
			reqs.map((r, i) => [mid(i), y(unfolded(r))]),
			plan.unfoldedCapped ? "unfolded capped" : "unfolded",
			{ "data-peak": plan.unfoldedPeak },
		),
	);
	plan.marks.forEach((m) => {
		svg.append(commitLine(plot, m, plan.replayedCommits));
	});
	svg.append(...commitLabels(plot, plan));
	const ran = reqs.some((r) => r.budget !== undefined);
	for (const l of plan.limits) {
		if (l.cls === "budget" && ran)
			svg.append(
				steps(
					plot,
					reqs.map((r) => r.budget),
				),
				limit(y(l.tokens), l, false),
			);
		else svg.append(limit(y(l.tokens), l));
	}
	if (curve) {
		const nativeCurve = curve.native.prompts.slice(0, reqs.length);
		svg.append(
			line(
				nativeCurve.map((t, i) => [mid(i), y(t)]),
				"native",
			),
			peak(plot, nativeCurve, "native", "native compaction's peak"),
		);
	}
	if (plan.foldCurve) {
		svg.append(
			line(
				plan.foldCurve.map((t, i) => [mid(i), y(t)]),
				"fold",
			),
			peak(plot, plan.foldCurve, "fold", "pi-fold's peak (replayed)"),
		);
	}
	svg.append(
		s("text", { x: W / 2, y: H - 6, class: "axis", "text-anchor": "middle" }, `request (1 to ${reqs.length})`),
	);
	return svg;
}

function bar(plot: Plot, i: number, r: RequestPoint, curve: NativeCurve | undefined, withFold: boolean): SVGElement {
	const parts = partsOf(r);
	const g = s("g", { class: "bar" }, s("title", {}, barTitle(i, r, parts, curve, withFold)));
	let base = 0;
	for (const [part] of PARTS) {
		const v = parts[part];
		if (v <= 0) continue;
		const [top, bottom] = [plot.y(base + v), plot.y(base)];
		g.append(
			s("rect", {
				x: plot.x(i),
				y: top,
				width: Math.max(1, plot.step * 0.85),
				height: bottom - top,
				class: `p-${part}`,
			}),
		);
		base += v;
	}
	return g;
}

function commitLine(plot: Plot, m: Mark, replayed: boolean): SVGElement {
	const cx = plot.x(m.request);
	return s(
		"line",
		{ x1: cx, x2: cx, y1: PAD.top, y2: H - PAD.bottom, class: replayed ? "commit replayed" : "commit" },
		s("title", {}, m.title),
	);
}

/** The commits' labels (c1, c2...): each one that fits after the last one drawn; the tooltips name them all. */
function commitLabels(plot: Plot, plan: ChartPlan): SVGElement[] {
	const placed = plan.marks.map((m, k) => {
		const text = `c${k + 1}`;
		const width = text.length * LABEL_CHAR;
		const cx = plot.x(m.request);
		// A label that would run past the right edge sits left of its mark.
		const x = cx + 2 + width > W - PAD.right ? cx - 2 - width : cx + 2;
		return { text, x, width };
	});
	const keep = labelsThatFit(placed, LABEL_GAP);
	return placed.flatMap((p, k) =>
		keep[k] ? [s("text", { x: p.x, y: PAD.top - 4, class: "commit-label", "data-commit": k + 1 }, p.text)] : [],
	);
}

function limit(ly: number, l: Limit, rule = true): SVGElement {
	const x =
		l.anchor === "start" ? PAD.left + 4 : l.anchor === "middle" ? (PAD.left + W - PAD.right) / 2 : W - PAD.right - 4;
	return s(
		"g",
		{ class: l.cls, "data-tokens": l.tokens },
		rule ? s("line", { x1: PAD.left, x2: W - PAD.right, y1: ly, y2: ly }) : undefined,
		s("text", { x, y: ly - 4, "text-anchor": l.anchor }, l.label),
	);
}

/** A dot on a curve's largest request. */
function peak(plot: Plot, values: readonly number[], cls: string, what: string): SVGElement {
	if (values.length === 0) return s("g");
	const at = values.indexOf(Math.max(...values));
	return s(
		"circle",
		{ cx: plot.x(at) + plot.step / 2, cy: plot.y(values[at]), r: 3.5, class: `peak ${cls}`, "data-tokens": values[at] },
		s("title", {}, `${what}: ${num(values[at])} tokens, request ${at + 1}`),
	);
}

/** A budget that may change from one request to the next, as steps. */
function steps(plot: Plot, values: (number | undefined)[]): SVGElement {
	const points: [number, number][] = [];
	values.forEach((v, i) => {
		if (v !== undefined) points.push([plot.x(i), plot.y(v)], [plot.x(i + 1), plot.y(v)]);
	});
	return s("g", { class: "budget" }, line(points, "steps"));
}

function line(points: [number, number][], cls: string, attrs: Record<string, number> = {}): SVGElement {
	return s("polyline", {
		points: points.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(" "),
		class: cls,
		...attrs,
	});
}

function barTitle(
	i: number,
	r: RequestPoint,
	parts: Record<Part, number>,
	curve: NativeCurve | undefined,
	withFold: boolean,
): string {
	const lines = [`request ${i + 1} (entry ${r.entryId})`];
	for (const [part, label] of PARTS) if (parts[part] > 0) lines.push(`${label}: ${num(parts[part])}`);
	if (r.hidden > 0) lines.push(`kept out of the window: ${num(r.hidden)}`);
	if (r.billed !== undefined) lines.push(`billed prompt: ${num(r.billed)}`);
	if (curve) {
		const arm = (name: string, a: NativeCurve["native"]) =>
			a.prompts[i] === undefined ? [] : [`${name}: ${num(a.prompts[i])} tokens, ${usd(a.costs[i] ?? 0)}`];
		lines.push(...arm("native compaction (replayed)", curve.native));
		if (withFold) lines.push(...arm("pi-fold (replayed)", curve.fold));
	}
	return lines.join("\n");
}
