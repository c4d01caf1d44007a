// When a turn boundary commits: the runtime's measurements put to the commit policy. The cost model
// needs what each pending mark would free and re-send, the raw working set, the session's growth per
// request and the state of the prompt cache; the fixed band needs only the occupancy. The last
// reckoning is kept for status, with the last commit a cold cache made free.
import { markEstimates, windowCosts } from "../meter/arithmetic.ts";
import type { Meter, Model } from "../meter/meter.ts";
import { type Occupancy, occupancyOf } from "../meter/occupancy.ts";
import { type CacheVerdict, cacheTerms } from "../meter/request-pace.ts";
import type { PolicyStatus } from "../operations/status.ts";
import { commitPolicy, type PolicyOutcome, type WeighedMark } from "../policy/commit-policy.ts";
import { consolidationStart, type RootShape } from "../policy/consolidate.ts";
import { type CacheRates, type CacheState, cacheRates, refreshPays } from "../policy/cost-model.ts";
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
	/** Idle cache refreshes pi-fold told Pi to skip: they cost more than the prefix the next commit keeps. */
	#warmingStopped = 0;
	/** Idle cache refreshes pi-fold let go on although a commit is due: the prefix it keeps is worth more. */
	#warmingKept = 0;
	/**
	 * What the last look ahead saw, when a commit is due: the window's tokens, what stays before the
	 * commit's first change, and the rates (a refresh is priced by them). `coldWorth`: whether a cold
	 * cache would make the next boundary commit.
	 */
	#ahead: { tokens: number; kept: number; rates: CacheRates | undefined; coldWorth: boolean } | undefined;
	/** The model of the last decision: status speaks of it. */
	#model: Model;

	constructor(meter: Meter, settings: RuntimeSettings, lastRewrote: () => boolean) {
		this.#meter = meter;
		this.#settings = settings;
		this.#lastRewrote = lastRewrote;
	}

	/** Whether the cost model decides for `model` (no band set, and its card prices a cache read). */
	priced(model: Model): boolean {
		return this.#rates(model) !== undefined;
	}

	/** The rates of `model`'s requests as they will be cached (retention and its write price), under the cost model. */
	#rates(model: Model): CacheRates | undefined {
		return this.#settings.bandFixed ? undefined : cacheRates(model?.cost, cacheTerms(model));
	}

	/** The prompt cache for the next request, by the pace and the lifetime `model`'s requests use. */
	#cache(model: Model): CacheVerdict {
		return this.#meter.pace.cache(cacheTerms(model).ttlSeconds);
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
		// The turn just ended appended what the last request did not carry: the next request writes it anyway.
		const last = this.#meter.pace.lastTokens;
		const appended = last === undefined ? 0 : Math.max(0, occupancy.tokens - last);
		const { out, cache } = this.#evaluate(
			open,
			occupancy,
			model,
			this.#settings.thresholds.rawBatches,
			this.#lastRewrote(),
			appended,
		);
		this.#held = out.held;
		this.#due = false;
		if (out.cost) this.#last = { ...out.cost, turn, commit: out.need > 0 };
		if (out.need > 0 && out.cost && cache.state === "cold" && cache.why === "expired") {
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
		this.#ahead = undefined;
		if (!this.priced(model)) return false;
		const growth = this.#meter.pace.growth ?? 0;
		const next = occupancyOf(occupancy.tokens + growth, occupancy.budget);
		const batches = Math.max(0, this.#settings.thresholds.rawBatches - 1);
		// No commit at this boundary: the next request appends, so the next boundary may commit.
		const { out, rates } = this.#evaluate(open, next, model, batches, false, growth);
		this.#due = out.need > 0;
		const cost = out.cost;
		const minFreed = Math.ceil(this.#settings.thresholds.minFoldChars / 4);
		if (cost) this.#ahead = { tokens: occupancy.tokens, kept: cost.kept, rates, coldWorth: cost.freed >= minFreed };
		return this.#due;
	}

	/** Whether the last turn's prospect says the next boundary commits. */
	get due(): boolean {
		return this.#due;
	}

	/**
	 * Whether the prompt cache has expired since the last request and the next boundary would commit
	 * for it: a tool run that outlived the cache lifetime leaves the next request cold, so a commit
	 * there re-sends nothing a request would not. Asked as each tool result ends, before turn_end.
	 */
	coldNow(model: Model): boolean {
		if (!this.#ahead?.coldWorth || !this.priced(model)) return false;
		const cache = this.#cache(model);
		return cache.state === "cold" && cache.why === "expired";
	}

	#evaluate(open: Open, occupancy: Occupancy, model: Model, batches: number, lastRewrote: boolean, appended: number) {
		this.#model = model;
		const thresholds = this.#settings.thresholds;
		const rates = this.#rates(model);
		const cache = this.#cache(model);
		const budget = this.#meter.budget(model);
		const set = workingSet(open.context.entries, batches, this.#fit(open, model, occupancy.budget));
		this.#workingSet = set;
		const weighed = rates ? this.#weigh(open, model, set.start) : { marks: [], consolidationRewritten: 0 };
		const out = commitPolicy({
			thresholds,
			rates,
			cache: cacheStateOf(cache),
			occupancy,
			...weighed,
			workingSetStart: set.start,
			growth: this.#meter.pace.growth,
			// A price tier charges a whole request more past it: no commit waits there.
			...(budget.ok ? { holdLimit: budget.limit === "price tier" ? budget.budget : budget.sendLimit } : {}),
			lastRewrote,
			appended,
		});
		return { out, cache, rates };
	}

	/** The working set's measure: each entry's tokens as a raw message, calibrated for `model`. */
	#fit(open: Open, model: Model, budget: number): WorkingSetFit {
		const ratio = this.#meter.ratio(model);
		const { entryTokens } = this.#meter;
		const sources = open.context.sources;
		return { budget, tokensAt: (p) => entryTokens.of([sources[p]])[0] * ratio };
	}

	/**
	 * Pi's `cache_warming_decision` while idle. When a commit is due at the next boundary, a refresh
	 * keeps warm only the prefix before the commit's first change: it stops when the refresh (the
	 * window read back) costs more than that prefix would cost to write again, discounted by Pi's
	 * chance that a request comes before the entry expires; both priced with the card. Otherwise
	 * Pi's decision stands, and a refresh it goes on with keeps the cache warm, as a request would.
	 */
	warming(event: WarmingEvent): "stop" | undefined {
		const ahead = this.#ahead;
		if (this.#due && event.action === "warm" && ahead?.rates) {
			if (!refreshPays(ahead.rates, ahead.tokens, ahead.kept, event.continuationProbability ?? 1)) {
				this.#warmingStopped++;
				return "stop";
			}
			this.#warmingKept++;
		}
		if (event.action === "warm") this.#meter.pace.warmed();
		return undefined;
	}

	/**
	 * Every pending mark, stalest first, as the policy weighs it, and where a commit of those outside
	 * the working set (`setStart` on) would consolidate older roots (tokens from there on).
	 */
	#weigh(open: Open, model: Model, setStart: number): { marks: WeighedMark[]; consolidationRewritten: number } {
		const { lattice } = open;
		// No marks, nothing to weigh: the window's costs are not walked for nothing on every turn.
		if (lattice.pending().length === 0) return { marks: [], consolidationRewritten: 0 };
		const ratio = this.#meter.ratio(model);
		const costs = windowCosts(lattice, open.context, this.#meter.entryTokens);
		const estimates = markEstimates(lattice, open.context, this.#meter.entryTokens, ratio, costs, open.markBriefs);
		const shape = (id: FoldId): RootShape | undefined => {
			const v = lattice.get(id);
			return v && { start: v.start, end: v.end, height: lattice.height(id) ?? 1, pinned: open.damaged.has(id) };
		};
		const marks = estimates.map((m) => ({
			end: lattice.get(m.id)?.end ?? Number.POSITIVE_INFINITY,
			freed: m.freed,
			prefixRewritten: m.prefixRewritten,
			choosable: !open.unstorable.has(m.id) && !open.damaged.has(m.id),
			always: lattice.get(m.id)?.kind === "peek",
		}));
		const taken = estimates.flatMap((m, i) =>
			marks[i].choosable && (marks[i].always || marks[i].end <= setStart) ? [shape(m.id)] : [],
		);
		const visible = lattice.visibleRoots().map(shape);
		const start = consolidationStart(
			this.#meter.core,
			visible.filter((r): r is RootShape => r !== undefined),
			taken.filter((r): r is RootShape => r !== undefined),
			this.#settings.thresholds.consolidateAfter,
		);
		const consolidationRewritten = start === undefined ? 0 : Math.ceil(costs.fromPosition(start) * ratio);
		return { marks, consolidationRewritten };
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
			cache: this.#cache(model),
			...(this.#last ? { last: this.#last } : {}),
			...(this.#lastCold ? { lastCold: this.#lastCold } : {}),
			coldCommits: this.#coldCommits,
			warmingStopped: this.#warmingStopped,
			warmingKept: this.#warmingKept,
			...(this.#held ? { held: this.#held } : {}),
			...(this.#workingSet
				? { workingSet: { batches: this.#workingSet.batches, tokens: Math.round(this.#workingSet.tokens) } }
				: {}),
		};
	}
}

/** Pi's cache_warming_decision as pi-fold reads it. */
interface WarmingEvent {
	action: "warm" | "stop";
	/** Pi's estimate that a real request comes before the entry expires (idle: 0.15). */
	continuationProbability?: number;
}

/** The cost model's view of the cache: an expiry makes it cold; a provider that reads nothing back does not cache. */
function cacheStateOf(verdict: CacheVerdict): CacheState {
	if (verdict.state === "warm") return "warm";
	return verdict.why === "expired" ? "cold" : "uncached";
}
