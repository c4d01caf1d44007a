// An SVG line chart of request prompt size over request index for several arms (pi-fold's band against
// native compaction's sawtooth), as a plain string with no dependencies.
//
// API (pure, host-neutral):
// - `renderRequestChart(spec)` -> SVG text (a standalone, well-formed XML document).
//   spec.series: [{ name, points, color? }] — points[i] is request i's prompt tokens; one polyline per series
//   (color: any SVG color; default: a fixed palette by position).
//   spec.budget: the serving budget (a dashed line); spec.window: the model's context window (a line, optional);
//   spec.band: { min, max } token levels (pi-fold's minTarget / maxTarget) drawn as a shaded band (optional).
//   spec.lines: more labelled reference levels (e.g. native compaction's threshold), dotted (optional).
//   spec.title, spec.width, spec.height: optional (defaults 960 x 420).
// Every text node and attribute value is XML-escaped; non-finite points are refused.

interface ChartSeries {
	name: string;
	points: readonly number[];
	/** the line's color (default: the palette's color for the series' position) */
	color?: string;
}

interface RequestChartSpec {
	series: readonly ChartSeries[];
	budget: number;
	window?: number;
	band?: { min: number; max: number };
	lines?: readonly { tokens: number; label: string }[];
	title?: string;
	width?: number;
	height?: number;
}

const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"];

