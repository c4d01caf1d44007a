// What the session benchmark shows and writes: Markdown sections (header, the side-by-side table with
// the fresh-input floor, planted values, cost by token class, targets), the prompt-size chart and the
// JSON, from a SessionResult (session-compare.ts). Used by bench/session.bench.ts and scripts/demo.ts.
import { mkdirSync } from "node:fs";
import { relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { DEFAULT_THRESHOLDS } from "../../src/policy/thresholds.ts";
import { writeFileAtomic } from "../../src/replay/output.ts";
import { renderRequestChart } from "../../src/report/chart-svg.ts";
import { renderArmTable } from "../../src/report/table.ts";
import { RECALL_CAVEAT } from "./recall-agent.ts";
import type { ArmName, ArmRun } from "./session-arms.ts";
import { ARMS } from "./session-arms.ts";
import { type SessionResult, usesDefaults } from "./session-compare.ts";
import { recallSummary, recallText } from "./session-recall.ts";
import { SCENARIOS } from "./session-scenarios.ts";

const REPO = fileURLToPath(new URL("../../", import.meta.url));
const int = (n: number) => Math.round(n).toLocaleString("en-US");
const round = (x: number, digits = 3) => Number(x.toFixed(digits));
const count = (n: number, what: string) => `${int(n)} ${what}${n === 1 ? "" : "s"}`;

/** Line colors: pi-fold and native as in the replay chart; "none" in grey, away from pi-fold's green band. */
const COLORS: Record<ArmName, string> = { "pi-fold": "#1f77b4", native: "#d62728", none: "#7f7f7f" };

export function headerText(r: SessionResult): string {
	const o = r.options;
	const c = r.compaction;
	const m = r.machine;
	const scenario = SCENARIOS[o.scenario];
	return [
		`# pi-fold session benchmark, ${scenario.title} (${m.date})`,
		`${m.cpu}, ${m.cores} cores, Node ${m.node}`,
		`workload: ${o.stages} stages (seed ${o.seed}) over ${relative(REPO, o.root) || o.root}, reads of ` +
			`${o.readLines.min}-${o.readLines.max} lines, ${r.values.length} planted values; window ${int(o.window)}, ` +
			`maxTokens ${o.maxTokens}; summaries of ${o.summaryChars} chars; price card: ${o.card.name}`,
		`arms: pi-fold (its default options, serving budget ${int(r.budget)}); native (Pi compaction, ` +
			`reserveTokens ${c.reserveTokens}, keepRecentTokens ${c.keepRecentTokens}${c.piDefaults ? ": Pi's defaults" : ""}, ` +
			`threshold ${int(c.threshold)}); none (compaction off, no pi-fold)`,
		...(r.tier
			? [
					`the model's price tier: the whole request at ${r.tier.multiplier ?? "higher"}x above ${int(r.tier.above)} ` +
						"input tokens, from its own cost (Pi's cost.tiers), which prices every request",
				]
			: []),
		usesDefaults(o) ? `setup: the defaults. ${scenario.why}` : `setup: not the defaults (${scenario.why})`,
	].join("\n");
}

/** The table and what it rests on; `targets: false` (the demo) leaves out the verdict on the fresh-input target. */
export function tableText(r: SessionResult, opts: { targets?: boolean } = {}): string {
	const none = r.reports.none;
	const lines = [
		`## pi-fold vs native compaction vs none (serving budget ${int(r.budget)} tokens; peak shown with its share)`,
		renderArmTable(
			ARMS.map((a) => r.reports[a]),
			{
				ratio: { numerator: "pi-fold", denominator: "native" },
				budget: r.budget,
				freshInputFloor: r.floor.floor,
			},
		),
		"",
		`none: no compaction and no pi-fold. The faux provider accepts a request of any size; ${none.overWindow ?? 0} of ` +
			`none's ${none.requests} requests exceed the ${int(r.options.window)}-token window (peak ${int(none.peakPromptTokens)}), ` +
			"and a real provider would refuse them.",
		`fresh-input floor: ${int(r.floor.floor)} tokens (none's fresh input: every appended message written to the ` +
			`cache once, which any policy pays); above it: pi-fold ${int(r.floor.piFoldAbove)}, native ${int(r.floor.nativeAbove)}.`,
		runsText(r),
	];
	if (r.tier && r.aboveTier) {
		const a = r.aboveTier;
		lines.push(
			`requests above the price tier (${int(r.tier.above)}, billed whole at its rates): ` +
				ARMS.map((arm) => `${arm} ${a[arm]} of ${r.reports[arm].requests}`).join(", "),
		);
	}
	if (opts.targets !== false) lines.push(`fresh-input target: ${r.floor.verdict}.`);
	return lines.join("\n");
}

/** Whether each arm ran the session to its end, what stopped or refused its requests, and how often it rewrote. */
function runsText(r: SessionResult): string {
	const per100 = (n: number, of: number) => (of > 0 ? (100 * n) / of : 0).toFixed(1);
	const arm = (a: (typeof ARMS)[number]) => {
		const run = r.runs[a];
		const rep = r.reports[a];
		const events =
			a === "pi-fold"
				? `${per100(rep.commits ?? 0, rep.requests)} commits`
				: `${per100(rep.compactions ?? 0, rep.requests)} compactions`;
		return (
			`${a} ${run.completed ? "completed" : "did NOT complete"} (${run.stopped} stopped, ${run.refused} refused as ` +
			`too long; ${events} per 100 requests)`
		);
	};
	return `runs: ${ARMS.map(arm).join("; ")}.`;
}

export function valuesText(r: SessionResult): string {
	const columns = ["pi-fold", "pi-fold without search", "native", "none"];
	const runs = [r.runs["pi-fold"], r.noSearch, r.runs.native, r.runs.none];
	const lines = [
		"## Planted values (recovered: after how many calls of pi-fold's tool, how many tokens their answers added, and how)",
		`| stage | value | ${columns.join(" | ")} |`,
		`|---:|---|${columns.map(() => "---").join("|")}|`,
	];
	r.values.forEach((v, i) => {
		const cells = runs.map((run) => {
			const got = run.values[i];
			if (got.outcome !== "recovered") return got.outcome;
			const how = got.via === undefined ? "" : got.via === "search" ? ", by search" : ", by peek of its fold";
			return `recovered (${count(got.calls ?? 0, "call")}, ${int(got.tokens ?? 0)} tokens${how})`;
		});
		lines.push(`| ${v.stage} | \`${v.value}\` | ${cells.join(" | ")} |`);
	});
	return [lines.join("\n"), recallText(r.runs["pi-fold"], r.noSearch, r.index)].join("\n\n");
}

export function costText(r: SessionResult): string {
	const usd = (x: number) => `$${x.toFixed(4)}`;
	const lines = [
		`## Cost by token class (${r.options.card.name})`,
		`| | ${ARMS.join(" | ")} |`,
		`|---|${ARMS.map(() => "---:").join("|")}|`,
		`| fresh input (input + cache writes) | ${ARMS.map((a) => usd(r.costs[a].freshInput)).join(" | ")} |`,
		`| cache read | ${ARMS.map((a) => usd(r.costs[a].cacheRead)).join(" | ")} |`,
		`| output | ${ARMS.map((a) => usd(r.costs[a].output)).join(" | ")} |`,
	];
	return lines.join("\n");
}

export function targetsText(r: SessionResult): string {
	const lines = ["## Targets (from this run)", "| target | measured | needed | |", "|---|---:|---:|---|"];
	const all = [...r.targets, ...r.recallTargets];
	for (const t of all) lines.push(`| ${t.what} | ${t.measured} | ${t.needed} | ${t.met ? "met" : "MISSED"} |`);
	const notes = all.filter((t) => t.note);
	if (notes.length > 0) lines.push("", ...notes.map((t) => `- ${t.what}: ${t.note}`));
	return lines.join("\n");
}

/** Work that refers back: how each arm got each value it had to quote. */
export function referText(r: SessionResult): string {
	const logs = ARMS.map((arm) => r.runs[arm].referBacks ?? []);
	if (logs.every((l) => l.length === 0)) return "";
	const lines = [
		"## Work that refers back (a later stage quotes a value printed 20 stages earlier)",
		`| stage (from) | ${ARMS.join(" | ")} |`,
		`|---|${ARMS.map(() => "---").join("|")}|`,
	];
	const stages = logs.find((l) => l.length > 0) ?? [];
	for (const [i, ref] of stages.entries()) {
		const cells = logs.map((l) => {
			const x = l[i];
			return x ? `${x.via}${x.quoted ? "" : " (nothing quoted)"}` : "—";
		});
		lines.push(`| ${ref.stage} (${ref.from}) | ${cells.join(" | ")} |`);
	}
	lines.push("", "visible: in the window; search: one pi-fold search; redone: the earlier stage's command run again.");
	return lines.join("\n");
}

/** pi-fold's policy against native, the seed band and the physical floor, and the policies beside it. */
export function policiesText(r: SessionResult): string {
	if (r.policies.length === 0) return "";
	const native = r.reports.native.cost;
	const fold = r.reports["pi-fold"];
	const rows = [
		{
			name: "pi-fold (default: cost model, 3 batches raw)",
			cost: fold.cost,
			values: `${r.reports["pi-fold"].values?.visible ?? 0} + ${r.reports["pi-fold"].values?.recovered ?? 0} of ${r.values.length}`,
		},
		...r.policies.map((p) => ({
			name: p.name,
			cost: p.report.cost,
			values: `${p.values.recoverable} of ${p.values.of}`,
		})),
	];
	const x = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}x` : "—");
	const lines = [
		`## Policies (cost vs native, vs the seed band, vs the floor $${r.floorCost.toFixed(4)}: every new token written once, no cache read)`,
		"| policy | cost | vs native | vs seed band | vs floor | values kept |",
		"|---|---:|---:|---:|---:|---:|",
	];
	const band = r.policies.find((p) => p.name.startsWith("seed band"))?.report.cost ?? Number.NaN;
	for (const row of rows) {
		lines.push(
			`| ${row.name} | $${row.cost.toFixed(4)} | ${x(row.cost, native)} | ${x(row.cost, band)} | ${x(row.cost, r.floorCost)} | ${row.values} |`,
		);
	}
	lines.push("", ...r.policies.map((p) => `- ${p.name}: ${p.why}`));
	return lines.join("\n");
}

