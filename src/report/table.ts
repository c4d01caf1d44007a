// A Markdown table of N arms side by side (one column per arm, one row per figure), with an optional
// ratio column (e.g. pi-fold / native) on the rows where a quotient means something: usage, cost, peak,
// wall clock. Counts of events (commits, rewrites, values) get no ratio.
//
// API (pure, host-neutral):
// - `renderArmTable(arms, options?)` -> string (lines joined with "\n", no trailing newline).
//   options.ratio: { numerator, denominator } arm names (both must be among `arms`), header "<num> / <den>".
//   options.budget: the serving budget in tokens; the peak row then also shows peak / budget.
//   options.freshInputFloor: the fresh input any policy pays (e.g. an unmanaged arm's); adds the row
//   `FRESH_ABOVE_FLOOR_ROW` (each arm's fresh input minus it, with a ratio) after "fresh input".
//   An arm's `overWindow` count adds the row `OVER_WINDOW_ROW` after the peak (when any arm has one).
//   options.omitEmpty: leave out rows no arm has a figure for (e.g. wall clock in a replay).
// - `ARM_TABLE_ROWS`: the row labels always shown, in order (for tests and for readers that want to find a row).
import type { ArmReport } from "./arm-report.ts";

interface ArmTableOptions {
	ratio?: { numerator: string; denominator: string };
	budget?: number;
	/** fresh input tokens every policy pays at least (every appended message written to the cache once) */
	freshInputFloor?: number;
	/** leave out rows where every arm shows "—" */
	omitEmpty?: boolean;
}

interface Row {
	label: string;
	cell: (a: ArmReport, budget: number | undefined) => string;
	/** the figure a ratio is taken of; absent: no ratio on this row */
	value?: (a: ArmReport) => number | undefined;
}

const DASH = "—";
const int = (n: number) => Math.round(n).toLocaleString("en-US");
const count = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;
const optional = <T>(v: T | undefined, show: (v: T) => string) => (v === undefined ? DASH : show(v));

const ROWS: readonly Row[] = [
	{ label: "total tokens", cell: (a) => int(a.totalTokens), value: (a) => a.totalTokens },
	{ label: "fresh input", cell: (a) => int(a.freshInput), value: (a) => a.freshInput },
	{ label: "cache read", cell: (a) => int(a.cacheRead), value: (a) => a.cacheRead },
	{ label: "cache write", cell: (a) => int(a.cacheWrite), value: (a) => a.cacheWrite },
	{ label: "output", cell: (a) => int(a.output), value: (a) => a.output },
	{ label: "billed calls", cell: (a) => int(a.billedCalls), value: (a) => a.billedCalls },
	{ label: "cost", cell: (a) => `$${a.cost.toFixed(4)}`, value: (a) => a.cost },
	{
		label: "pooled cache share",
		cell: (a) => `${(100 * a.pooledCacheShare).toFixed(1)}%`,
		value: (a) => a.pooledCacheShare,
	},
	{
		label: "peak request context",
		cell: (a, budget) =>
			budget ? `${int(a.peakPromptTokens)} (${(a.peakPromptTokens / budget).toFixed(2)})` : int(a.peakPromptTokens),
		value: (a) => a.peakPromptTokens,
	},
	{
		label: "commits / compactions",
		cell: (a) => {
			const parts = [
				a.commits === undefined ? "" : count(a.commits, "commit"),
				a.compactions === undefined ? "" : count(a.compactions, "compaction"),
			].filter(Boolean);
			return parts.length ? parts.join(", ") : DASH;
		},
	},
	{
		label: "rewrites (attributed / unattributed)",
		cell: (a) => optional(a.rewrites, (r) => `${r.attributed} / ${r.unattributed}`),
	},
	{
		label: "values visible / recovered / lost",
		cell: (a) => optional(a.values, (v) => `${v.visible} / ${v.recovered} / ${v.lost}`),
	},
	{
		label: "wall clock",
		cell: (a) => optional(a.wallMs, (ms) => `${(ms / 1000).toFixed(2)} s`),
		value: (a) => a.wallMs,
	},
	{
		label: "added time per request (median / p95)",
		cell: (a) => optional(a.addedMsPerRequest, (t) => `${t.median.toFixed(3)} / ${t.p95.toFixed(3)} ms`),
	},
];

export const ARM_TABLE_ROWS: readonly string[] = ROWS.map((r) => r.label);

