// The session benchmark as a function, shared by `npm run bench:session` and `npm run demo`: three
// arms over one long scripted session in one process — Pi 1.6 with pi-fold, Pi 1.6 with its native
// compaction, and Pi 1.6 with neither ("none") — same script, same window, same provider accounting.
// Here: the options (with their command-line parser) and the run. The targets and the fresh-input floor
// analysis are in session-targets.ts; the text, the chart and the JSON in session-output.ts.
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { SettingsManager } from "@earendil-works/pi-coding-agent";
import type { FauxCost } from "../../harness/pi-harness.ts";
import { WORKLOAD_ROOT } from "../../harness/workload.ts";
import type { PiFoldOptions } from "../../src/index.ts";
import { firstPriceTier, type PriceTierLimit } from "../../src/meter/budget.ts";
import { type ArmReport, summarizeArm } from "../../src/report/arm-report.ts";
import type { IndexCoverage } from "../../src/report/index-coverage.ts";
import { DEFAULT_PRICE_CARD, loadPriceCardFile, type PriceCard } from "../../src/report/price-card.ts";
import { machineNotes } from "./harness.ts";
import { type PlantedValue, plantValues, type ValueReport } from "./recall-agent.ts";
import {
	ARMS,
	type ArmConfig,
	type ArmName,
	type ArmRun,
	type CompareProgress,
	runArm,
	trackRun,
} from "./session-arms.ts";
import { fixtureIndex, recallTargets } from "./session-recall.ts";
import {
	type LongRunsConfig,
	SCENARIO_NAMES,
	SCENARIOS,
	type ScenarioName,
	scenarioCard,
} from "./session-scenarios.ts";
import {
	aboveTier,
	type CostParts,
	costParts,
	type FloorAnalysis,
	floorAnalysis,
	type PolicyVariant,
	sessionTargets,
	type TargetResult,
} from "./session-targets.ts";
import { quantile } from "./stats.ts";

/** Values planted at full scale (fewer when the run has fewer stages). */
const VALUES = 8;
const WARMUP_STAGES = 8;

/** True when the run uses every default setting (the flags that only pick outputs, seed or price card aside). */
export function usesDefaults(o: SessionOptions): boolean {
	const d = SCENARIOS[o.scenario].defaults;
	return (
		o.stages === d.stages &&
		o.window === d.window &&
		o.maxTokens === d.maxTokens &&
		o.reserveTokens === undefined &&
		o.keepRecentTokens === undefined &&
		`${o.readLines.min}-${o.readLines.max}` === d.readLines &&
		o.summaryChars === d.summaryChars &&
		(o.outputScale ?? 1) === (d.outputScale ?? 1) &&
		o.root === WORKLOAD_ROOT
	);
}

export interface SessionOptions {
	scenario: ScenarioName;
	stages: number;
	seed: number;
	window: number;
	maxTokens: number;
	/** Pi compaction settings from the command line; absent: Pi's own defaults */
	reserveTokens?: number;
	keepRecentTokens?: number;
	readLines: { min: number; max: number };
	root: string;
	summaryChars: number;
	card: PriceCard;
	/** run a short unreported pass of every arm first (module loading, Wasm instantiation, V8 tiers) */
	warmup: boolean;
	/** the faux model's catalog cost (the scenario's), price tiers included */
	cost?: FauxCost;
	/** a directory to copy each arm's session file into, as <scenario>-<arm>.jsonl (for `pi-fold replay`) */
	keepSessions?: string;
	/** prompts of `every` stages with idle gaps (the scenario's; none by default) */
	idle?: { every: number; gapSeconds: number };
	/** tool runs past the cache's lifetime (the scenario's; none by default) */
	longRuns?: LongRunsConfig;
	/** later stages quote values earlier ones printed (the scenario's) */
	referBack?: boolean;
	/** tool calls per stage, times this (the scenario's; 1 by default) */
	outputScale?: number;
	/** also run pi-fold under the other policies (the seed band, a 10-batch working set): the benchmark does, the demo not */
	comparePolicies?: boolean;
}

export class SessionArgsError extends Error {
	override name = "SessionArgsError";
}

const SESSION_FLAGS_HELP =
	`--scenario ${SCENARIO_NAMES.join("|")}|all --stages N --seed N --window N --max-tokens N --reserve-tokens N ` +
	"--keep-recent-tokens N --read-lines MIN-MAX --output-scale N --root DIR --summary-chars N --price-card FILE " +
	"--out-dir DIR --keep-sessions DIR --no-warmup";