/** pi-fold and the prompt cache: commits on a cold cache, Pi's idle refreshes, tool runs past the cache's lifetime. */
export function cacheText(r: SessionResult): string {
	const run = r.runs["pi-fold"];
	const f = run.fold;
	if (!f) return "";
	const long = run.longRuns
		? `; tool runs past the cache's lifetime: ${run.longRuns.runs}, their turns ended with a commit: ${run.longRuns.used}`
		: "";
	return (
		`pi-fold and the prompt cache: ${f.coldCommits} commit(s) on a cold cache; idle refreshes stopped ${f.warming.stopped}, ` +
		`let go with a commit due ${f.warming.kept}${long}`
	);
}

export function healthText(r: SessionResult): string {
	return r.health.length === 0 ? "" : `WARNING: the run was not clean:\n- ${r.health.join("\n- ")}`;
}

export function chartSvg(r: SessionResult): string {
	const o = r.options;
	return renderRequestChart({
		title:
			`Prompt tokens per request: pi-fold vs native compaction vs none (${o.stages} stages, window ${int(o.window)}` +
			`${r.tier ? `, ${r.tier.multiplier ?? "higher"}x price tier above ${int(r.tier.above)}` : ""})`,
		series: ARMS.map((arm) => ({
			name: arm === "none" ? "none (no compaction)" : arm,
			color: COLORS[arm],
			points: r.runs[arm].records.filter((x) => x.kind !== "summary").map((x) => x.promptTokens),
		})),
		budget: r.budget,
		window: o.window,
		lines: [
			// pi-fold commits when a commit pays by the model's card, never past maxTarget of its budget.
			{
				tokens: DEFAULT_THRESHOLDS.maxTarget * r.budget,
				label: `pi-fold's ceiling ${int(DEFAULT_THRESHOLDS.maxTarget * r.budget)} (it commits when that pays, at the latest here)`,
			},
			{ tokens: r.compaction.threshold, label: `native compaction threshold ${int(r.compaction.threshold)}` },
			...(r.tier
				? [{ tokens: r.tier.above, label: `price tier: ${r.tier.multiplier ?? "higher"}x above ${int(r.tier.above)}` }]
				: []),
		],
	});
}

