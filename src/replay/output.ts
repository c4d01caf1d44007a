// What `pi-fold replay` shows: the benchmark's side-by-side table (report/table.ts) with the
// settings and assumptions it rests on, the same result as JSON, and the prompt-size chart
// (report/chart-svg.ts). Files are written atomically (temp file, fsync, rename).
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { basename } from "node:path";
import { renderRequestChart } from "../report/chart-svg.ts";
import { renderArmTable, tableTerms } from "../report/table.ts";
import type { ReplayResult } from "./replay.ts";

/** Problems listed per policy in the text report (all of them are in the JSON). */
const MAX_LISTED_PROBLEMS = 5;

const int = (n: number) => Math.round(n).toLocaleString("en-US");

/** Request groups named in a line at most; the rest are counted. */
const MAX_LISTED_GROUPS = 8;

/** Request numbers as runs (`3-7, 12, 15-16`), the first few groups only: a long session has hundreds. */
export function requestRuns(requests: readonly number[]): string {
	const groups: string[] = [];
	let shown = 0;
	for (let i = 0; i < requests.length && groups.length < MAX_LISTED_GROUPS; ) {
		let j = i;
		while (j + 1 < requests.length && requests[j + 1] === requests[j] + 1) j++;
		groups.push(j === i ? String(requests[i]) : `${requests[i]}-${requests[j]}`);
		shown = j + 1;
		i = j + 1;
	}
	const rest = requests.length - shown;
	return rest > 0 ? `${groups.join(", ")} and ${rest} more` : groups.join(", ");
}

function eventLine(name: string, requests: readonly number[], what: string): string {
	if (requests.length === 0) return `${name}: no ${what}s`;
	const one = requests.length === 1;
	return `${name}: ${requests.length} ${what}${one ? "" : "s"}, first carried by request${one ? "" : "s"} ${requestRuns(requests)}`;
}

/** What each ratio in the table is measured against, so no figure reads against the wrong limit. */
function ratioNotes(r: ReplayResult): string[] {
	const s = r.settings;
	const threshold = s.window - s.reserveTokens;
	const native = r.arms.find((a) => a.name === "native");
	const nativeShare = native ? `; native's peak is ${(native.peakPromptTokens / threshold).toFixed(2)} of that` : "";
	return [
		"pi-fold / native: the pi-fold figure divided by native's, row by row.",
		"peak request context: the largest request; in brackets, its share of pi-fold's serving budget, " +
			`${int(s.budget)} tokens, in every column. Native compacts above its own threshold, ${int(threshold)} ` +
			`(the window ${int(s.window)} minus reserveTokens ${int(s.reserveTokens)})${nativeShare}.`,
	];
}

/** The calibration refusal (meter/calibration.ts), which a replay can set off by design. */
const SET_ASIDE = /^calibrate: implausible calibration: (\d+) real vs (\d+) estimated tokens/;

/** One line for the usage reports the replayed runtime set aside, with why. */
function setAsideLine(name: string, reports: readonly { real: number; estimated: number }[], hidden: boolean): string {
	const [first] = reports;
	const n = reports.length;
	const why = hidden
		? "the session records no system prompt, so the replayed runtime's estimate of a short request lacks it"
		: "a report that far from the estimate cannot be that request's usage";
	return (
		`${name}: set aside ${n} usage report${n === 1 ? "" : "s"} too far from its estimate to calibrate by ` +
		`(${n === 1 ? "" : "the first: "}${int(first.real)} reported vs ${int(first.estimated)} estimated tokens; ${why}); ` +
		"it keeps its previous calibration and takes the next report, as it does inside Pi"
	);
}

