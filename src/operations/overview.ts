// Where the window stands and what the standing marks would free: the overview every answer of
// the agent's tool ends with, and what every display shows. Read-only.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { type Arithmetic, arithmeticOf, type MarkEstimate, markEstimates, windowCosts } from "../meter/arithmetic.ts";
import { budgetText, budgetWhy } from "../meter/budget.ts";
import type { Open } from "../session/open-session.ts";
import type { Outcome } from "../vocabulary.ts";
import type { RuntimePort } from "./view.ts";

export type { Arithmetic, MarkEstimate } from "../meter/arithmetic.ts";

/** Pins may hold at most this share of what a commit lands at: the rest must stay foldable. */
export const PINNED_SHARE_OF_MIN_TARGET = 0.5;

export interface Overview {
	arithmetic: Arithmetic;
	marks: MarkEstimate[];
	/** Pinned entries, their calibrated tokens, and the cap on them. */
	pins: { entryIds: string[]; tokens: number; cap: number };
	/** The budget with which limit sets it and why (budgetText), e.g. "272,000 (price tier: 2x above 272,000; window 400,000)". */
	budget: string;
}

/** The open session, or the refusal every operation gives without one. */
export function openOf(port: RuntimePort): Outcome<{ open: Readonly<Open> }> {
	const open = port.view;
	return open ? { ok: true, open } : { ok: false, reason: "no session is open in pi-fold yet (see status problems)" };
}

/** The serving budget of the context's model, with which limit sets it and why. */
export function budgetOf(
	port: RuntimePort,
	ctx: ExtensionContext,
): Outcome<{ budget: number; text: string; why: string }> {
	const b = port.budget(ctx.model);
	return b.ok
		? { ok: true, budget: b.budget, text: budgetText(b), why: budgetWhy(b) }
		: { ok: false, reason: `no serving budget: ${b.reason}` };
}

/** Where the window stands, what the marks would free, the pins; for status and every answer. */
export function overviewOf(port: RuntimePort, ctx: ExtensionContext): Outcome<{ overview: Overview }> {
	const o = openOf(port);
	if (!o.ok) return o;
	const budget = budgetOf(port, ctx);
	if (!budget.ok) return budget;
	const tokens = port.entryTokens;
	const lattice = port.stagedLattice() ?? o.open.lattice;
	const ratio = port.ratio(ctx.model);
	const costs = windowCosts(lattice, o.open.context, tokens);
	const marks = markEstimates(lattice, o.open.context, tokens, ratio, costs, o.open.markBriefs);
	const measured = port.occupancy?.tokens;
	// The measurement is the window as the last boundary saw it: add what edits applied at that
	// boundary and edits staged since will change, so an expand counts the ones before it.
	const staged =
		lattice === o.open.lattice ? 0 : costs.total - windowCosts(o.open.lattice, o.open.context, tokens).total;
	const occupancy =
		measured === undefined
			? Math.ceil(costs.total * ratio)
			: measured + Math.ceil(port.unmeasuredTokens * ratio) + Math.ceil(staged * ratio);
	const pinIds = lattice.pins();
	const pinned = new Set(pinIds);
	let pinTokens = 0;
	for (const id of pinned) {
		const p = lattice.position(id);
		if (p !== undefined) pinTokens += costs.shownAt[p] ?? 0;
	}
	const { thresholds } = port.settings;
	return {
		ok: true,
		overview: {
			arithmetic: arithmeticOf(occupancy, budget.budget, thresholds, marks),
			marks,
			pins: {
				entryIds: pinIds,
				tokens: Math.ceil(pinTokens * ratio),
				cap: Math.floor(thresholds.minTarget * PINNED_SHARE_OF_MIN_TARGET * budget.budget),
			},
			budget: budget.text,
		},
	};
}