function armJson(r: SessionResult, arm: ArmName) {
	const run: ArmRun = r.runs[arm];
	const rep = r.reports[arm];
	return {
		report: {
			...rep,
			cost: round(rep.cost, 6),
			pooledCacheShare: round(rep.pooledCacheShare, 4),
			wallMs: round(rep.wallMs ?? Number.NaN, 1),
			...(rep.addedMsPerRequest
				? { addedMsPerRequest: { median: round(rep.addedMsPerRequest.median), p95: round(rep.addedMsPerRequest.p95) } }
				: {}),
		},
		costParts: {
			freshInput: round(r.costs[arm].freshInput, 6),
			cacheRead: round(r.costs[arm].cacheRead, 6),
			output: round(r.costs[arm].output, 6),
		},
		piSettings: run.settings,
		run: {
			completed: run.completed,
			stopped: run.stopped,
			refusedAsTooLong: run.refused,
			eventsPer100Requests: round(
				(100 * ((arm === "pi-fold" ? rep.commits : rep.compactions) ?? 0)) / Math.max(1, rep.requests),
				1,
			),
		},
		values: run.values,
		recallCalls: run.recallCalls,
		...(run.referBacks ? { referBacks: run.referBacks } : {}),
		...(run.longRuns ? { longRuns: run.longRuns } : {}),
		fold: run.fold ? { ...run.fold, handlerMs: run.fold.handlerMs.map((x) => round(x)) } : undefined,
		requests: run.records,
	};
}

