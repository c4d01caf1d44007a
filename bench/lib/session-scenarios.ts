// The session benchmark's scenarios: what each one runs and what it must show.
//
// - equal: every default of Pi and pi-fold on a 100,000-token window with no price tier. Both policies
//   serve the same window, so pi-fold's saving is only what folding saves over summarising: the honest
//   target is to cost no more than native compaction, with nothing lost.
// - tiered: a model shaped like the catalog's gpt-5.x (a 400,000 window, 128,000 maxTokens, a 2x tier
//   above 272,000 input tokens: opencode/gpt-5.5's prices), registered as the faux model's own
//   `cost.tiers` and every request priced by it. Pi's compaction, at its defaults, fires only near
//   window - reserveTokens (383,616), so native pays the tier on every request above 272,000; pi-fold's
//   budget is the tier, so none of its requests pass it.

import { FAUX_MODEL, FAUX_PROVIDER, type FauxCost } from "../../harness/pi-harness.ts";
import type { PriceCard } from "../../src/report/price-card.ts";
import { cardOfModel } from "../../src/report/price-card.ts";

export type ScenarioName =
	| "equal"
	| "refer"
	| "tiered"
	| "idle"
	| "longrun"
	| "window32k"
	| "window64k"
	| "window100k"
	| "output2x"
	| "output4x";
export const SCENARIO_NAMES: readonly ScenarioName[] = [
	"equal",
	"refer",
	"tiered",
	"idle",
	"longrun",
	"window32k",
	"window64k",
	"window100k",
	"output2x",
	"output4x",
];

interface ScenarioDefaults {
	stages: number;
	seed: number;
	window: number;
	maxTokens: number;
	readLines: string;
	summaryChars: number;
	/** Prompts of this many stages, the person idle this long (simulated) before each next one. */
	idle?: { every: number; gapSeconds: number };
	/** Later stages must quote values earlier stages printed (bench/lib/session-arms.ts referBacksOf). */
	referBack?: boolean;
	/** Tool calls per stage, times this (default 1: 2-4 a stage). */
	outputScale?: number;
	/** These tool batches' first tool runs `seconds` (simulated), past the model's declared cache lifetime. */
	longRuns?: LongRunsConfig;
}

/** Tool runs longer than the prompt cache's lifetime, which the model declares. */
export interface LongRunsConfig {
	batches: number[];
	seconds: number;
	ttlSeconds: number;
}

/** Ratio targets are "at most"; the counts are exact. Absent: not a target of that scenario. */
export interface ScenarioTargets {
	costRatio: number;
	totalTokensRatio: number;
	/** pi-fold's largest request against its budget; absent: against the window (the budget is not a wall) */
	peakShareOfBudget?: number;
	freshInputRatio?: number;
	/** native compactions the session must be long enough for (a setup check) */
	nativeCompactions?: number;
	/** pi-fold requests above the model's first price tier: exactly this many */
	piFoldAboveTier?: number;
	/** native requests above the tier, at least (a setup check: the scenario shows the surcharge) */
	nativeAboveTier?: number;
	/** pi-fold commits made on a cold prompt cache, at least */
	coldCommits?: number;
	/** tool runs past the cache's lifetime whose turn ended with a pi-fold commit, at least */
	longRunsUsed?: number;
	/** stages that refer back and quote the right value, in every arm */
	referBacksQuoted?: boolean;
	/** pi-fold's prefix rewrites per request, at most (commits and other rewrites over every request) */
	rewritesPerRequest?: number;
}

interface Scenario {
	name: ScenarioName;
	title: string;
	defaults: ScenarioDefaults;
	why: string;
	/** the faux model's catalog cost (absent: none, so the price card prices every request) */
	cost?: FauxCost;
	targets: ScenarioTargets;
	/** result files under the output directory */
	files: { json: string; svg: string };
}

/** opencode/gpt-5.5's catalog prices: $5 in / $0.50 cache read / $30 out per M, the whole request $10/$1/$45 above 272,000. */
export const TIERED_COST: FauxCost = {
	input: 5,
	output: 30,
	cacheRead: 0.5,
	cacheWrite: 0,
	tiers: [{ inputTokensAbove: 272_000, input: 10, output: 45, cacheRead: 1, cacheWrite: 0 }],
};

