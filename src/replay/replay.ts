// `pi-fold replay`: what pi-fold, Pi's native compaction and no management would each have sent
// for a recorded Pi session, request by request, offline (no model is called).
//
// The driver feeds the three policies the same steps (transcript.ts) in the same order. For each
// recorded assistant message: the calibration is anchored on what the recorded session really
// sent (measure.ts), then each policy builds its window, the request is measured against that
// policy's previous one (prefix cache), the policy sees it go out, and the recorded answer comes
// back carrying the usage that request would have reported, followed by its tool results and the
// turn boundary. Output tokens are the recorded ones for every policy: the answers are the same.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_COMPACTION_SETTINGS } from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import { parseOptions } from "../host/options.ts";
import { type BudgetLimit, budgetWhy, type PriceTierLimit, servingBudget } from "../meter/budget.ts";
import { cacheTtlSeconds } from "../meter/request-pace.ts";
import { type ArmExtras, type ArmReport, type RequestRecord, summarizeArm } from "../report/arm-report.ts";
import { type IndexCoverage, indexCoverage } from "../report/index-coverage.ts";
import { costOf, type PriceCard, type Pricing } from "../report/price-card.ts";
import type { Thresholds } from "../vocabulary.ts";
import type { Policy, PolicyEvent, PolicyName } from "./arm.ts";
import { FoldPolicy } from "./arm-fold.ts";
import { DEFAULT_SUMMARY_CHARS, NativePolicy, type NativeSettings } from "./arm-native.ts";
import { NonePolicy } from "./arm-none.ts";
import { RequestMeter } from "./measure.ts";
import { catalogModels } from "./model-limits.ts";
import { type ModelPrices, pricesOf } from "./prices.ts";
import { PromptCache, usageOf } from "./prompt-cache.ts";
import { ProviderTokens } from "./provider-tokens.ts";
import { type LoadedSession, loadSession, openSession } from "./session-file.ts";
import { type CheckedSession, ReplayInputError } from "./session-lines.ts";
import { type ModelRef, mainModel, modelKeyOf, modelRefOf, type Transcript, transcriptOf } from "./transcript.ts";

interface ReplayOptions {
	/** The model's context window (default: Pi's catalog entry for the session's main model). */
	window?: number;
	/** pi-fold's serving budget, providerInputBudget (default: the session's receipts', else the window minus an output reservation). */
	budget?: number;
	/** pi-fold thresholds (default: the runtime's). */
	thresholds?: Partial<Thresholds>;
	/** Native compaction (defaults: Pi's DEFAULT_COMPACTION_SETTINGS). */
	reserveTokens?: number;
	keepRecentTokens?: number;
	/** Size of a native compaction summary (default: the session's own summaries' mean, else DEFAULT_SUMMARY_CHARS). */
	summaryChars?: number;
	/** Prices for every request (default: each request's model's own catalog cost, tiers included). */
	priceCard?: PriceCard;
	/** Replay as if the session had run on this catalog model: its window, reservation, price tiers and prices. */
	model?: ModelRef;
	/** The prompt cache's lifetime in seconds (default: the model's short lifetime, else 300). */
	cacheTtl?: number;
	/** Called after each replayed request. */
	onProgress?: (done: number, total: number) => void;
}

export interface PolicyResult {
	name: PolicyName;
	/** Every request, in order: work requests and the policy's own (summaries). */
	records: RequestRecord[];
	/** Prompt tokens of each work request (index = request number). */
	prompts: number[];
	/**
	 * Dollars of each work request at the replay's prices (index = request number), with the requests
	 * the policy made on its own right after it (a compaction's summary): they sum to the arm's cost.
	 */
	costs: number[];
	events: PolicyEvent[];
	/** Requests that were not pure appends of the previous one: made by the policy (attributed) or not. */
	rewrites: { attributed: number; unattributed: number };
	/** Work requests larger than the model's context window (a real provider would have refused them). */
	overWindow: number;
	problems: string[];
}