export const FRESH_ABOVE_FLOOR_ROW = "fresh input above the floor";
export const OVER_WINDOW_ROW = "requests over the window (a real provider refuses them)";

function floorRow(floor: number): Row {
	return {
		label: FRESH_ABOVE_FLOOR_ROW,
		cell: (a) => int(a.freshInput - floor),
		value: (a) => a.freshInput - floor,
	};
}

/** What the less obvious rows mean, in a line each, for a reader who has only the table in front of them. */
const TERMS: Readonly<Record<string, string>> = {
	[FRESH_ABOVE_FLOOR_ROW]:
		"fresh input minus none's: every new message is written to the cache once whatever the policy, so this is what a policy adds",
	"pooled cache share": "cache read over all prompt tokens of the session (tokens, not requests)",
	"peak request context": "the largest single request; in brackets, its share of pi-fold's serving budget",
	"commits / compactions": "pi-fold's commits (spans folded together in one rewrite) and Pi's compactions (summaries)",
	"rewrites (attributed / unattributed)":
		"requests that are not the previous one plus new messages, so the prompt cache breaks at the first change: " +
		"attributed to a commit, expand or repair pi-fold announced, or not (a bug: always 0)",
	"values visible / recovered / lost":
		"the planted values at the end: still in the window, read back from pi-fold's store, or gone",
};

/** The meaning of each less obvious row `table` (renderArmTable's) shows, as `- row: meaning` lines. */
export function tableTerms(table: string): string[] {
	return Object.entries(TERMS)
		.filter(([label]) => table.includes(`| ${label} |`))
		.map(([label, meaning]) => `- ${label}: ${meaning}`);
}

const OVER_WINDOW: Row = { label: OVER_WINDOW_ROW, cell: (a) => optional(a.overWindow, int) };

/** The rows for these arms and options: the fixed ones, plus the optional ones right after their neighbours. */
function rowsFor(arms: readonly ArmReport[], options: ArmTableOptions): Row[] {
	const { freshInputFloor } = options;
	if (freshInputFloor !== undefined && !Number.isFinite(freshInputFloor)) {
		throw new Error(`renderArmTable: freshInputFloor must be a finite number, got ${freshInputFloor}`);
	}
	const overWindow = arms.some((a) => a.overWindow !== undefined);
	return ROWS.flatMap((row) => {
		if (row.label === "fresh input" && freshInputFloor !== undefined) return [row, floorRow(freshInputFloor)];
		if (row.label === "peak request context" && overWindow) return [row, OVER_WINDOW];
		return [row];
	});
}

const escapeCell = (s: string) => s.replace(/\|/g, "\\|").replace(/\r?\n/g, " ");

export function renderArmTable(arms: readonly ArmReport[], options: ArmTableOptions = {}): string {
	if (arms.length === 0) throw new Error("renderArmTable: no arms to show");
	const { ratio, budget } = options;
	let num: ArmReport | undefined;
	let den: ArmReport | undefined;
	if (ratio) {
		num = arms.find((a) => a.name === ratio.numerator);
		den = arms.find((a) => a.name === ratio.denominator);
		const names = arms.map((a) => a.name).join(", ");
		if (!num) throw new Error(`renderArmTable: ratio numerator "${ratio.numerator}" is not an arm (arms: ${names})`);
		if (!den)
			throw new Error(`renderArmTable: ratio denominator "${ratio.denominator}" is not an arm (arms: ${names})`);
	}
	const header = ["", ...arms.map((a) => escapeCell(a.name))];
	const align = ["---", ...arms.map(() => "---:")];
	if (ratio) {
		header.push(escapeCell(`${ratio.numerator} / ${ratio.denominator}`));
		align.push("---:");
	}
	const lines = [`| ${header.join(" | ")} |`, `|${align.join("|")}|`];
	for (const row of rowsFor(arms, options)) {
		const shown = arms.map((a) => escapeCell(row.cell(a, budget)));
		if (options.omitEmpty && shown.every((c) => c === DASH)) continue;
		const cells = [row.label, ...shown];
		if (ratio && num && den) {
			const n = row.value?.(num);
			const d = row.value?.(den);
			cells.push(n === undefined || d === undefined || d === 0 ? "" : `${(n / d).toFixed(2)}x`);
		}
		lines.push(`| ${cells.join(" | ")} |`);
	}
	return lines.join("\n");
}
