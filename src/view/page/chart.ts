// The window over the session: one stacked bar per request (what was raw, pending, shown as
// briefs or summaries, and the rest of the prompt the provider billed), the commits as marks, and
// native compaction's curve, the serving budget and the price tier when the replay has them.
import type { CommitMark, NativeAnswer, RequestPoint, ViewData } from "../view-data.ts";
import { num, s } from "./dom.ts";

const W = 1000;
const H = 280;
const PAD = { left: 64, right: 12, top: 14, bottom: 28 };

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

const total = (r: RequestPoint) => Object.values(partsOf(r)).reduce((a, b) => a + b, 0);

/** The request with what folds and compactions kept out put back (an estimate: the originals' size). */
const unfolded = (r: RequestPoint) => total(r) - r.folded - r.summary + r.hidden;

/** The chart's scales: request index to x, tokens to y. */
interface Plot {
	step: number;
	x(i: number): number;
	y(tokens: number): number;
}

function plotOf(requests: number, top: number): Plot {
	const plotW = W - PAD.left - PAD.right;
	const plotH = H - PAD.top - PAD.bottom;
	const step = plotW / Math.max(1, requests);
	return { step, x: (i) => PAD.left + i * step, y: (t) => PAD.top + plotH - (t / top) * plotH };
}

export function chart(view: ViewData, native: NativeAnswer): SVGElement {
	const reqs = view.requests;
	const curve = native.state === "ready" ? native : undefined;
	// Headroom above the highest line, for the labels of the lines drawn near it.
	const top =
		1.08 *
		Math.max(
			1,
			...reqs.map(total),
			...reqs.map(unfolded),
			...reqs.map((r) => r.budget ?? 0),
			...(curve ? [...curve.native, curve.budget, curve.priceTier?.tokens ?? 0] : []),
		);
	const plot = plotOf(reqs.length, top);
	const { x, y, step } = plot;
	const svg = s("svg", {
		viewBox: `0 0 ${W} ${H}`,
		class: "chart",
		role: "img",
		"aria-label": "request size per request",
	});
	for (const frac of [0, 0.25, 0.5, 0.75, 1]) {
		const t = top * frac;
		svg.append(s("line", { x1: PAD.left, x2: W - PAD.right, y1: y(t), y2: y(t), class: "grid" }));
		svg.append(s("text", { x: PAD.left - 6, y: y(t) + 4, class: "axis", "text-anchor": "end" }, num(t)));
	}
	reqs.forEach((r, i) => {
		svg.append(bar(plot, i, r));
	});
	// What the window would have held with nothing folded or compacted (estimated).
	svg.append(
		line(
			reqs.map((r, i) => [x(i) + step / 2, y(unfolded(r))]),
			"unfolded",
		),
	);
	view.commits.forEach((c, k) => {
		svg.append(commitMark(plot, c, k));
	});
	// The budget the session ran with (its receipts say it); else the one the replay works out.
	const ran = reqs.findLast((r) => r.budget !== undefined)?.budget;
	if (ran !== undefined)
		svg.append(
			steps(
				plot,
				reqs.map((r) => r.budget),
			),
			limit(y(ran), `pi-fold's serving budget ${num(ran)}`, "budget", false),
		);
	if (curve) {
		svg.append(
			line(
				curve.native.slice(0, reqs.length).map((t, i) => [x(i) + step / 2, y(t)]),
				"native",
			),
		);
		if (ran === undefined) svg.append(limit(y(curve.budget), `serving budget ${num(curve.budget)}`, "budget"));
		if (curve.priceTier) svg.append(limit(y(curve.priceTier.tokens), curve.priceTier.label, "tier"));
	}
	svg.append(
		s("text", { x: W / 2, y: H - 6, class: "axis", "text-anchor": "middle" }, `request (1 to ${reqs.length})`),
	);
	return svg;
}

function bar(plot: Plot, i: number, r: RequestPoint): SVGElement {
	const parts = partsOf(r);
	const g = s("g", { class: "bar" }, s("title", {}, barTitle(i, r, parts)));
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

function commitMark(plot: Plot, c: CommitMark, k: number): SVGElement {
	const cx = plot.x(c.request);
	const sizes = c.before !== undefined && c.after !== undefined ? `: ${num(c.before)} → ${num(c.after)} tokens` : "";
	return s(
		"g",
		{},
		s(
			"line",
			{ x1: cx, x2: cx, y1: PAD.top, y2: H - PAD.bottom, class: "commit" },
			s("title", {}, `commit ${k + 1}, ${c.folds.length} folds${sizes}`),
		),
		s("text", { x: cx + 2, y: PAD.top + 10, class: "commit-label" }, `c${k + 1}`),
	);
}

function limit(ly: number, label: string, cls: string, rule = true): SVGElement {
	return s(
		"g",
		{ class: cls },
		rule ? s("line", { x1: PAD.left, x2: W - PAD.right, y1: ly, y2: ly }) : undefined,
		s("text", { x: W - PAD.right - 4, y: ly - 4, "text-anchor": "end" }, label),
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

function line(points: [number, number][], cls: string): SVGElement {
	return s("polyline", { points: points.map(([a, b]) => `${a.toFixed(1)},${b.toFixed(1)}`).join(" "), class: cls });
}

function barTitle(i: number, r: RequestPoint, parts: Record<Part, number>): string {
	const lines = [`request ${i + 1} (entry ${r.entryId})`];
	for (const [part, label] of PARTS) if (parts[part] > 0) lines.push(`${label}: ${num(parts[part])}`);
	if (r.hidden > 0) lines.push(`kept out of the window: ${num(r.hidden)}`);
	if (r.billed !== undefined) lines.push(`billed prompt: ${num(r.billed)}`);
	return lines.join("\n");
}