function wholeNumber(name: string, raw: string | undefined, fallback: number, min = 1): number {
	if (raw === undefined) return fallback;
	const n = Number(raw);
	if (!Number.isSafeInteger(n) || n < min) {
		throw new SessionArgsError(`--${name} must be a whole number >= ${min}, got "${raw}"`);
	}
	return n;
}

function optionalWhole(name: string, raw: string | undefined, min: number): number | undefined {
	return raw === undefined ? undefined : wholeNumber(name, raw, 0, min);
}

function readLinesFlag(raw: string): { min: number; max: number } {
	const m = /^(\d+)-(\d+)$/.exec(raw);
	const min = Number(m?.[1]);
	const max = Number(m?.[2]);
	if (!m || !(min > 0 && max > min)) {
		throw new SessionArgsError(`--read-lines must be MIN-MAX with 0 < MIN < MAX, got "${raw}"`);
	}
	return { min, max };
}

interface SessionArgs {
	/** The options of the first scenario to run. */
	options: SessionOptions;
	/** The scenarios to run (--scenario; default: both), and each one's options. */
	scenarios: ScenarioName[];
	optionsFor(scenario: ScenarioName): SessionOptions;
	outDir?: string;
}

/** Options from command-line flags (see SESSION_FLAGS_HELP); throws SessionArgsError naming the bad flag. */
export async function parseSessionArgs(argv: readonly string[]): Promise<SessionArgs> {
	let flags: Record<string, string | boolean | undefined>;
	try {
		flags = parseArgs({
			args: [...argv],
			options: {
				scenario: { type: "string" },
				"keep-sessions": { type: "string" },
				stages: { type: "string" },
				seed: { type: "string" },
				window: { type: "string" },
				"max-tokens": { type: "string" },
				"reserve-tokens": { type: "string" },
				"keep-recent-tokens": { type: "string" },
				"read-lines": { type: "string" },
				"output-scale": { type: "string" },
				root: { type: "string" },
				"summary-chars": { type: "string" },
				"price-card": { type: "string" },
				"out-dir": { type: "string" },
				"no-warmup": { type: "boolean" },
			},
			strict: true,
			allowPositionals: false,
		}).values;
	} catch (e) {
		throw new SessionArgsError(`${(e as Error).message} (flags: ${SESSION_FLAGS_HELP})`);
	}
	const str = (k: string) => flags[k] as string | undefined;
	const which = str("scenario") ?? "all";
	const scenarios = which === "all" ? [...SCENARIO_NAMES] : SCENARIO_NAMES.filter((n) => n === which);
	if (scenarios.length === 0) {
		throw new SessionArgsError(`--scenario must be ${SCENARIO_NAMES.join(", ")} or all, got "${which}"`);
	}
	let given: PriceCard | undefined;
	const cardFile = str("price-card");
	if (cardFile !== undefined) {
		try {
			given = await loadPriceCardFile(cardFile);
		} catch (e) {
			throw new SessionArgsError((e as Error).message);
		}
	}
	const keep = str("keep-sessions");
	const optionsFor = (name: ScenarioName): SessionOptions => {
		const scenario = SCENARIOS[name];
		const d = scenario.defaults;
		const options: SessionOptions = {
			scenario: name,
			stages: wholeNumber("stages", str("stages"), d.stages),
			seed: wholeNumber("seed", str("seed"), d.seed, 0),
			window: wholeNumber("window", str("window"), d.window, 1000),
			maxTokens: wholeNumber("max-tokens", str("max-tokens"), d.maxTokens),
			reserveTokens: optionalWhole("reserve-tokens", str("reserve-tokens"), 0),
			keepRecentTokens: optionalWhole("keep-recent-tokens", str("keep-recent-tokens"), 0),
			readLines: readLinesFlag(str("read-lines") ?? d.readLines),
			root: str("root") ? resolve(str("root") as string) : WORKLOAD_ROOT,
			summaryChars: wholeNumber("summary-chars", str("summary-chars"), d.summaryChars),
			// A given card overrides; else the scenario model's own cost prices it, else the default card.
			card: given ?? scenarioCard(scenario) ?? DEFAULT_PRICE_CARD,
			warmup: flags["no-warmup"] !== true,
			...(scenario.cost ? { cost: scenario.cost } : {}),
			...(d.idle ? { idle: d.idle } : {}),
			...(d.longRuns ? { longRuns: d.longRuns } : {}),
			...(d.referBack ? { referBack: true } : {}),
			...(str("output-scale") !== undefined || d.outputScale
				? { outputScale: wholeNumber("output-scale", str("output-scale"), d.outputScale ?? 1) }
				: {}),
			...(keep !== undefined ? { keepSessions: resolve(keep) } : {}),
		};
		if (options.reserveTokens !== undefined && options.reserveTokens >= options.window) {
			throw new SessionArgsError(
				`--reserve-tokens (${options.reserveTokens}) must be below --window (${options.window}): Pi would compact before every request`,
			);
		}
		return options;
	};
	const all = new Map(scenarios.map((n) => [n, optionsFor(n)]));
	const outDir = str("out-dir");
	return {
		options: all.get(scenarios[0]) as SessionOptions,
		scenarios,
		optionsFor: (n) => all.get(n) ?? optionsFor(n),
		...(outDir !== undefined ? { outDir: resolve(outDir) } : {}),
	};
}