/** The default card's base rates as a catalog cost: $5 in / $0.50 cache read / $30 out per M, writes at the input rate. */
export const EQUAL_COST: FauxCost = { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 0 };

/** The equal window's session, which the refer and idle scenarios vary. */
const EQUAL_DEFAULTS: ScenarioDefaults = {
	stages: 64,
	seed: 7,
	window: 200_000,
	maxTokens: 4096,
	readLines: "400-2000",
	summaryChars: 6000,
};

/** The equal scenario's session on another window, Pi's and pi-fold's defaults. */
function windowScenario(window: 64_000 | 100_000, targets: ScenarioTargets): Scenario {
	const k = window / 1000;
	const name: ScenarioName = window === 64_000 ? "window64k" : "window100k";
	return {
		name,
		title: `a ${window.toLocaleString("en-US")} window`,
		defaults: { ...EQUAL_DEFAULTS, window },
		why: `The equal scenario's session on a ${window.toLocaleString("en-US")}-token window, Pi's and pi-fold's defaults.`,
		cost: EQUAL_COST,
		targets,
		files: { json: `session-${k}k.json`, svg: `session-${k}k.svg` },
	};
}

/** The equal window's session with `scale` times the tool calls per stage. */
function outputScenario(scale: 2 | 4, times: string, calls: string, effect: string): Scenario {
	const name: ScenarioName = scale === 2 ? "output2x" : "output4x";
	return {
		name,
		title: `the equal window's session with ${times} the tool output per stage`,
		defaults: { ...EQUAL_DEFAULTS, outputScale: scale },
		why: `The equal scenario's session and model with ${times} the tool calls per stage (${calls}): ${effect}.`,
		cost: EQUAL_COST,
		targets: { costRatio: 0.6, totalTokensRatio: 1.0, nativeCompactions: 1 },
		files: { json: `session-${name}.json`, svg: `session-${name}.svg` },
	};
}

