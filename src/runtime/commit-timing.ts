// When a turn boundary commits: the runtime's measurements put to the commit policy. The cost model
// needs what each pending mark would free and re-send, the raw working set, the session's growth per
// request and the state of the prompt cache; the fixed band needs only the occupancy. The last
// reckoning is kept for status, with the last commit a cold cache made free.
import { markEstimates } from "../meter/arithmetic.ts";
import type { Meter, Model } from "../meter/meter.ts";
import { type Occupancy, occupancyOf } from "../meter/occupancy.ts";
import { cacheTtlSeconds } from "../meter/request-pace.ts";
import type { PolicyStatus } from "../operations/status.ts";
import { commitPolicy, type PolicyOutcome, type WeighedMark } from "../policy/commit-policy.ts";
import { cacheRates } from "../policy/cost-model.ts";
import { type WorkingSet, type WorkingSetFit, workingSet } from "../policy/working-set.ts";
import type { Open } from "../session/open-session.ts";
import type { FoldId, RuntimeSettings } from "../vocabulary.ts";
import type { PlanRequest } from "./commit.ts";

export class CommitTiming {
	readonly #meter: Meter;
	readonly #settings: RuntimeSettings;
	/** Whether the last request Pi sent rewrote the window (the recorder knows). */
	readonly #lastRewrote: () => boolean;
	#last: PolicyStatus["last"];
	#lastCold: PolicyStatus["lastCold"];
	#due = false;
	/** Why the last decision held a commit back, if it did. */
	#held: string | undefined;
	/** The raw working set as the last decision measured it. */
	#workingSet: WorkingSet | undefined;
	#coldCommits = 0;
	/** Idle cache refreshes pi-fold told Pi to skip: the next request rewrites that prefix anyway. */
	#warmingStopped = 0;
	/** The model of the last decision: status speaks of it. */
	#model: Model;

	constructor(meter: Meter, settings: RuntimeSettings, lastRewrote: () => boolean) {
		this.#meter = meter;
		this.#settings = settings;
		this.#lastRewrote = lastRewrote;
	}

	/** Whether the cost model decides for `model` (no band set, and its card prices a cache read). */
	priced(model: Model): boolean {
		return !this.#settings.bandFixed && cacheRates(model?.cost) !== undefined;
	}

	/**
	 * The commit this boundary plans, or undefined: a person's /fold takes its marks, else the policy
	 * decides (and, when it waits, looks ahead to the next boundary).
	 */
	request(
		open: Open,
		occupancy: Occupancy,
		model: Model,
		turn: number,
		projection: PlanRequest["projection"],
		fold: { only?: ReadonlySet<FoldId> } | undefined,
	): PlanRequest | undefined {
		if (fold)
			return { projection, need: 1, model, reason: "fold", all: true, ...(fold.only ? { only: fold.only } : {}) };
		const decided = this.decide(open, occupancy, model, turn);
		if (decided.need <= 0) {
			this.prospect(open, occupancy, model);
			return undefined;
		}
		return {
			projection,
			need: decided.need,
			model,
			reason: decided.cost ? "cost" : "threshold",
			...(decided.eligibleEnd === undefined ? {} : { eligibleEnd: decided.eligibleEnd }),
			...(decided.cost ? { why: decided.cost.why } : {}),
		};
	}

