// npm run bench:session — pi-fold against Pi's native compaction over one long scripted session.
//
// Two arms in one process, same script, same window, same Pi settings, same provider accounting:
// Pi 1.6 with pi-fold (registerPiFold(pi, {})) and Pi 1.6 with its own compaction. The workload is the
// runtime benchmark's (test/helpers/workload.ts: one agentic turn of real read/bash/ls calls over a code
// base from npm), scaled to 64 stages, with 8 seeded values planted in tool results; at the end one user
// message asks for them (bench/lib/recall-agent.ts). Every request's usage is what the faux provider
// reports (its common-prefix cache model); cost comes from a price card (src/report/price-card.ts).
//
// Prints a Markdown table; writes bench/results/session.json and bench/results/session.svg.
// Flags (all optional): --stages N --seed N --window N --max-tokens N --reserve-tokens N
// --keep-recent-tokens N --read-lines MIN-MAX --root DIR --summary-chars N --price-card FILE --out-dir DIR
// --no-warmup
import { mkdirSync, writeFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { parseArgs } from "node:util";
import { type ArmReport, summarizeArm } from "../src/report/arm-report.ts";
import { renderRequestChart } from "../src/report/chart-svg.ts";
import { DEFAULT_PRICE_CARD, loadPriceCardFile, type PriceCard } from "../src/report/price-card.ts";
import { renderArmTable } from "../src/report/table.ts";
import { DEFAULT_THRESHOLDS } from "../src/runtime/thresholds.ts";
import { removeTempDirs } from "../test/helpers/pi-harness.ts";
import { WORKLOAD_ROOT } from "../test/helpers/workload.ts";
import { machineNotes } from "./lib/harness.ts";
import { plantValues, type ValueReport } from "./lib/recall-agent.ts";
import { type ArmConfig, type ArmRun, runArm } from "./lib/session-arms.ts";

const VALUES = 8;
const WARMUP_STAGES = 8;

/**
 * Defaults. Pi's dist/ has mostly small files, so the workload's default 60-300-line reads add only
 * ~2k tokens a stage (~137k over 64 stages); reads of 400-2000 lines (Pi's read tool returns up to
 * 2000) bring it to ~225k, still short of what two compactions need at Pi's default threshold for a
 * 200k window (183.6k, then again after ~160k of regrowth). So Pi's threshold is lowered for BOTH
 * arms with reserveTokens 100k (compaction at 100k, half the window; 90k still compacts only once):
 * pi-fold cancels threshold compactions and keeps its own budget (window - maxTokens).
 */
const DEFAULTS = {
	stages: 64,
	seed: 7,
	window: 200_000,
	maxTokens: 4096,
	reserveTokens: 100_000,
	keepRecentTokens: 20_000,
	readLines: "400-2000",
	summaryChars: 6000,
};

const TARGETS = {
	costRatio: 0.85,
	freshInputRatio: 0.7,
	totalTokensRatio: 1.0,
	peakShareOfBudget: 0.85,
	unattributed: 0,
	recoverable: VALUES,
	nativeCompactions: 2,
};

function fail(msg: string): never {
	console.error(`bench:session: ${msg}`);
	process.exit(2);
}

function wholeNumber(name: string, raw: string | undefined, fallback: number, min = 1): number {
	if (raw === undefined) return fallback;
	const n = Number(raw);
	if (!Number.isSafeInteger(n) || n < min) fail(`--${name} must be a whole number >= ${min}, got "${raw}"`);
	return n;
}

function readLinesFlag(raw: string): { min: number; max: number } {
	const m = /^(\d+)-(\d+)$/.exec(raw);
	const min = Number(m?.[1]);
	const max = Number(m?.[2]);
	if (!m || !(min > 0 && max > min)) fail(`--read-lines must be MIN-MAX with 0 < MIN < MAX, got "${raw}"`);
	return { min, max };
}

const quantile = (xs: readonly number[], q: number) => {
	const s = [...xs].sort((a, b) => a - b);
	return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const round = (x: number, digits = 3) => Number(x.toFixed(digits));

function valueCounts(values: readonly ValueReport[]) {
	return {
		visible: values.filter((v) => v.outcome === "visible").length,
		recovered: values.filter((v) => v.outcome === "recovered").length,
		lost: values.filter((v) => v.outcome.startsWith("lost")).length,
	};
}

function report(run: ArmRun, card: PriceCard): ArmReport {
	const ms = run.fold?.handlerMs ?? [];
	return summarizeArm(run.arm, run.records, card, {
		...(run.fold ? { commits: run.fold.commits } : {}),
		compactions: run.compactions,
		...(run.fold
			? { rewrites: { attributed: run.fold.rewrites.attributed, unattributed: run.fold.rewrites.unattributed } }
			: {}),
		values: valueCounts(run.values),
		wallMs: run.wallMs,
		...(ms.length > 0 ? { addedMsPerRequest: { median: quantile(ms, 0.5), p95: quantile(ms, 0.95) } } : {}),
	});
}

/** The run must be what it claims: every request metered, no extension errors, no runtime problems. */
function health(run: ArmRun): string[] {
	const out: string[] = [];
	if (run.records.length !== run.captured) {
		out.push(`${run.arm}: ${run.records.length} usage records for ${run.captured} captured requests`);
	}
	out.push(...run.extensionErrors.map((e) => `${run.arm}: extension error ${e}`));
	out.push(...(run.fold?.problems ?? []).map((p) => `${run.arm}: runtime problem ${p}`));
	return out;
}

async function main() {
	const { values: flags } = parseArgs({
		options: {
			stages: { type: "string" },
			seed: { type: "string" },
			window: { type: "string" },
			"max-tokens": { type: "string" },
			"reserve-tokens": { type: "string" },
			"keep-recent-tokens": { type: "string" },
			"read-lines": { type: "string" },
			root: { type: "string" },
			"summary-chars": { type: "string" },
			"price-card": { type: "string" },
			"out-dir": { type: "string" },
			"no-warmup": { type: "boolean" },
		},
		strict: true,
	});
	const stages = wholeNumber("stages", flags.stages, DEFAULTS.stages, VALUES);
	const seed = wholeNumber("seed", flags.seed, DEFAULTS.seed, 0);
	const window = wholeNumber("window", flags.window, DEFAULTS.window, 1000);
	const maxTokens = wholeNumber("max-tokens", flags["max-tokens"], DEFAULTS.maxTokens);
	const reserveTokens = wholeNumber("reserve-tokens", flags["reserve-tokens"], DEFAULTS.reserveTokens);
	const keepRecentTokens = wholeNumber("keep-recent-tokens", flags["keep-recent-tokens"], DEFAULTS.keepRecentTokens);
	const summaryChars = wholeNumber("summary-chars", flags["summary-chars"], DEFAULTS.summaryChars);
	const readLines = readLinesFlag(flags["read-lines"] ?? DEFAULTS.readLines);
	const root = flags.root ? resolve(flags.root) : WORKLOAD_ROOT;
	const card = flags["price-card"] ? await loadPriceCardFile(flags["price-card"]) : DEFAULT_PRICE_CARD;
	const outDir = flags["out-dir"] ? resolve(flags["out-dir"]) : new URL("./results/", import.meta.url).pathname;

	const settings = { compaction: { enabled: true, reserveTokens, keepRecentTokens } };
	const values = plantValues(stages, VALUES, seed);
	const cfg: ArmConfig = {
		stages,
		seed,
		contextWindow: window,
		maxTokens,
		settings,
		values,
		summaryChars,
		readLines,
		root,
	};

	const machine = machineNotes();
	console.log(`# pi-fold session benchmark (${machine.date})`);
	console.log(`${machine.cpu}, ${machine.cores} cores, Node ${machine.node}`);
	console.log(
		`workload: ${stages} stages (seed ${seed}) over ${root}, reads of ${readLines.min}-${readLines.max} lines, ` +
			`${VALUES} planted values; window ${window}, maxTokens ${maxTokens}; Pi compaction ` +
			`reserveTokens ${reserveTokens} (threshold ${window - reserveTokens}), keepRecentTokens ${keepRecentTokens}; ` +
			`summaries of ${summaryChars} chars; price card: ${card.name}`,
	);

	if (!flags["no-warmup"]) {
		// Not reported: module loading, the core's first instantiation, V8's baseline tiers.
		const warm = { ...cfg, stages: WARMUP_STAGES, values: plantValues(WARMUP_STAGES, VALUES, seed) };
		await runArm("native", warm);
		await runArm("pi-fold", warm);
	}
	const native = await runArm("native", cfg);
	const folded = await runArm("pi-fold", cfg);
	const arms = [report(folded, card), report(native, card)];
	const [f, n] = arms;
	const budget = folded.fold?.budget ?? window - maxTokens;

	console.log(`\n## pi-fold vs native compaction (serving budget ${budget} tokens; peak shown with its share)`);
	console.log(renderArmTable(arms, { ratio: { numerator: "pi-fold", denominator: "native" }, budget }));

	console.log("\n## Planted values");
	console.log("| stage | value | pi-fold | native |");
	console.log("|---:|---|---|---|");
	for (let i = 0; i < values.length; i++) {
		const pf = folded.values[i];
		const via = pf.via ? ` (peek ${pf.via})` : "";
		console.log(`| ${values[i].stage} | \`${values[i].value}\` | ${pf.outcome}${via} | ${native.values[i].outcome} |`);
	}

	const ratio = (a: number, b: number) => (b === 0 ? Number.NaN : a / b);
	const recoverable = (f.values?.visible ?? 0) + (f.values?.recovered ?? 0);
	const targets = [
		{ what: "cost, pi-fold / native", measured: ratio(f.cost, n.cost), needed: `<= ${TARGETS.costRatio}` },
		{
			what: "fresh input, pi-fold / native",
			measured: ratio(f.freshInput, n.freshInput),
			needed: `<= ${TARGETS.freshInputRatio}`,
		},
		{
			what: "total tokens, pi-fold / native",
			measured: ratio(f.totalTokens, n.totalTokens),
			needed: `<= ${TARGETS.totalTokensRatio}`,
		},
		{
			what: "pi-fold peak request context / budget",
			measured: ratio(f.peakPromptTokens, budget),
			needed: `<= ${TARGETS.peakShareOfBudget}`,
		},
		{ what: "unattributed rewrites", measured: f.rewrites?.unattributed ?? Number.NaN, needed: "= 0" },
		{ what: "values recoverable by pi-fold", measured: recoverable, needed: `= ${TARGETS.recoverable}` },
		{ what: "native compactions (setup)", measured: native.compactions, needed: `>= ${TARGETS.nativeCompactions}` },
	].map((t, i) => {
		const limits = [
			TARGETS.costRatio,
			TARGETS.freshInputRatio,
			TARGETS.totalTokensRatio,
			TARGETS.peakShareOfBudget,
		] as const;
		const met =
			i < 4
				? t.measured <= limits[i]
				: i === 4
					? t.measured === 0
					: i === 5
						? t.measured === TARGETS.recoverable
						: t.measured >= TARGETS.nativeCompactions;
		return { ...t, measured: round(t.measured), met };
	});
	console.log("\n## Targets (from this run)");
	console.log("| target | measured | needed | |");
	console.log("|---|---:|---:|---|");
	for (const t of targets) console.log(`| ${t.what} | ${t.measured} | ${t.needed} | ${t.met ? "met" : "MISSED"} |`);

	const problems = [...health(native), ...health(folded)];
	if (problems.length > 0) console.log(`\nWARNING: the run was not clean:\n- ${problems.join("\n- ")}`);

	const series = [folded, native].map((r) => ({
		name: r.arm,
		points: r.records.filter((x) => x.kind !== "summary").map((x) => x.promptTokens),
	}));
	const svg = renderRequestChart({
		title: `Prompt tokens per request: pi-fold vs native compaction (${stages} stages, window ${window})`,
		series,
		budget,
		window,
		band: { min: DEFAULT_THRESHOLDS.minTarget * budget, max: DEFAULT_THRESHOLDS.maxTarget * budget },
		lines: [{ tokens: window - reserveTokens, label: `native compaction threshold ${window - reserveTokens}` }],
	});

	mkdirSync(outDir, { recursive: true });
	const jsonFile = resolve(outDir, "session.json");
	const svgFile = resolve(outDir, "session.svg");
	const armJson = (run: ArmRun, rep: ArmReport) => ({
		report: {
			...rep,
			cost: round(rep.cost, 6),
			pooledCacheShare: round(rep.pooledCacheShare, 4),
			wallMs: round(rep.wallMs ?? Number.NaN, 1),
			...(rep.addedMsPerRequest
				? { addedMsPerRequest: { median: round(rep.addedMsPerRequest.median), p95: round(rep.addedMsPerRequest.p95) } }
				: {}),
		},
		values: run.values,
		recallCalls: run.recallCalls,
		fold: run.fold ? { ...run.fold, handlerMs: run.fold.handlerMs.map((x) => round(x)) } : undefined,
		requests: run.records,
	});
	const result = {
		machine,
		command: `node bench/session.bench.ts ${process.argv.slice(2).join(" ")}`.trim(),
		config: {
			stages,
			seed,
			root: relative(resolve(new URL("..", import.meta.url).pathname), root),
			readLines,
			contextWindow: window,
			maxTokens,
			piSettings: settings,
			piFoldOptions: {},
			budget,
			summaryChars,
			plantedValues: values,
			priceCard: card,
		},
		arms: { "pi-fold": armJson(folded, f), native: armJson(native, n) },
		targets,
		health: problems,
	};
	writeFileSync(jsonFile, `${JSON.stringify(result, null, 2)}\n`);
	writeFileSync(svgFile, svg);
	console.log(`\nwrote ${jsonFile}\nwrote ${svgFile}`);
}

try {
	await main();
} finally {
	removeTempDirs();
}