export const SCENARIOS: Record<ScenarioName, Scenario> = {
	equal: {
		name: "equal",
		title: "equal window, no price tier",
		defaults: EQUAL_DEFAULTS,
		why:
			"The defaults are Pi's and pi-fold's own: a 200,000-token window (what today's coding models serve), Pi's " +
			"compaction settings and pi-fold's default options, so both policies serve the same window (an earlier setup " +
			"lowered Pi's threshold to half the window for native only: not like for like). Reads of 400-2000 lines make " +
			"64 stages large enough for native compaction to fire. Any flag still overrides (e.g. --window 100000). " +
			"The model declares the default card's base prices as its own cost, as a catalog model does, so pi-fold can price a commit.",
		cost: EQUAL_COST,
		targets: {
			costRatio: 0.6,
			totalTokensRatio: 1.0,
			peakShareOfBudget: 0.85,
			nativeCompactions: 1,
		},
		files: { json: "session.json", svg: "session.svg" },
	},
	refer: {
		name: "refer",
		title: "the equal window's session, with later stages that need what earlier ones found",
		defaults: { ...EQUAL_DEFAULTS, referBack: true },
		why:
			"The equal scenario's session and model, where 5 later stages must quote the value printed 20 stages " +
			"earlier. The agent knows only what a model would: it quotes the value when the window shows it; otherwise " +
			"pi-fold's arm searches its folds once, and the other arms run the earlier stage's command again. Both cost " +
			"requests and tokens, counted in each arm's bill.",
		cost: EQUAL_COST,
		targets: { costRatio: 0.6, totalTokensRatio: 1.0, peakShareOfBudget: 0.85, referBacksQuoted: true },
		files: { json: "session-refer.json", svg: "session-refer.svg" },
	},
	tiered: {
		name: "tiered",
		title: "a 400,000 window with a 2x price tier above 272,000",
		defaults: { stages: 240, seed: 7, window: 400_000, maxTokens: 128_000, readLines: "400-2000", summaryChars: 6000 },
		why:
			"A model shaped like the catalog's gpt-5.x: a 400,000-token window, 128,000 maxTokens and opencode/gpt-5.5's " +
			"prices with its 2x tier above 272,000 input tokens, registered as the faux model's cost and pricing every " +
			"request. Pi's compaction settings and pi-fold's options are the defaults. As in the first scenario, the " +
			"session is long enough for native compaction to fire at least twice: 240 stages take it past native's " +
			"threshold (383,616) twice, paying the tier on each way up. The ratio depends on that length: the tier costs " +
			"native only on the way from 272,000 to its threshold.",
		cost: TIERED_COST,
		targets: {
			costRatio: 0.6,
			totalTokensRatio: 1.0,
			peakShareOfBudget: 0.85,
			piFoldAboveTier: 0,
			nativeCompactions: 2,
			nativeAboveTier: 1,
		},
		files: { json: "session-tiered.json", svg: "session-tiered.svg" },
	},
	idle: {
		name: "idle",
		title: "a 200,000 window, 8 prompts with idle gaps past the prompt cache's lifetime",
		defaults: { ...EQUAL_DEFAULTS, idle: { every: 8, gapSeconds: 600 } },
		why:
			"The equal scenario's session and model, spread over 8 prompts of 8 stages with the person away 10 minutes " +
			"(simulated) before each next prompt and before the recall question. The faux provider's cache keeps an entry " +
			"5 minutes (Pi's default retention) for every arm alike, so each prompt's first request is written whole: a " +
			"commit there re-sends nothing a request would not have written anyway, and pi-fold folds then.",
		cost: EQUAL_COST,
		targets: { costRatio: 0.6, totalTokensRatio: 1.0, peakShareOfBudget: 0.85, coldCommits: 1 },
		files: { json: "session-idle.json", svg: "session-idle.svg" },
	},
	longrun: {
		name: "longrun",
		title: "a 200,000 window, three tool runs longer than the prompt cache's lifetime",
		defaults: { ...EQUAL_DEFAULTS, longRuns: { batches: [16, 32, 48], seconds: 360, ttlSeconds: 300 } },
		why:
			"The equal scenario's session and model, where the model declares a 5-minute prompt cache and three tools " +
			"(in stages 16, 32 and 48) run 6 minutes each (simulated), as a long build or test run does. The faux " +
			"provider's cache keeps an entry 5 minutes for every arm alike, so the request after each long run is " +
			"written whole: a commit at the end of that turn re-sends nothing a request would not, and pi-fold must " +
			"hear that boundary although it decided whether to listen before the tool ran.",
		cost: EQUAL_COST,
		targets: { costRatio: 0.55, totalTokensRatio: 1.0, peakShareOfBudget: 0.85, longRunsUsed: 2 },
		files: { json: "session-longrun.json", svg: "session-longrun.svg" },
	},
	window32k: {
		name: "window32k",
		title: "a 32,000 window, as many local models serve",
		defaults: { ...EQUAL_DEFAULTS, window: 32_000 },
		why:
			"The equal scenario's session on a 32,000-token window with Pi's default compaction settings: Pi's threshold " +
			"(window - reserveTokens = 15,616) sits below the window's budget, three tool batches can be most of the budget, " +
			"and one read can be an eighth of the window. Both managed arms' provider refuses a request past the window, as a " +
			"real one does. The session must run to its end with nothing lost, at no more than one prefix rewrite per 3 requests.",
		cost: EQUAL_COST,
		targets: { costRatio: 0.5, totalTokensRatio: 1.0, rewritesPerRequest: 1 / 3 },
		files: { json: "session-32k.json", svg: "session-32k.svg" },
	},
	window64k: windowScenario(64_000, { costRatio: 0.6, totalTokensRatio: 1.0, rewritesPerRequest: 1 / 3 }),
	window100k: windowScenario(100_000, { costRatio: 0.7, totalTokensRatio: 1.0, nativeCompactions: 1 }),
	output2x: outputScenario(2, "twice", "4-8", "so each batch, and the raw working set, is twice as large"),
	output4x: outputScenario(4, "four times", "8-16", "one batch can hold a tenth of the budget"),
};

/** The card of the scenario's model (its own cost, tiers included), or undefined when it has none. */
export function scenarioCard(s: Scenario): PriceCard | undefined {
	return s.cost ? cardOfModel({ provider: FAUX_PROVIDER, id: FAUX_MODEL, cost: s.cost }) : undefined;
}