function valueCounts(values: readonly ValueReport[]) {
	return {
		visible: values.filter((v) => v.outcome === "visible").length,
		recovered: values.filter((v) => v.outcome === "recovered").length,
		lost: values.filter((v) => v.outcome.startsWith("lost")).length,
	};
}

export interface SessionResult {
	options: SessionOptions;
	machine: ReturnType<typeof machineNotes>;
	values: PlantedValue[];
	/** the Pi settings every arm shares (the "none" arm's adds compaction off: see runs.none.settings) */
	sharedSettings: Record<string, unknown>;
	/** Pi's compaction settings as Pi resolves them (the native arm's), and its threshold */
	compaction: { reserveTokens: number; keepRecentTokens: number; threshold: number; piDefaults: boolean };
	/** pi-fold's serving budget */
	budget: number;
	/** the model's first price tier, and each arm's requests above it (the tiered scenario) */
	tier?: PriceTierLimit;
	aboveTier?: Record<ArmName, number>;
	runs: Record<ArmName, ArmRun>;
	reports: Record<ArmName, ArmReport>;
	costs: Record<ArmName, CostParts>;
	floor: FloorAnalysis;
	targets: TargetResult[];
	/** the pi-fold arm again, its recall agent without search (the index and peek only) */
	noSearch: ArmRun;
	noSearchReport: ArmReport;
	/** index coverage: the bench workload's window at the recall question, and the real fixture's */
	index: { workload?: IndexCoverage; fixture?: IndexCoverage };
	recallTargets: TargetResult[];
	/** problems that make the run not what it claims (empty for a clean run) */
	health: string[];
	/** pi-fold under other policies, same session: the seed's fixed band, and a 10-batch working set */
	policies: PolicyVariant[];
	/** the physical floor: none's fresh input and output, with no cache read at all */
	floorCost: number;
}

/** The policies every scenario also runs pi-fold with: the seed's band, and the study's 10-turn rule. */
const POLICY_VARIANTS: readonly { name: string; why: string; options: PiFoldOptions }[] = [
	{
		name: "seed band 0.8/0.4",
		why: "the fixed band pi-fold began with: commit at 80% of the budget, fold down to 40%",
		options: { thresholds: { maxTarget: 0.8, minTarget: 0.4 } },
	},
	{
		name: "cost model, 10 batches raw",
		why: "the cost model with the last 10 tool batches kept raw (observation masking's 10-turn rule)",
		options: { thresholds: { rawBatches: 10 } },
	},
];

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
		overWindow: run.overWindow,
	});
}

/** The run must be what it claims: every request metered, no extension errors, no runtime problems. */
function health(run: ArmRun, window: number): string[] {
	const out: string[] = [];
	if (run.records.length !== run.captured) {
		out.push(`${run.arm}: ${run.records.length} usage records for ${run.captured} captured requests`);
	}
	out.push(...run.extensionErrors.map((e) => `${run.arm}: extension error ${e}`));
	out.push(...(run.fold?.problems ?? []).map((p) => `${run.arm}: runtime problem ${p}`));
	// Only "none" may send more than the window (that is what it shows); a managed arm doing so is a failure.
	if (run.arm !== "none" && run.overWindow > 0) {
		out.push(`${run.arm}: ${run.overWindow} request(s) larger than the ${window}-token window`);
	}
	return out;
}

/** The shared Pi settings: only the compaction flags given (Pi's defaults otherwise). */
function sharedSettingsOf(o: SessionOptions): Record<string, unknown> {
	const compaction = {
		...(o.reserveTokens !== undefined ? { reserveTokens: o.reserveTokens } : {}),
		...(o.keepRecentTokens !== undefined ? { keepRecentTokens: o.keepRecentTokens } : {}),
	};
	return Object.keys(compaction).length > 0 ? { compaction } : {};
}