export interface ReplayResult {
	file: string;
	sessionId: string;
	model: string;
	requests: number;
	settings: {
		/** The catalog model the replay ran as (--model), when not the recorded one. */
		servedAs?: string;
		window: number;
		windowSource: "--window" | "catalog";
		maxTokens?: number;
		budget: number;
		/** --budget; the session's own (its commit receipts record it, when pi-fold ran on it); else the model's. */
		budgetSource: "--budget" | "session" | "model";
		/** Which limit set the budget (window, the model's price tier, --budget), and why, as status says it. */
		budgetLimit: BudgetLimit;
		budgetWhy: string;
		/** The served model's first price tier, when it has one (drawn on the chart). */
		priceTier?: PriceTierLimit;
		thresholds: Thresholds;
		/** The prompt cache's lifetime the replay modelled, seconds. */
		cacheTtl: number;
		/** Which policy decided pi-fold's commits: the cost model, or the band. */
		foldPolicy: "cost" | "band";
		reserveTokens: number;
		keepRecentTokens: number;
		summaryChars: number;
		summarySource: "--summary-chars" | "session" | "default";
		/** What priced the requests, in one line (see `prices` for each model). */
		priceCard: string;
		/** Per model: how many requests, and whether Pi's catalog, the default card or --price-card priced them. */
		prices: ModelPrices[];
	};
	dropped: Transcript["dropped"];
	policies: PolicyResult[];
	arms: ArmReport[];
	/** pi-fold only: requests its fence would have stopped. */
	fenced: number;
	/** Provider tokens of the unrecorded system prompt and tools counted in every request (0: none). */
	hiddenPrefix: number;
	/** pi-fold only: how much of what its window folds the briefs still name, after the last request. */
	index?: IndexCoverage;
}

const mean = (xs: readonly number[]) => Math.round(xs.reduce((a, b) => a + b, 0) / xs.length);