export function escapeXml(s: string): string {
	return s
		.replace(/&/g, "&amp;")
		.replace(/</g, "&lt;")
		.replace(/>/g, "&gt;")
		.replace(/"/g, "&quot;")
		.replace(/'/g, "&apos;");
}

const fmt = (x: number) => (Number.isInteger(x) ? String(x) : x.toFixed(1));
const kTokens = (t: number) => (t >= 1000 ? `${Math.round(t / 1000)}k` : String(Math.round(t)));

/** A "nice" tick step near range / 5 (1, 2 or 5 times a power of ten). */
function tickStep(range: number): number {
	const raw = range / 5;
	const pow = 10 ** Math.floor(Math.log10(raw));
	const m = raw / pow;
	return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * pow;
}

/** Where things go: the plot area inside its margins, and the scales from request index and tokens to pixels. */
interface Plot {
	width: number;
	height: number;
	margin: { left: number; right: number; top: number; bottom: number };
	plotW: number;
	plotH: number;
	maxPoints: number;
	yMax: number;
	x(i: number): number;
	y(t: number): number;
}

function checkSpec(spec: RequestChartSpec): void {
	if (!Number.isFinite(spec.budget) || spec.budget <= 0)
		throw new Error(`chart: budget must be positive, got ${spec.budget}`);
	for (const s of spec.series) {
		const bad = s.points.findIndex((p) => !Number.isFinite(p) || p < 0);
		if (bad >= 0) throw new Error(`chart: series "${s.name}" point ${bad} is not a non-negative number`);
	}
	for (const l of spec.lines ?? []) {
		if (!Number.isFinite(l.tokens) || l.tokens < 0) throw new Error(`chart: line "${l.label}" is not at a token level`);
	}
}

function plotOf(spec: RequestChartSpec): Plot {
	const width = spec.width ?? 960;
	const height = spec.height ?? 420;
	const margin = { left: 70, right: 20, top: spec.title ? 40 : 20, bottom: 70 };
	const plotW = width - margin.left - margin.right;
	const plotH = height - margin.top - margin.bottom;
	const maxPoints = Math.max(2, ...spec.series.map((s) => s.points.length));
	const yMax =
		Math.max(
			spec.budget,
			spec.window ?? 0,
			spec.band?.max ?? 0,
			...(spec.lines ?? []).map((l) => l.tokens),
			...spec.series.flatMap((s) => s.points),
		) * 1.05;
	return {
		width,
		height,
		margin,
		plotW,
		plotH,
		maxPoints,
		yMax,
		x: (i) => margin.left + (plotW * i) / (maxPoints - 1),
		y: (t) => margin.top + plotH - (plotH * t) / yMax,
	};
}

/** The grid, the axes, their ticks and their titles. */
function axes(out: string[], p: Plot): void {
	const { margin, plotW, plotH, x, y } = p;
	const step = tickStep(p.yMax);
	for (let t = 0; t <= p.yMax; t += step) {
		out.push(
			`<line x1="${margin.left}" y1="${fmt(y(t))}" x2="${margin.left + plotW}" y2="${fmt(y(t))}" stroke="#e0e0e0"/>`,
		);
		out.push(`<text x="${margin.left - 6}" y="${fmt(y(t) + 4)}" text-anchor="end">${kTokens(t)}</text>`);
	}
	const xStep = tickStep(p.maxPoints - 1);
	for (let i = 0; i < p.maxPoints; i += Math.max(1, xStep)) {
		out.push(`<text x="${fmt(x(i))}" y="${margin.top + plotH + 16}" text-anchor="middle">${i}</text>`);
	}
	out.push(
		`<line x1="${margin.left}" y1="${margin.top + plotH}" x2="${margin.left + plotW}" y2="${margin.top + plotH}" stroke="#333"/>`,
	);
	out.push(
		`<line x1="${margin.left}" y1="${margin.top}" x2="${margin.left}" y2="${margin.top + plotH}" stroke="#333"/>`,
	);
	out.push(`<text x="${margin.left + plotW / 2}" y="${margin.top + plotH + 34}" text-anchor="middle">request</text>`);
	out.push(
		`<text x="16" y="${margin.top + plotH / 2}" text-anchor="middle" transform="rotate(-90 16 ${margin.top + plotH / 2})">prompt tokens</text>`,
	);
}

/** The labelled levels: the context window, the budget, and any other lines. */
function levels(out: string[], p: Plot, spec: RequestChartSpec): void {
	const { margin, plotW, y } = p;
	/** A labelled level; the label sits above the line, or below it (`below`) where two levels are close. */
	const hline = (t: number, color: string, dash: string, label: string, anchor: "start" | "end", below = false) => {
		out.push(
			`<line x1="${margin.left}" y1="${fmt(y(t))}" x2="${margin.left + plotW}" y2="${fmt(y(t))}" stroke="${color}" stroke-dasharray="${dash}"/>`,
		);
		const lx = anchor === "end" ? margin.left + plotW - 4 : margin.left + 4;
		out.push(
			`<text x="${lx}" y="${fmt(below ? y(t) + 13 : y(t) - 4)}" text-anchor="${anchor}" fill="${color}">${escapeXml(label)}</text>`,
		);
	};
	if (spec.window !== undefined)
		hline(spec.window, "#555555", "2 3", `context window ${kTokens(spec.window)}`, "start");
	hline(spec.budget, "#000000", "6 4", `budget ${kTokens(spec.budget)}`, "end", spec.window !== undefined);
	for (const l of spec.lines ?? []) {
		hline(l.tokens, "#d62728", "1 3", l.label, "start");
	}
}

const colorOf = (s: ChartSeries, k: number) => s.color ?? COLORS[k % COLORS.length];

/** One entry per series (and the band), along the bottom. */
function legend(out: string[], p: Plot, spec: RequestChartSpec): void {
	const entries: { name: string; color: string; fill?: boolean }[] = spec.series.map((s, k) => ({
		name: s.name,
		color: escapeXml(colorOf(s, k)),
	}));
	if (spec.band)
		entries.push({ name: `band ${kTokens(spec.band.min)}–${kTokens(spec.band.max)}`, color: "#2ca02c", fill: true });
	entries.forEach((l, k) => {
		const lx = p.margin.left + k * 200;
		const ly = p.height - 14;
		out.push(
			l.fill
				? `<rect x="${lx}" y="${ly - 8}" width="20" height="10" fill="${l.color}" fill-opacity="0.25"/>`
				: `<line x1="${lx}" y1="${ly - 3}" x2="${lx + 20}" y2="${ly - 3}" stroke="${l.color}" stroke-width="2"/>`,
		);
		out.push(`<text x="${lx + 26}" y="${ly}">${escapeXml(l.name)}</text>`);
	});
}

export function renderRequestChart(spec: RequestChartSpec): string {
	checkSpec(spec);
	const p = plotOf(spec);
	const { width, height, margin, plotW, x, y } = p;
	const out: string[] = [];
	out.push('<?xml version="1.0" encoding="UTF-8"?>');
	out.push(
		`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
	);
	out.push(`<rect x="0" y="0" width="${width}" height="${height}" fill="#ffffff"/>`);
	if (spec.title) {
		out.push(`<text x="${width / 2}" y="24" text-anchor="middle" font-size="15">${escapeXml(spec.title)}</text>`);
	}
	if (spec.band) {
		const top = y(spec.band.max);
		out.push(
			`<rect x="${margin.left}" y="${fmt(top)}" width="${plotW}" height="${fmt(y(spec.band.min) - top)}" fill="#2ca02c" fill-opacity="0.12"/>`,
		);
	}
	axes(out, p);
	levels(out, p, spec);
	spec.series.forEach((s, k) => {
		const color = escapeXml(colorOf(s, k));
		const pts = s.points.map((v, i) => `${fmt(x(i))},${fmt(y(v))}`).join(" ");
		out.push(`<polyline fill="none" stroke="${color}" stroke-width="1.5" points="${pts}"/>`);
	});
	legend(out, p, spec);
	out.push("</svg>");
	return `${out.join("\n")}\n`;
}
