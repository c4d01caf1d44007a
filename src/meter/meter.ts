// What one runtime measures with: the serving budget of the session's model, the calibrated size
// of a request, and the token estimates of raw entries and briefs. Every decision asks here for
// one budget(model) and one ratio(model), so the fence, a commit, an expand's refusal and every
// display divide by the same number and scale by the same calibration.
import type { PiFoldCore } from "../../bindings/index.ts";
import type { RuntimeSettings } from "../vocabulary.ts";
import {
	type Budget,
	type BudgetLimit,
	budgetText,
	budgetWhy,
	type CompactionLimit,
	type ModelLimits,
	type PriceTierLimit,
	servingBudget,
} from "./budget.ts";
import type { CalibrationOutcome } from "./calibration.ts";
import { EntryTokens } from "./entry-tokens.ts";
import type { RequestEstimate } from "./estimate.ts";
import { modelKey, type Occupancy, OccupancyMeter, occupancyOf } from "./occupancy.ts";
import { RequestPace } from "./request-pace.ts";

/** A model as Pi's context carries it (ctx.model): its limits and its name. */
export type Model = (ModelLimits & { provider: string; id: string }) | undefined;

/** The serving budget as status reports it. */
export interface BudgetStatus {
	ok: true;
	tokens: number;
	source: string;
	limit: BudgetLimit;
	reserve: number;
	window?: number;
	tier?: PriceTierLimit;
	/** Where Pi's own compaction acts, when it compacts. */
	compaction?: CompactionLimit;
	/** What stops a request (the window minus the least answer, or providerInputBudget). */
	sendLimit: number;
	/** budgetText: "272,000 (price tier: 2x above 272,000; window 400,000)". */
	text: string;
	/** budgetWhy: the parenthesis of `text`. */
	why: string;
	/** "provider/id" of the model it was computed for ("(no model)" when none). */
	model: string;
}

export class Meter {
	readonly #requests: OccupancyMeter;
	readonly #settings: Pick<RuntimeSettings, "providerInputBudget" | "piCompaction">;
	/** Token estimates of raw entries and briefs, cached per entry (entries never change). */
	readonly entryTokens: EntryTokens;
	/** The core the meter estimates with (the policy's weighing asks it too). */
	readonly core: PiFoldCore;
	/** How fast requests grow, when the last went out and whether the cache still holds it. */
	readonly pace: RequestPace;
	/** The model object and Pi's compaction settings the last budget was computed for, and that budget (Pi keeps one object per selection). */
	#budgetOf: { model: unknown; compaction: string; budget: Budget } | undefined;
	#status: BudgetStatus | { ok: false; reason: string } | null = null;

	/** `settings` is read at each new budget (providerInputBudget, when the user gives one). */
	constructor(core: PiFoldCore, settings: Pick<RuntimeSettings, "providerInputBudget" | "piCompaction" | "clock">) {
		this.#requests = new OccupancyMeter(core);
		this.#settings = settings;
		this.entryTokens = new EntryTokens(core);
		this.core = core;
		this.pace = new RequestPace(settings.clock);
	}

	/**
	 * The serving budget for `model` (Pi's ctx.model, read afresh at every decision: a model switch
	 * moves it), remembered for status.
	 */
	budget(model: Model): Budget {
		const compaction = this.#settings.piCompaction?.(model);
		const key = compaction ? `${compaction.reserveTokens}/${compaction.keepRecentTokens}` : "";
		const known = this.#budgetOf;
		if (known && known.model === model && known.compaction === key && model !== undefined) return known.budget;
		const budget = servingBudget(model, this.#settings.providerInputBudget, compaction);
		this.#budgetOf = { model, compaction: key, budget };
		this.#status = budget.ok
			? {
					ok: true,
					tokens: budget.budget,
					source: budget.source,
					limit: budget.limit,
					reserve: budget.reserve,
					...(budget.window === undefined ? {} : { window: budget.window }),
					...(budget.tier ? { tier: budget.tier } : {}),
					...(budget.compaction ? { compaction: budget.compaction } : {}),
					sendLimit: budget.sendLimit,
					text: budgetText(budget),
					why: budgetWhy(budget),
					model: modelKey(model),
				}
			: budget;
		return budget;
	}

	/** The budget last asked for (the model then), which limit set it and why; null before any. */
	get budgetStatus(): BudgetStatus | { ok: false; reason: string } | null {
		return this.#status;
	}

	/** The calibration ratio real/estimated for requests to `model` (1 until it has reported usage). */
	ratio(model: Model): number {
		return this.#requests.calibration.ratioFor(modelKey(model));
	}

	/**
	 * A request as it is sent (all its messages): its uncalibrated estimate, kept to calibrate by.
	 * `sameAs`: what the rewrite recorder proved of the same request's messages (RequestMemo).
	 */
	observeRequest(messages: readonly unknown[], model: Model, sameAs?: (message: unknown) => unknown): RequestEstimate {
		return this.#requests.observeRequest(messages, modelKey(model), sameAs);
	}

	/** The usage the provider reported for the last request observed. */
	calibrate(usage: unknown, model: Model): CalibrationOutcome {
		this.pace.usage(usage);
		return this.#requests.calibrate(usage, modelKey(model));
	}

	/** The uncalibrated estimate of a request carrying `messages` (system messages included). */
	estimateRequest(messages: readonly unknown[]): RequestEstimate {
		return this.#requests.estimateRequest(messages);
	}

	/** An estimate in the provider's tokens, as the last usage of `model` calibrates it. */
	calibrated(estimate: RequestEstimate, model: Model): number {
		return this.#requests.calibration.apply(estimate, modelKey(model));
	}

	/** The occupancy of a request carrying `messages`, calibrated, against `budget`. */
	occupancy(messages: readonly unknown[], model: Model, budget: number): Occupancy {
		return occupancyOf(this.calibrated(this.estimateRequest(messages), model), budget);
	}
}