	/** The decision for the next request; `turn`, the boundary's, names it in status (none: a prompt's first request). */
	decide(open: Open, occupancy: Occupancy, model: Model, turn?: number): PolicyOutcome {
		const { out, cache } = this.#evaluate(
			open,
			occupancy,
			model,
			this.#settings.thresholds.rawBatches,
			this.#lastRewrote(),
		);
		this.#held = out.held;
		this.#due = false;
		if (out.cost) this.#last = { ...out.cost, turn, commit: out.need > 0 };
		if (out.need > 0 && out.cost && cache.state === "cold") {
			this.#lastCold = { turn, freed: out.cost.freed };
			this.#coldCommits++;
		}
		return out;
	}

	/**
	 * The decision when Pi's own compaction threshold asks: the policy's, or, when the policy would
	 * wait but nothing holds a commit back, every mark outside the working set (under the band, down
	 * to minTarget): folding those brings the window under Pi's threshold instead of declining it.
	 */
	pressed(open: Open, occupancy: Occupancy, model: Model): PolicyOutcome {
		const out = this.decide(open, occupancy, model);
		if (out.need > 0 || out.held) return out;
		if (!this.priced(model)) {
			const floor = Math.floor(this.#settings.thresholds.minTarget * occupancy.budget);
			return { ...out, need: Math.max(0, Math.ceil(occupancy.tokens - floor)) };
		}
		const freed = out.cost?.freed ?? 0;
		const minFreed = Math.ceil(this.#settings.thresholds.minFoldChars / 4);
		const start = this.#workingSet?.start;
		return freed >= minFreed && start !== undefined ? { ...out, need: freed, eligibleEnd: start } : out;
	}

	/**
	 * At a turn's end without a commit: would the next boundary commit? It sees one more batch, so
	 * one batch fewer of today's stays in the working set, and a request's growth more. Pi runs
	 * pi-fold's boundary only on the turns that need it, so this is what decides whether it listens.
	 */
	prospect(open: Open, occupancy: Occupancy, model: Model): boolean {
		this.#due = false;
		if (!this.priced(model)) return false;
		const next = occupancyOf(occupancy.tokens + (this.#meter.pace.growth ?? 0), occupancy.budget);
		const batches = Math.max(0, this.#settings.thresholds.rawBatches - 1);
		// No commit at this boundary: the next request appends, so the next boundary may commit.
		this.#due = this.#evaluate(open, next, model, batches, false).out.need > 0;
		return this.#due;
	}

	/** Whether the last turn's prospect says the next boundary commits. */
	get due(): boolean {
		return this.#due;
	}

	#evaluate(open: Open, occupancy: Occupancy, model: Model, batches: number, lastRewrote: boolean) {
		this.#model = model;
		const thresholds = this.#settings.thresholds;
		const rates = this.#settings.bandFixed ? undefined : cacheRates(model?.cost);
		const cache = this.#meter.pace.cache(cacheTtlSeconds(model));
		const budget = this.#meter.budget(model);
		const set = workingSet(open.context.entries, batches, this.#fit(open, model, occupancy.budget));
		this.#workingSet = set;
		const out = commitPolicy({
			thresholds,
			rates,
			cache: cache.state,
			occupancy,
			marks: rates ? this.#weigh(open, model) : [],
			workingSetStart: set.start,
			growth: this.#meter.pace.growth,
			// A price tier charges a whole request more past it: no commit waits there.
			...(budget.ok ? { holdLimit: budget.limit === "price tier" ? budget.budget : budget.sendLimit } : {}),
			lastRewrote,
		});
		return { out, cache };
	}

	/** The working set's measure: each entry's tokens as a raw message, calibrated for `model`. */
	#fit(open: Open, model: Model, budget: number): WorkingSetFit {
		const ratio = this.#meter.ratio(model);
		const { entryTokens } = this.#meter;
		const sources = open.context.sources;
		return { budget, tokensAt: (p) => entryTokens.of([sources[p]])[0] * ratio };
	}

	/**
	 * Pi's `cache_warming_decision` while idle: a refresh of a prefix the next request rewrites is
	 * money burned, so it stops when a commit is due there; a refresh Pi goes on with keeps the
	 * cache warm, as a request would.
	 */
	warming(action: "warm" | "stop"): "stop" | undefined {
		if (this.#due) {
			this.#warmingStopped++;
			return "stop";
		}
		if (action === "warm") this.#meter.pace.warmed();
		return undefined;
	}

	/** Every pending mark, stalest first, as the policy weighs it. */
	#weigh(open: Open, model: Model): WeighedMark[] {
		const { lattice } = open;
		// No marks, nothing to weigh: the window's costs are not walked for nothing on every turn.
		if (lattice.pending().length === 0) return [];
		const estimates = markEstimates(
			lattice,
			open.context,
			this.#meter.entryTokens,
			this.#meter.ratio(model),
			undefined,
			open.markBriefs,
		);
		return estimates.map((m) => ({
			end: lattice.get(m.id)?.end ?? Number.POSITIVE_INFINITY,
			freed: m.freed,
			prefixRewritten: m.prefixRewritten,
			choosable: !open.unstorable.has(m.id) && !open.damaged.has(m.id),
		}));
	}

	status(): PolicyStatus {
		const model = this.#model;
		const priced = this.priced(model);
		const bandWhy = priced
			? undefined
			: this.#settings.bandFixed
				? "the band was set (options or settings file)"
				: "the model's price card has no cache-read price below its input price";
		return {
			policy: priced ? "cost" : "band",
			...(bandWhy ? { bandWhy } : {}),
			cache: this.#meter.pace.cache(cacheTtlSeconds(model)),
			...(this.#last ? { last: this.#last } : {}),
			...(this.#lastCold ? { lastCold: this.#lastCold } : {}),
			coldCommits: this.#coldCommits,
			warmingStopped: this.#warmingStopped,
			...(this.#held ? { held: this.#held } : {}),
			...(this.#workingSet
				? { workingSet: { batches: this.#workingSet.batches, tokens: Math.round(this.#workingSet.tokens) } }
				: {}),
		};
	}
}