function percentile(xs: readonly number[], p: number): number {
	if (xs.length === 0) return 0;
	const sorted = [...xs].sort((a, b) => a - b);
	return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

/** Each work request's cost, with the policy's own requests that follow it. */
function requestCosts(records: readonly RequestRecord[], pricing: PriceCard | Pricing): number[] {
	const costs: number[] = [];
	for (const r of records) {
		if (r.kind === "work" || costs.length === 0) costs.push(costOf(r, pricing));
		else costs[costs.length - 1] += costOf(r, pricing);
	}
	return costs;
}

/** The settings of the three policies: the flags given, else the session's model and Pi's defaults. */
async function resolveSettings(file: string, transcript: Transcript, options: ReplayOptions) {
	const main = mainModel(transcript);
	// The model pi-fold and native serve: the session's own, or the one --model names.
	const served = options.model ?? main;
	const refs = [...transcript.models.keys()].map(modelRefOf);
	const catalogs = await catalogModels(served ? [...refs, served] : refs);
	const catalog = served ? catalogs.get(modelKeyOf(served)) : undefined;
	if (options.model && !catalog) {
		throw new ReplayInputError(`--model ${modelKeyOf(options.model)} is not in Pi's model catalog`);
	}
	const window = options.window ?? catalog?.contextWindow;
	if (window === undefined) {
		const key = main ? modelKeyOf(main) : "unknown";
		throw new ReplayInputError(
			`${file}: the session's model ${key} is not in Pi's model catalog: pass --window <tokens> (its context window)`,
		);
	}
	const limits = {
		contextWindow: window,
		...(catalog?.maxTokens ? { maxTokens: catalog.maxTokens } : {}),
		...(catalog?.cost ? { cost: catalog.cost } : {}),
	};
	// A session pi-fold ran on replays with the budget it ran with, unless told otherwise (--model
	// replays it as another model's: that model's budget).
	const given = options.budget ?? (options.model ? undefined : transcript.receiptBudget);
	const parsed = parseOptions({
		...(given === undefined ? {} : { providerInputBudget: given }),
		...(options.thresholds === undefined ? {} : { thresholds: options.thresholds }),
	});
	if (!parsed.ok) throw new ReplayInputError(`invalid pi-fold settings: ${parsed.problems.join("; ")}`);
	const summaryChars =
		options.summaryChars ??
		(transcript.summaryChars.length > 0 ? mean(transcript.summaryChars) : DEFAULT_SUMMARY_CHARS);
	const native: NativeSettings = {
		...DEFAULT_COMPACTION_SETTINGS,
		enabled: true,
		...(options.reserveTokens === undefined ? {} : { reserveTokens: options.reserveTokens }),
		...(options.keepRecentTokens === undefined ? {} : { keepRecentTokens: options.keepRecentTokens }),
		contextWindow: window,
		summaryChars,
	};
	// Pi's compaction stays on under pi-fold with the same settings: the budget agrees with it, as inside Pi.
	const pi = { reserveTokens: native.reserveTokens, keepRecentTokens: native.keepRecentTokens };
	parsed.settings.piCompaction = () => pi;
	const budget = servingBudget(limits, parsed.settings.providerInputBudget, pi);
	if (!budget.ok) throw new ReplayInputError(`no serving budget: ${budget.reason}`);
	const prices = pricesOf(transcript.models, catalogs, {
		...(options.priceCard ? { card: options.priceCard } : {}),
		...(options.model ? { servedAs: options.model } : {}),
	});
	const budgetSource: BudgetSource =
		options.budget !== undefined ? "--budget" : given !== undefined ? "session" : "model";
	return { limits, settings: parsed.settings, budget, budgetSource, native, prices };
}

type BudgetSource = ReplayResult["settings"]["budgetSource"];

/** Why the budget is what it is; for the session's own, what its receipts say and the window it is weighed against. */
function budgetReason(budget: Extract<ReturnType<typeof servingBudget>, { ok: true }>, source: BudgetSource): string {
	if (source !== "session") return budgetWhy(budget);
	return `the budget the session ran with, as its commit receipts record it${budget.window === undefined ? "" : `; window ${budget.window.toLocaleString("en-US")}`}`;
}

/** Replay a session file (ReplayInputError when it cannot be replayed: session-lines.ts). */
export async function replayFile(file: string, core: PiFoldCore, options: ReplayOptions = {}): Promise<ReplayResult> {
	return replaySession(loadSession(file), core, options);
}

/** Replay a session file already read and checked (readSessionFile). */
export async function replayChecked(
	checked: CheckedSession,
	core: PiFoldCore,
	options: ReplayOptions = {},
): Promise<ReplayResult> {
	return replaySession(openSession(checked), core, options);
}

async function replaySession(
	session: LoadedSession,
	core: PiFoldCore,
	options: ReplayOptions = {},
): Promise<ReplayResult> {
	const transcript = transcriptOf(session);
	if (transcript.turns === 0)
		throw new ReplayInputError(`${session.file}: the session has no assistant messages: nothing to replay`);
	const { limits, settings, budget, budgetSource, native, prices } = await resolveSettings(
		session.file,
		transcript,
		options,
	);
	const window = limits.contextWindow;
	const main = mainModel(transcript);
	const mainKey = main ? modelKeyOf(main) : "unknown";

	const meter = new RequestMeter(core);
	const tokens = new ProviderTokens(meter);
	tokens.fitHidden(transcript.steps.flatMap((s) => (s.kind === "turn" ? [s.turn] : [])));
	const header = session.manager.getHeader();
	const logHeader = {
		id: session.manager.getSessionId(),
		cwd: session.cwd,
		timestamp: header?.timestamp ?? new Date(0).toISOString(),
	};
	// The runtime's clock is the recording's: each request at its answer's recorded time.
	const clock = { now: 0 };
	const cacheTtl = options.cacheTtl ?? cacheTtlSeconds(limits);
	const fold = new FoldPolicy(
		core,
		{ ...settings, clock: () => clock.now },
		limits,
		logHeader,
		mkdtempSync(join(tmpdir(), "pi-fold-replay-")),
	);
	const policies: Policy[] = [fold, new NativePolicy(logHeader, meter, tokens, native), new NonePolicy(logHeader)];
	const results: PolicyResult[] = policies.map((p) => ({
		name: p.name,
		records: [],
		prompts: [],
		costs: [],
		events: [],
		rewrites: { attributed: 0, unattributed: 0 },
		overWindow: 0,
		problems: [],
	}));
	const caches = policies.map(() => new PromptCache(meter, tokens, cacheTtl));
	let index: IndexCoverage | undefined;
	try {
		await play(transcript, policies, results, { caches, tokens, window, clock }, options.onProgress);
		const open = fold.runtime.view;
		if (open) index = indexCoverage(open.lattice, open.context.sources);
	} finally {
		for (const p of policies) await p.dispose();
	}

	for (let k = 0; k < policies.length; k++) {
		results[k].events = [...policies[k].events()];
		results[k].problems = [...policies[k].problems()];
		results[k].costs = requestCosts(results[k].records, prices.pricing);
	}
	// pi-fold's rewrites are the runtime's own counters (its context hook saw every request).
	const counters = fold.runtime.recorder.counters();
	results[0].rewrites = {
		attributed: Object.values(counters.attributed).reduce((a, b) => a + b, 0),
		unattributed: counters.unattributed,
	};
	const extras: ArmExtras[] = [
		{
			commits: results[0].events.length,
			rewrites: results[0].rewrites,
			addedMsPerRequest: { median: percentile(fold.handlerMs, 0.5), p95: percentile(fold.handlerMs, 0.95) },
		},
		{ compactions: results[1].events.length, rewrites: results[1].rewrites },
		{ rewrites: results[2].rewrites },
	];
	return {
		file: session.file,
		sessionId: session.manager.getSessionId(),
		model: mainKey,
		requests: transcript.turns,
		settings: replaySettings({
			...{ options, window, limits, budget, budgetSource, settings, native, prices, transcript, cacheTtl },
			foldPolicy: fold.runtime.status().policy.policy,
		}),
		dropped: transcript.dropped,
		policies: results,
		arms: results.map((r, k) => summarizeArm(r.name, r.records, prices.pricing, extras[k])),
		fenced: fold.fenced,
		hiddenPrefix: tokens.hidden.real,
		...(index ? { index } : {}),
	};
}

/** Every step of the transcript, played to every policy: each request measured as its policy would send it. */
async function play(
	transcript: Transcript,
	policies: readonly Policy[],
	results: PolicyResult[],
	measure: { caches: readonly PromptCache[]; tokens: ProviderTokens; window: number; clock: { now: number } },
	onProgress: ReplayOptions["onProgress"],
): Promise<void> {
	const { caches, tokens, window, clock } = measure;
	for (const step of transcript.steps) {
		if (step.kind === "entry") {
			for (const p of policies) p.append(step.entry);
			continue;
		}
		const turn = step.turn;
		tokens.learn(turn);
		const output = tokens.output(turn);
		const model = modelKeyOf(turn.model);
		const at = Number(turn.assistant.timestamp);
		if (Number.isFinite(at)) clock.now = at;
		for (let k = 0; k < policies.length; k++) {
			const p = policies[k];
			const r = results[k];
			const messages = p.window(turn);
			const measured = caches[k].measure(messages, model, output, at);
			if (turn.request > 0 && !measured.append) {
				if (p.events().some((e) => e.request === turn.request)) r.rewrites.attributed++;
				else r.rewrites.unattributed++;
			}
			if (measured.record.promptTokens > window) r.overWindow++;
			r.records.push(measured.record);
			r.prompts.push(measured.record.promptTokens);
			p.sent(turn, messages);
			r.records.push(...(await p.answered(turn, { ...turn.assistant, usage: usageOf(measured.record) })));
		}
		onProgress?.(turn.request + 1, transcript.turns);
	}
}

/** The replay's settings as the report states them: what was served, by which budget, priced how. */
function replaySettings(r: {
	options: ReplayOptions;
	window: number;
	limits: Awaited<ReturnType<typeof resolveSettings>>["limits"];
	budget: Extract<ReturnType<typeof servingBudget>, { ok: true }>;
	budgetSource: BudgetSource;
	settings: Awaited<ReturnType<typeof resolveSettings>>["settings"];
	native: NativeSettings;
	prices: Awaited<ReturnType<typeof resolveSettings>>["prices"];
	transcript: Transcript;
	cacheTtl: number;
	foldPolicy: "cost" | "band";
}): ReplayResult["settings"] {
	const { options, window, limits, budget, budgetSource, settings, native, prices, transcript, cacheTtl, foldPolicy } =
		r;
	return {
		...(options.model ? { servedAs: modelKeyOf(options.model) } : {}),
		window,
		windowSource: options.window === undefined ? "catalog" : "--window",
		...(limits.maxTokens ? { maxTokens: limits.maxTokens } : {}),
		budget: budget.budget,
		budgetSource,
		budgetLimit: budget.limit,
		budgetWhy: budgetReason(budget, budgetSource),
		...(budget.tier ? { priceTier: budget.tier } : {}),
		thresholds: settings.thresholds,
		cacheTtl,
		foldPolicy,
		reserveTokens: native.reserveTokens,
		keepRecentTokens: native.keepRecentTokens,
		summaryChars: native.summaryChars,
		summarySource:
			options.summaryChars !== undefined
				? "--summary-chars"
				: transcript.summaryChars.length > 0
					? "session"
					: "default",
		priceCard: prices.pricing.name,
		prices: prices.models,
	};
}
