// The session benchmark as a function, shared by `npm run bench:session` and `npm run demo`: three
// arms over one long scripted session in one process — Pi 1.6 with pi-fold, Pi 1.6 with its native
// compaction, and Pi 1.6 with neither ("none") — same script, same window, same provider accounting.
// Here: the options (with their command-line parser), the run, the targets and the fresh-input floor
// analysis. The text, the chart and the JSON are in session-output.ts.
//
// The fresh-input floor: every message appended to the conversation is written to the provider's cache
// once, whatever the policy. "none" pays exactly that (it never rewrites anything), so its fresh input is
// the least any policy pays on this workload, and a fresh-input target below it is out of reach.
import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { SettingsManager } from "@earendil-works/pi-coding-agent";
import type { FauxCost } from "../../harness/pi-harness.ts";
import { WORKLOAD_ROOT } from "../../harness/workload.ts";
import type { PiFoldOptions } from "../../src/index.ts";
import { firstPriceTier, type PriceTierLimit } from "../../src/meter/budget.ts";
import { type ArmReport, type RequestRecord, summarizeArm } from "../../src/report/arm-report.ts";
import type { IndexCoverage } from "../../src/report/index-coverage.ts";
import { costOf, DEFAULT_PRICE_CARD, loadPriceCardFile, type PriceCard } from "../../src/report/price-card.ts";
import { machineNotes } from "./harness.ts";
import { type PlantedValue, plantValues, type ValueReport } from "./recall-agent.ts";
import { type ArmConfig, type ArmName, type ArmRun, type CompareProgress, runArm, trackRun } from "./session-arms.ts";
import { fixtureIndex, type RecallTarget, recallTargets } from "./session-recall.ts";
import {
	SCENARIO_NAMES,
	SCENARIOS,
	type ScenarioName,
	type ScenarioTargets,
	scenarioCard,
} from "./session-scenarios.ts";

/** Values planted at full scale (fewer when the run has fewer stages). */
export const VALUES = 8;
const WARMUP_STAGES = 8;
/** Report order: the two policies compared, then the unmanaged floor. */
export const ARMS: readonly ArmName[] = ["pi-fold", "native", "none"];

/** The first scenario's defaults (session-scenarios.ts): all of Pi's and pi-fold's, on a 100k window. */
export const SESSION_DEFAULTS = SCENARIOS.equal.defaults;

export const DEFAULTS_WHY = SCENARIOS.equal.why;

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
		o.root === WORKLOAD_ROOT
	);
}

/** The first scenario's targets (each scenario has its own: session-scenarios.ts). */
export const TARGETS = SCENARIOS.equal.targets;

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
	/** also run pi-fold under the other policies (the seed band, a 10-batch working set): the benchmark does, the demo not */
	comparePolicies?: boolean;
}

export class SessionArgsError extends Error {
	override name = "SessionArgsError";
}

export const SESSION_FLAGS_HELP =
	"--scenario equal|tiered|idle|all --stages N --seed N --window N --max-tokens N --reserve-tokens N " +
	"--keep-recent-tokens N --read-lines MIN-MAX --root DIR --summary-chars N --price-card FILE --out-dir DIR " +
	"--keep-sessions DIR --no-warmup";

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

