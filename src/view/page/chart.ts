// The window over the session: one stacked bar per request (what was raw, pending, shown as
// briefs or summaries, and the rest of the prompt the provider billed), the commits as marks, and
// native compaction's curve, the serving budget and the price tier when the replay has them.
import type { NativeAnswer, RequestPoint, ViewData } from "../view-data.ts";
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

export function chart(view: ViewData, native: NativeAnswer): SVGElement {
	const reqs = view.requests;
	const curve = native.state === "ready" ? native : undefined;
	const top = Math.max(
		1,
		...reqs.map(total),
		...reqs.map(unfolded),
		...(curve ? [...curve.native, curve.budget, curve.priceTier?.tokens ?? 0] : []),
	);
	const plotW = W - PAD.left - PAD.right;
	const plotH = H - PAD.top - PAD.bottom;
	const step = plotW / Math.max(1, reqs.length);
	const x = (i: number) => PAD.left + i * step;
	const y = (t: number) => PAD.top + plotH - (t / top) * plotH;
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
		let base = 0;
		const parts = partsOf(r);
		const g = s("g", { class: "bar" }, s("title", {}, barTitle(i, r, parts)));
		for (const [part] of PARTS) {
			const v = parts[part];
			if (v <= 0) continue;
			g.append(
				s("rect", {
					x: x(i),
					y: y(base + v),
					width: Math.max(1, step * 0.85),
					height: y(base) - y(base + v),
					class: `p-${part}`,
				}),
			);
			base += v;
		}
		svg.append(g);
	});
	// What the window would have held with nothing folded or compacted (estimated).
	svg.append(
		line(
			reqs.map((r, i) => [x(i) + step / 2, y(r.raw + r.pending + r.hidden + r.summary)]),
			"unfolded",
		),
	);
	view.commits.forEach((c, k) => {
		const cx = x(c.request);
		svg.append(s("line", { x1: cx, x2: cx, y1: PAD.top, y2: H - PAD.bottom, class: "commit" }));
		svg.append(s("text", { x: cx + 2, y: PAD.top + 10, class: "commit-label" }, `c${k + 1}`));
	});
	if (curve) {
		svg.append(
			line(
				curve.native.slice(0, reqs.length).map((t, i) => [x(i) + step / 2, y(t)]),
				"native",
			),
		);
		svg.append(limit(y(curve.budget), `serving budget ${num(curve.budget)}`, "budget"));
		if (curve.priceTier) svg.append(limit(y(curve.priceTier.tokens), curve.priceTier.label, "tier"));
	}
	svg.append(
		s("text", { x: W / 2, y: H - 6, class: "axis", "text-anchor": "middle" }, `request (1 to ${reqs.length})`),
	);
	return svg;

	function limit(ly: number, label: string, cls: string): SVGElement {
		return s(
			"g",
			{ class: cls },
			s("line", { x1: PAD.left, x2: W - PAD.right, y1: ly, y2: ly }),
			s("text", { x: W - PAD.right - 4, y: ly - 4, "text-anchor": "end" }, label),
		);
	}
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