/** What every arm of the run shares. */
function armConfigOf(o: SessionOptions, settings: Record<string, unknown>, values: PlantedValue[]): ArmConfig {
	return {
		stages: o.stages,
		seed: o.seed,
		contextWindow: o.window,
		maxTokens: o.maxTokens,
		settings,
		values,
		summaryChars: o.summaryChars,
		readLines: o.readLines,
		root: o.root,
		...(o.cost ? { cost: o.cost } : {}),
		...(o.idle ? { idle: o.idle } : {}),
		...(o.longRuns ? { longRuns: o.longRuns } : {}),
		...(o.referBack ? { referBack: true } : {}),
		...(o.outputScale && o.outputScale > 1 ? { outputScale: o.outputScale } : {}),
	};
}

/** Run the warm-up (unless disabled) and the three arms, and analyse them. */
export async function runSessionCompare(
	options: SessionOptions,
	onProgress?: (p: CompareProgress) => void,
): Promise<SessionResult> {
	const o = options;
	const sharedSettings = sharedSettingsOf(o);
	const resolved = SettingsManager.inMemory(sharedSettings).getCompactionSettings();
	const count = Math.min(VALUES, o.stages);
	const values = plantValues(o.stages, count, o.seed);
	const cfg = armConfigOf(o, sharedSettings, values);
	if (o.keepSessions) mkdirSync(o.keepSessions, { recursive: true });
	const total = (o.warmup ? ARMS.length : 0) + ARMS.length + 1 + (o.comparePolicies ? POLICY_VARIANTS.length : 0);
	let started = 0;
	const tracked = (run: string, c: ArmConfig) => trackRun(c, { run, index: ++started, runs: total }, onProgress);
	if (o.warmup) {
		const stages = Math.min(WARMUP_STAGES, o.stages);
		const warm = { ...cfg, stages, values: plantValues(stages, Math.min(VALUES, stages), o.seed) };
		for (const arm of ARMS) await runArm(arm, tracked(`warm-up ${arm}`, warm));
	}
	const runs = {} as Record<ArmName, ArmRun>;
	for (const arm of ARMS) {
		const keep = o.keepSessions ? { keepSessionAs: join(o.keepSessions, `${o.scenario}-${arm}.jsonl`) } : {};
		runs[arm] = await runArm(arm, tracked(arm, { ...cfg, ...keep }));
	}
	const noSearch = await runArm("pi-fold", tracked("pi-fold without search", { ...cfg, recallSearch: false }));
	const policies: PolicyVariant[] = [];
	for (const v of o.comparePolicies ? POLICY_VARIANTS : []) {
		const run = await runArm("pi-fold", tracked(`pi-fold, ${v.name}`, { ...cfg, piFoldOptions: v.options }));
		const recoverable = run.values.filter((x) => x.outcome === "visible" || x.outcome === "recovered").length;
		policies.push({
			name: v.name,
			why: v.why,
			report: report(run, o.card),
			values: { recoverable, of: run.values.length },
		});
	}
	const index = { workload: runs["pi-fold"].fold?.index, fixture: await fixtureIndex() };
	const reports = {} as Record<ArmName, ArmReport>;
	const costs = {} as Record<ArmName, CostParts>;
	for (const arm of ARMS) {
		reports[arm] = report(runs[arm], o.card);
		costs[arm] = costParts(runs[arm].records, o.card);
	}
	const budget = runs["pi-fold"].fold?.budget ?? o.window - o.maxTokens;
	const floor = floorAnalysis(reports["pi-fold"], reports.native, reports.none);
	const scenario = SCENARIOS[o.scenario];
	const tier = firstPriceTier(o.cost);
	return {
		options: o,
		machine: machineNotes(),
		values,
		sharedSettings,
		compaction: {
			reserveTokens: resolved.reserveTokens,
			keepRecentTokens: resolved.keepRecentTokens,
			threshold: o.window - resolved.reserveTokens,
			piDefaults: o.reserveTokens === undefined && o.keepRecentTokens === undefined,
		},
		budget,
		runs,
		reports,
		costs,
		floor,
		...(tier
			? {
					tier,
					aboveTier: Object.fromEntries(ARMS.map((a) => [a, aboveTier(runs[a], tier)])) as Record<ArmName, number>,
				}
			: {}),
		targets: sessionTargets({
			reports,
			costs,
			floor,
			runs,
			budget,
			window: o.window,
			card: o.card,
			targets: scenario.targets,
			tier,
			policies,
		}),
		policies,
		floorCost: costs.none.freshInput + costs.none.output,
		noSearch,
		noSearchReport: report(noSearch, o.card),
		index,
		recallTargets: recallTargets(runs["pi-fold"], noSearch, index),
		health: [...ARMS.flatMap((arm) => health(runs[arm], o.window)), ...health(noSearch, o.window)],
	};
}