function resultJson(r: SessionResult, command: string) {
	const o = r.options;
	return {
		machine: r.machine,
		command,
		scenario: o.scenario,
		defaults: { used: usesDefaults(o), why: SCENARIOS[o.scenario].why },
		config: {
			stages: o.stages,
			seed: o.seed,
			root: relative(REPO, o.root) || o.root,
			readLines: o.readLines,
			contextWindow: o.window,
			maxTokens: o.maxTokens,
			piSettings: r.sharedSettings,
			piCompaction: r.compaction,
			piFoldOptions: {},
			budget: r.budget,
			outputScale: o.outputScale ?? 1,
			summaryChars: o.summaryChars,
			plantedValues: r.values,
			...(o.cost ? { modelCost: o.cost } : {}),
			priceCard: o.card,
			warmup: o.warmup,
		},
		arms: Object.fromEntries(ARMS.map((arm) => [arm, armJson(r, arm)])),
		freshInputFloor: {
			...r.floor,
			target: round(r.floor.target, 1),
			nativeOverheadShare: round(r.floor.nativeOverheadShare, 4),
		},
		...(r.tier ? { priceTier: r.tier, requestsAboveTier: r.aboveTier } : {}),
		targets: r.targets,
		policies: {
			floorCost: round(r.floorCost, 6),
			runs: r.policies.map((p) => ({
				name: p.name,
				why: p.why,
				cost: round(p.report.cost, 6),
				vsNative: round(p.report.cost / r.reports.native.cost, 4),
				values: p.values,
				commits: p.report.commits,
				peak: p.report.peakPromptTokens,
			})),
		},
		recall: {
			caveat: RECALL_CAVEAT,
			withSearch: { ...recallSummary(r.runs["pi-fold"]), values: r.runs["pi-fold"].values },
			withoutSearch: {
				...recallSummary(r.noSearch),
				values: r.noSearch.values,
				cost: round(r.noSearchReport.cost, 6),
				requests: r.noSearch.records,
			},
			targets: r.recallTargets,
		},
		indexCoverage: { workload: r.index.workload, fixture: r.index.fixture ?? null },
		health: r.health,
	};
}

/** Write the scenario's JSON and SVG (session.json/.svg, session-tiered.json/.svg) into `outDir`, each atomically. */
export function writeSessionFiles(r: SessionResult, outDir: string, command: string): { json: string; svg: string } {
	mkdirSync(outDir, { recursive: true });
	const files = SCENARIOS[r.options.scenario].files;
	const json = resolve(outDir, files.json);
	const svg = resolve(outDir, files.svg);
	writeFileAtomic(json, `${JSON.stringify(resultJson(r, command), null, 2)}\n`);
	writeFileAtomic(svg, chartSvg(r));
	return { json, svg };
}