export interface SessionArgs {
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

/** Dollars by token class (each request priced at its own tier). */
export interface CostParts {
	/** input + cache writes: prompt tokens not served from the cache */
	freshInput: number;
	cacheRead: number;
	output: number;
}

export function costParts(records: readonly RequestRecord[], card: PriceCard): CostParts {
	const parts = { freshInput: 0, cacheRead: 0, output: 0 };
	const none = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
	for (const r of records) {
		const p = r.promptTokens;
		parts.freshInput += costOf({ ...none, input: r.input, cacheWrite: r.cacheWrite, promptTokens: p }, card);
		parts.cacheRead += costOf({ ...none, cacheRead: r.cacheRead, promptTokens: p }, card);
		parts.output += costOf({ ...none, output: r.output, promptTokens: p }, card);
	}
	return parts;
}

export interface FloorAnalysis {
	/** fresh input of the "none" arm: what every policy pays at least on this workload */
	floor: number;
	piFoldAbove: number;
	nativeAbove: number;
	/** native's fresh input above the floor, as a share of native's fresh input */
	nativeOverheadShare: number;
	/** the fresh-input target in tokens: freshInputRatio x native */
	target: number;
	/** false when the target is below the floor: no policy can meet it on this workload */
	reachable: boolean;
	verdict: string;
}

const int = (n: number) => Math.round(n).toLocaleString("en-US");
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const usd = (x: number) => `$${x.toFixed(4)}`;
const signedUsd = (x: number) => (x < 0 ? `-${usd(-x)}` : `+${usd(x)}`);

export function floorAnalysis(
	fold: ArmReport,
	native: ArmReport,
	none: ArmReport,
	r = SCENARIOS.equal.targets.freshInputRatio ?? 0.7,
): FloorAnalysis {
	const floor = none.freshInput;
	const target = r * native.freshInput;
	const reachable = target >= floor;
	const nativeAbove = native.freshInput - floor;
	const nativeOverheadShare = native.freshInput > 0 ? nativeAbove / native.freshInput : 0;
	const head = `pi-fold fresh input = floor ${int(floor)} + ${int(fold.freshInput - floor)}; native = floor + ${int(nativeAbove)}`;
	const verdict = reachable
		? `${head}; ${r} x native = ${int(target)} >= floor ${int(floor)}: reachable (a policy may pay up to ` +
			`${int(target - floor)} above the floor); pi-fold ${fold.freshInput <= target ? "meets it" : `is ${int(fold.freshInput - target)} over it`}`
		: `${head}; ${r} x native = ${int(target)} < floor ${int(floor)}: unreachable by any policy on this workload ` +
			`(native's overhead above the floor is ${pct(nativeOverheadShare)} of its fresh input; ` +
			`the target needs more than ${pct(1 - r)})`;
	return {
		floor,
		piFoldAbove: fold.freshInput - floor,
		nativeAbove,
		nativeOverheadShare,
		target,
		reachable,
		verdict,
	};
}

export interface TargetResult {
	what: string;
	measured: number;
	needed: string;
	met: boolean;
	/** for a missed target: by how much, and why (from this run's numbers) */
	note?: string;
}

const round = (x: number, digits = 3) => Number(x.toFixed(digits));
const ratioOf = (a: number, b: number) => (b === 0 ? Number.NaN : a / b);

function missedBy(measured: number, limit: number): string {
	return `missed by ${round(measured - limit)} (${pct(measured / limit - 1)} above ${limit})`;
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
	recallTargets: RecallTarget[];
	/** problems that make the run not what it claims (empty for a clean run) */
	health: string[];
	/** pi-fold under other policies, same session: the seed's fixed band, and a 10-batch working set */
	policies: PolicyVariant[];
	/** the physical floor: none's fresh input and output, with no cache read at all */
	floorCost: number;
}

/** One policy run of the pi-fold arm, and what it cost. */
export interface PolicyVariant {
	name: string;
	why: string;
	report: ArmReport;
	values: { recoverable: number; of: number };
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

const quantile = (xs: readonly number[], q: number) => {
	const s = [...xs].sort((a, b) => a - b);
	return s.length === 0 ? Number.NaN : s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

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

/** Fresh input of the recall phase and of everything before it (workload requests and Pi's summaries). */
function freshByPhase(run: ArmRun): { work: number; recall: number } {
	const out = { work: 0, recall: 0 };
	for (const r of run.records) out[r.kind === "recall" ? "recall" : "work"] += r.input + r.cacheWrite;
	return out;
}

/** Mean prompt size of the requests that answer the conversation (Pi's summary requests left out). */
function meanContext(run: ArmRun): number {
	const xs = run.records.filter((r) => r.kind !== "summary").map((r) => r.promptTokens);
	return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Requests (work, recall and summaries) whose prompt passed the tier: billed at its rates, whole. */
export function aboveTier(run: ArmRun, tier: PriceTierLimit | undefined): number {
	return tier ? run.records.filter((x) => x.promptTokens > tier.above).length : 0;
}

function targetsOf(
	r: Record<ArmName, ArmReport>,
	costs: Record<ArmName, CostParts>,
	floor: FloorAnalysis,
	runs: Record<ArmName, ArmRun>,
	budget: number,
	card: PriceCard,
	t: ScenarioTargets,
	tier: PriceTierLimit | undefined,
): TargetResult[] {
	const f = r["pi-fold"];
	const n = r.native;
	const out: TargetResult[] = [];
	const ratioTarget = (what: string, measured: number, limit: number, why: () => string) => {
		const met = measured <= limit;
		out.push({
			what,
			measured: round(measured),
			needed: `<= ${limit}`,
			met,
			...(met ? {} : { note: `${missedBy(measured, limit)}: ${why()}` }),
		});
	};
	const fc = costs["pi-fold"];
	const nc = costs.native;
	ratioTarget("cost, pi-fold / native", ratioOf(f.cost, n.cost), t.costRatio, () => {
		const floorCost = floor.floor * card.base.cacheWrite * 1e-6;
		const saved = n.cost - f.cost;
		return (
			`the target needs pi-fold to cost ${usd((1 - t.costRatio) * n.cost)} less than native; it costs ` +
			`${saved >= 0 ? `${usd(saved)} less` : `${usd(-saved)} more`}. Native minus pi-fold by token class: cache reads ` +
			`${signedUsd(nc.cacheRead - fc.cacheRead)} (mean request context ${int(meanContext(runs["pi-fold"]))} vs ` +
			`${int(meanContext(runs.native))} tokens), output ${signedUsd(nc.output - fc.output)}, fresh input ` +
			`${signedUsd(nc.freshInput - fc.freshInput)} (both pay the floor, ${usd(floorCost)} at the base cache-write ` +
			`price, plus re-sent context: pi-fold ${usd(fc.freshInput - floorCost)}, native ${usd(nc.freshInput - floorCost)})`
		);
	});
	const freshRatio = t.freshInputRatio;
	if (freshRatio !== undefined)
		ratioTarget("fresh input, pi-fold / native", ratioOf(f.freshInput, n.freshInput), freshRatio, () => {
			// Split at the recall question: the workload (with its commits or compactions) and the recall phase.
			const floorPhases = freshByPhase(runs.none);
			const above = (arm: ArmName, events: number | undefined, what: string) => {
				const p = freshByPhase(runs[arm]);
				const work = p.work - floorPhases.work;
				const each = events
					? `, ${int(work / events)} per ${what} over ${events} ${what}${events === 1 ? "" : "s"}`
					: "";
				return `${int(work)} in the workload${each}, ${int(p.recall - floorPhases.recall)} in the recall phase`;
			};
			return (
				`${floor.verdict}. Above the floor, pi-fold sends ${above("pi-fold", f.commits, "commit")}; ` +
				`native ${above("native", n.compactions, "compaction")}`
			);
		});
	ratioTarget(
		"total tokens, pi-fold / native",
		ratioOf(f.totalTokens, n.totalTokens),
		t.totalTokensRatio,
		() =>
			`pi-fold ${int(f.totalTokens)} tokens (${pct(ratioOf(f.cacheRead, f.totalTokens))} cache reads), native ` +
			`${int(n.totalTokens)} (${pct(ratioOf(n.cacheRead, n.totalTokens))} cache reads); mean request context ` +
			`${int(meanContext(runs["pi-fold"]))} vs ${int(meanContext(runs.native))} tokens`,
	);
	ratioTarget(
		"pi-fold peak request context / budget",
		ratioOf(f.peakPromptTokens, budget),
		t.peakShareOfBudget,
		() => `pi-fold's largest request carried ${int(f.peakPromptTokens)} tokens of a ${int(budget)}-token budget`,
	);
	const unattributed = f.rewrites?.unattributed ?? Number.NaN;
	out.push({
		what: "unattributed rewrites",
		measured: unattributed,
		needed: "= 0",
		met: unattributed === 0,
		...(unattributed === 0 ? {} : { note: "a rewrite no commit explains is a bug: see arms.pi-fold.fold.rewrites" }),
	});
	const values = runs["pi-fold"].values;
	const recoverable = values.filter((v) => v.outcome === "visible" || v.outcome === "recovered").length;
	const lost = values.filter((v) => v.outcome.startsWith("lost"));
	out.push({
		what: "values recoverable by pi-fold",
		measured: recoverable,
		needed: `= ${values.length}`,
		met: recoverable === values.length,
		...(lost.length === 0 ? {} : { note: `lost: ${lost.map((v) => `stage ${v.stage} (${v.outcome})`).join(", ")}` }),
	});
	if (tier && t.piFoldAboveTier !== undefined) {
		const over = aboveTier(runs["pi-fold"], tier);
		out.push({
			what: `pi-fold requests above the price tier (${int(tier.above)})`,
			measured: over,
			needed: `= ${t.piFoldAboveTier}`,
			met: over === t.piFoldAboveTier,
			...(over === t.piFoldAboveTier
				? {}
				: { note: `pi-fold's budget was ${int(budget)}: a request above the tier means it did not bind` }),
		});
	}
	const compactions = runs.native.compactions;
	const wanted = t.nativeCompactions;
	if (wanted !== undefined) {
		out.push({
			what: "native compactions (setup)",
			measured: compactions,
			needed: `>= ${wanted}`,
			met: compactions >= wanted,
			...(compactions >= wanted
				? {}
				: {
						note:
							`native compacted ${compactions} time(s): the session is too short to show compaction's cost ` +
							"(more --stages or --read-lines, or a smaller --window)",
					}),
		});
	}
	if (tier && t.nativeAboveTier !== undefined) {
		const over = aboveTier(runs.native, tier);
		out.push({
			what: "native requests above the price tier (setup)",
			measured: over,
			needed: `>= ${t.nativeAboveTier}`,
			met: over >= t.nativeAboveTier,
			...(over >= t.nativeAboveTier
				? {}
				: { note: "native never passed the tier: the session is too short to show the surcharge (more --stages)" }),
		});
	}
	return out;
}

/** pi-fold's default policy must never cost more than the seed's band on the same session. */
function policyTargets(fold: ArmReport, policies: readonly PolicyVariant[]): TargetResult[] {
	const band = policies.find((p) => p.name.startsWith("seed band"));
	if (!band) return [];
	const measured = round(ratioOf(fold.cost, band.report.cost));
	return [{ what: "cost, pi-fold / seed band", measured, needed: "<= 1", met: measured <= 1 }];
}

/** The idle scenario's point: commits made where a cold cache made the rewrite free. */
function coldTargets(run: ArmRun, t: ScenarioTargets): TargetResult[] {
	if (t.coldCommits === undefined) return [];
	const measured = run.fold?.coldCommits ?? 0;
	return [
		{
			what: "pi-fold commits on a cold cache",
			measured,
			needed: `>= ${t.coldCommits}`,
			met: measured >= t.coldCommits,
		},
	];
}

/** The shared Pi settings: only the compaction flags given (Pi's defaults otherwise). */
function sharedSettingsOf(o: SessionOptions): Record<string, unknown> {
	const compaction = {
		...(o.reserveTokens !== undefined ? { reserveTokens: o.reserveTokens } : {}),
		...(o.keepRecentTokens !== undefined ? { keepRecentTokens: o.keepRecentTokens } : {}),
	};
	return Object.keys(compaction).length > 0 ? { compaction } : {};
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
	const cfg: ArmConfig = {
		stages: o.stages,
		seed: o.seed,
		contextWindow: o.window,
		maxTokens: o.maxTokens,
		settings: sharedSettings,
		values,
		summaryChars: o.summaryChars,
		readLines: o.readLines,
		root: o.root,
		...(o.cost ? { cost: o.cost } : {}),
		...(o.idle ? { idle: o.idle } : {}),
	};
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
		targets: [
			...targetsOf(reports, costs, floor, runs, budget, o.card, scenario.targets, tier),
			...policyTargets(reports["pi-fold"], policies),
			...coldTargets(runs["pi-fold"], scenario.targets),
		],
		policies,
		floorCost: costs.none.freshInput + costs.none.output,
		noSearch,
		noSearchReport: report(noSearch, o.card),
		index,
		recallTargets: recallTargets(runs["pi-fold"], noSearch, index),
		health: [...ARMS.flatMap((arm) => health(runs[arm], o.window)), ...health(noSearch, o.window)],
	};
}