export function textReport(r: ReplayResult): string {
	const s = r.settings;
	const table = renderArmTable(r.arms, {
		ratio: { numerator: "pi-fold", denominator: "native" },
		budget: s.budget,
		omitEmpty: true,
	});
	const fold = r.policies.find((p) => p.name === "pi-fold");
	const native = r.policies.find((p) => p.name === "native");
	const lines = [
		`pi-fold replay of ${r.file}`,
		`session ${r.sessionId}, model ${r.model}, ${r.requests} requests (one per recorded assistant message)` +
			(s.servedAs ? `, replayed as ${s.servedAs} (--model)` : ""),
		`window ${int(s.window)} (${s.windowSource}); pi-fold budget ${int(s.budget)} (${s.budgetWhy}), ` +
			(s.foldPolicy === "cost"
				? `commits when they pay by the model's card (never past ${s.thresholds.maxTarget}; the newest ${s.thresholds.rawBatches} tool batches raw; prompt cache ${s.cacheTtl} s)`
				: `commits at ${s.thresholds.maxTarget} down to ${s.thresholds.minTarget}`) +
			"; native compaction above " +
			`${int(s.window - s.reserveTokens)} keeping ${int(s.keepRecentTokens)}, summaries of ${int(s.summaryChars)} chars (${s.summarySource})`,
		...pricesLines(r),
		"",
		table,
		"",
		...ratioNotes(r),
		...tableTerms(table),
		"",
	];
	for (const [arm, p, what] of [
		["pi-fold", fold, "commit"],
		["native", native, "compaction"],
	] as const) {
		if (p)
			lines.push(
				eventLine(
					arm,
					p.events.map((e) => e.request),
					what,
				),
			);
	}
	if (r.fenced > 0) {
		lines.push(
			`pi-fold's fence would have stopped ${r.fenced} request(s) over its budget (replayed anyway: the answers are the recorded ones)`,
		);
	}
	for (const p of r.policies) {
		if (p.overWindow > 0)
			lines.push(`${p.name}: ${p.overWindow} request(s) larger than the context window (a provider would refuse them)`);
		const setAside = p.problems.flatMap((problem) => {
			const m = SET_ASIDE.exec(problem);
			return m ? [{ real: Number(m[1]), estimated: Number(m[2]) }] : [];
		});
		if (setAside.length > 0) lines.push(setAsideLine(p.name, setAside, r.hiddenPrefix > 0));
		const problems = p.problems.filter((problem) => !SET_ASIDE.test(problem));
		for (const problem of problems.slice(0, MAX_LISTED_PROBLEMS)) lines.push(`${p.name} problem: ${problem}`);
		if (problems.length > MAX_LISTED_PROBLEMS) {
			lines.push(`${p.name}: ${problems.length - MAX_LISTED_PROBLEMS} more problem(s) (see --json)`);
		}
	}
	const d = r.dropped;
	if (d.compactions + d.contextEdits + d.piFold > 0) {
		lines.push(
			`left out of the replay, rebuilt by each policy: ${d.compactions} recorded compaction(s), ` +
				`${d.contextEdits} context edit(s), ${d.piFold} pi-fold entr${d.piFold === 1 ? "y" : "ies"}`,
		);
	}
	if (r.hiddenPrefix > 0) {
		lines.push(
			`the session records no system prompt: ${int(r.hiddenPrefix)} tokens for it and the tools (fitted to the recorded usage) count in every request`,
		);
	}
	lines.push(
		"sizes: the provider's tokens per message as the recorded usage tells them, else pi-fold's estimator calibrated by it; " +
			"cache: the prefix shared with the same policy's previous request",
	);
	return lines.join("\n");
}

const PRICE_SOURCE = {
	catalog: "Pi's catalog",
	default: "not in Pi's catalog (or no cost there): the default card",
	"--price-card": "--price-card",
} as const;

/** Which prices applied to which recorded model's requests. */
function pricesLines(r: ReplayResult): string[] {
	return r.settings.prices.map((p) => {
		const as = p.pricedAs === p.model ? "" : ` as ${p.pricedAs}`;
		return `prices for ${p.model} (${int(p.requests)} requests)${as}: ${PRICE_SOURCE[p.source]}: ${p.card}`;
	});
}

export function jsonReport(r: ReplayResult): string {
	return JSON.stringify(r, null, 2);
}

export function chartSvg(r: ReplayResult): string {
	const { budget, window, thresholds, priceTier: tier } = r.settings;
	return renderRequestChart({
		series: r.policies.map((p) => ({ name: p.name, points: p.prompts })),
		budget,
		window,
		// The band decides only when set; by the cost model, maxTarget is a ceiling the curve may never reach.
		...(r.settings.foldPolicy === "cost"
			? {}
			: { band: { min: thresholds.minTarget * budget, max: thresholds.maxTarget * budget } }),
		lines: [
			...(r.settings.foldPolicy === "cost"
				? [
						{
							tokens: thresholds.maxTarget * budget,
							label: `pi-fold's ceiling ${int(thresholds.maxTarget * budget)} (it commits when that pays, at the latest here)`,
						},
					]
				: []),
			...(tier
				? [{ tokens: tier.above, label: `price tier: ${tier.multiplier ?? "higher"}x above ${int(tier.above)}` }]
				: []),
		],
		title: `pi-fold replay: ${basename(r.file)} (${r.settings.servedAs ?? r.model})`,
	});
}

/** Write `text` to `path` atomically: a temp file beside it, fsync, rename. */
export function writeFileAtomic(path: string, text: string): void {
	const temp = `${path}.${process.pid}.tmp`;
	const fd = openSync(temp, "w", 0o644);
	try {
		writeSync(fd, text);
		fsyncSync(fd);
	} catch (err) {
		closeSync(fd);
		unlinkSync(temp);
		throw err;
	}
	closeSync(fd);
	renameSync(temp, path);
}
