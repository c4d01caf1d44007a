// Whether a boundary commits, and how much: the person's fixed band when they set one (or when the
// model's card cannot price a commit), else the cost model (cost-model.ts) over the marks outside
// the raw working set (working-set.ts). Pure: the runtime measures, this decides, the commit applies.
import { commitNeed, type Occupancy } from "../meter/occupancy.ts";
import type { Thresholds } from "../vocabulary.ts";
import { type CacheRates, type CacheState, type CommitDecision, decideCommit } from "./cost-model.ts";

/** A pending mark as the policy weighs it, stalest first. */
export interface WeighedMark {
	/** One past the mark's last position in the context. */
	end: number;
	/** Calibrated tokens it would free. */
	freed: number;
	/** Calibrated tokens of the window from its first entry on. */
	prefixRewritten: number;
	/** Whether the commit may choose it on its own (not unstorable, not damaged). */
	choosable: boolean;
	/** A peek's own result: every commit takes it, working set or not. */
	always?: boolean;
}

interface PolicyInput {
	thresholds: Thresholds;
	/** The cost model decides (no band was set) and the model's card gives these rates. */
	rates: CacheRates | undefined;
	cache: CacheState;
	occupancy: Occupancy;
	marks: readonly WeighedMark[];
	/** The first position of the raw working set. */
	workingSetStart: number;
	/** Calibrated tokens a request adds, measured; undefined before two requests. */
	growth: number | undefined;
	/**
	 * The most the next request may carry while a commit waits (the window minus the least answer,
	 * the person's limit, or a price tier: past it a request costs more whole); undefined: none known.
	 */
	holdLimit?: number;
	/** Whether the last request already rewrote the window (a commit, an expand, a repair). */
	lastRewrote?: boolean;
	/** Calibrated tokens the turn just ended appended to the last request: the next request writes them anyway. */
	appended?: number;
	/**
	 * Calibrated tokens of the window from the first older root the commit's consolidation would
	 * take on (its brief is replaced), when it would; 0: none.
	 */
	consolidationRewritten?: number;
}

export interface PolicyOutcome {
	/** Calibrated tokens the commit must free; 0: no commit at this boundary. */
	need: number;
	/** Marks ending after this position are not chosen (the working set); undefined: any mark. */
	eligibleEnd?: number;
	/**
	 * The cost model's reckoning, when it decided; `kept`: calibrated tokens of the window before the
	 * commit's first changed entry (what a warm cache still serves after it).
	 */
	cost?: CommitDecision & { freed: number; rewrite: number; growth: number; kept: number };
	/** Why no commit is made although one might be due, in a person's words. */
	held?: string;
}

/** Before the session has a pace of its own: a request adds about this share of the budget. */
const GROWTH_SHARE_UNMEASURED = 0.02;

/**
 * With a provider that does not cache, a commit waits until it frees this share of the budget: a
 * commit per turn would keep the window a little smaller at the price of a record, a receipt and
 * churn every turn; in steps of a tenth the window still stays near its floor.
 */
export const UNCACHED_STEP_SHARE = 0.1;

/** What a cost commit folds and re-sends: the eligible marks with the peeks' own, and the first changed entry. */
function costScope(input: Pick<PolicyInput, "marks" | "workingSetStart" | "consolidationRewritten">): {
	freed: number;
	/** Calibrated tokens of the window from its first changed entry on, before the commit. */
	first: number;
} {
	const taken = input.marks.filter((m) => m.choosable && (m.always || m.end <= input.workingSetStart));
	const freed = taken.reduce((s, m) => s + m.freed, 0);
	// The stalest mark taken, or an older root a consolidation takes on, is the first changed entry:
	// everything from it on is re-sent.
	const first = taken.reduce((most, m) => Math.max(most, m.prefixRewritten), input.consolidationRewritten ?? 0);
	return { freed, first: taken.length > 0 ? first : 0 };
}

export function commitPolicy(input: PolicyInput): PolicyOutcome {
	const { thresholds, rates, occupancy } = input;
	// Two rewrites in a row re-send the window twice for one fold's worth: the next commit waits a
	// request, past the budget if need be, unless that request could not be sent at all (or would
	// pass a price tier), or the cache expired (the next request is written whole anyway).
	const mustFold = input.holdLimit !== undefined && occupancy.tokens > input.holdLimit;
	if (input.lastRewrote && !mustFold && !(rates && input.cache === "cold")) {
		return { need: 0, held: "the last request rewrote the window already: a commit now would rewrite it again" };
	}
	if (!rates) return { need: commitNeed(occupancy, thresholds) };
	const { freed, first } = costScope(input);
	const rewrite = Math.max(0, first - freed - (input.appended ?? 0));
	const growth = input.growth ?? Math.ceil(GROWTH_SHARE_UNMEASURED * occupancy.budget);
	const cap = Math.ceil(thresholds.maxTarget * occupancy.budget);
	const decision = decideCommit({
		rates,
		cache: input.cache,
		tokens: occupancy.tokens,
		cap,
		freed,
		rewrite,
		growth,
		minFreed: Math.ceil(thresholds.minFoldChars / 4),
		uncachedStep: Math.ceil(UNCACHED_STEP_SHARE * occupancy.budget),
	});
	const cost = { ...decision, freed, rewrite, growth, kept: Math.max(0, occupancy.tokens - first) };
	if (!decision.commit) return { need: 0, cost };
	if (occupancy.tokens - freed >= cap) {
		// At the cap with too little outside the working set. A commit that cannot bring the window
		// under the cap even with every mark buys a rewrite for a sliver, and the next request needs
		// another: it waits until the newest batch, seen by then, can fold too, unless the next
		// request could not be sent at all (or would pass a price tier). Otherwise the budget wins: the
		// band's fold, any mark.
		const all = input.marks.reduce((s, m) => s + (m.choosable ? m.freed : 0), 0);
		if (occupancy.tokens - all >= cap && !mustFold) {
			return { need: 0, cost, held: "the marks cannot bring the window under the commit threshold yet" };
		}
		return { need: commitNeed(occupancy, thresholds), cost };
	}
	return { need: Math.max(1, freed), eligibleEnd: input.workingSetStart, cost };
}
