// mark and unmark: laying a pending fold over a span, and withdrawing it.
//
// Nesting rules (every one keeps existing folds' content, and so their ids, unchanged):
// - A pending mark is always a root. A mark inside another mark is refused (reboundary re-cuts
//   marks); a mark containing another mark is refused too (reboundary merges them).
// - A mark may contain committed and expanded folds whole: they become its children. That is how
//   marks over already-folded work nest (a chapter over its folded tool batches).
// - A mark inside a committed or expanded fold is refused: a standing fold's children are part of
//   its identity and its store record, so they are fixed.
import type { FoldId, FoldKind } from "../../fold-types.ts";
import { errorMessage } from "../../values/error-message.ts";
import { describeFold, type FoldSpec, kidFold } from "../fold.ts";
import { briefText, markKind } from "../fold-values.ts";
import { planRoots } from "../grow.ts";
import { refuse } from "../outcome.ts";
import { buildStructure, respec } from "../structure.ts";
import {
	type Change,
	checkFoldable,
	foldById,
	idsOf,
	isStanding,
	type LatticeData,
	relateForMark,
	spanOf,
} from "./common.ts";

export interface MarkOptions {
	/** The agent's (or a person's) brief; without one the runtime writes a deterministic brief later. */
	brief?: string;
}

export interface MarkResult {
	id: FoldId;
	/** The standing folds the mark now contains as its children. */
	nested: FoldId[];
}

/** One mark of a batch: the same arguments as `mark`. */
export interface MarkRequest {
	from: string;
	to: string;
	kind: string;
	brief?: string;
}

export interface MarkManyResult {
	/** The new marks' ids, in request order. */
	ids: FoldId[];
}

/** Check one requested mark against the standing structure; returns its spec. */
function specOf(d: LatticeData, fromEntryId: unknown, toEntryId: unknown, kind: unknown, opts: MarkOptions): FoldSpec {
	const [s, e] = spanOf(d.ctx, fromEntryId, toEntryId);
	const k: FoldKind = markKind(kind);
	const brief = opts?.brief === undefined ? undefined : briefText(opts.brief);
	checkFoldable(d, s, e);
	const span = d.ctx.spanLabel(s, e);
	const rel = relateForMark(d.structure, s, e);
	if (rel.equal) refuse(`the span ${span} is already covered by ${describeFold(rel.equal)}: no two folds share a span`);
	if (rel.partial) {
		refuse(
			`the span ${span} partially overlaps ${describeFold(rel.partial)}: folds nest, they never partially overlap`,
		);
	}
	// The innermost container decides: a standing fold anywhere around the span fixes it.
	const container = rel.container;
	if (container && isStanding(container)) {
		refuse(
			`the span ${span} lies inside ${describeFold(container)}: a standing fold's children are fixed (mark a span containing it whole)`,
		);
	}
	if (container) {
		refuse(
			`the span ${span} lies inside ${describeFold(container)}: marks do not nest in marks (reboundary re-cuts it)`,
		);
	}
	const inner = rel.pendingInside;
	if (inner) {
		refuse(`the span ${span} contains ${describeFold(inner)}: reboundary merges marks, or unmark it first`);
	}
	return {
		start: s,
		end: e,
		kind: k,
		state: "pending",
		brief: brief ?? "",
		provenance: brief === undefined ? "deterministic" : "supplied",
	};
}

export function mark(
	d: LatticeData,
	fromEntryId: unknown,
	toEntryId: unknown,
	kind: unknown,
	opts: MarkOptions = {},
): Change<MarkResult> {
	const spec = specOf(d, fromEntryId, toEntryId, kind, opts);
	const planned = planRoots(d.core, d.ctx, d.structure, d.pins, [spec]);
	const made = planned.made[0];
	const nested = made.kids.filter((k) => k < 0).map((k) => d.structure.nodes[kidFold(k)].id);
	return { result: { id: made.id, nested }, apply: planned.apply };
}

/**
 * Many marks at once, all or nothing: each checked as `mark` checks it, and against each other
 * (marks never nest or overlap), then laid in together, at the cost of their spans.
 */
export function markMany(d: LatticeData, requests: readonly MarkRequest[]): Change<MarkManyResult> {
	if (!Array.isArray(requests) || requests.length === 0) refuse("needs a non-empty list of marks");
	const specs: FoldSpec[] = [];
	for (const [i, r] of requests.entries()) {
		try {
			specs.push(specOf(d, r?.from, r?.to, r?.kind, { brief: r?.brief }));
		} catch (err) {
			refuse(`mark ${i}: ${errorMessage(err)}`);
		}
	}
	const order = specs.map((_, i) => i).sort((a, b) => specs[a].start - specs[b].start);
	for (let k = 1; k < order.length; k++) {
		const [a, b] = [specs[order[k - 1]], specs[order[k]]];
		if (b.start < a.end) {
			refuse(
				`mark ${order[k]} ${d.ctx.spanLabel(b.start, b.end)} overlaps mark ${order[k - 1]} ${d.ctx.spanLabel(a.start, a.end)}: marks do not nest or overlap`,
			);
		}
	}
	const planned = planRoots(d.core, d.ctx, d.structure, d.pins, specs);
	const idAt = new Map(planned.made.map((f) => [f.start, f.id]));
	return { result: { ids: specs.map((s) => idAt.get(s.start) as FoldId) }, apply: planned.apply };
}

export interface UnmarkResult {
	id: FoldId;
	/** The folds it contained, roots again. */
	released: FoldId[];
}

export function unmark(d: LatticeData, id: unknown): Change<UnmarkResult> {
	const f = foldById(d, id);
	if (f.state !== "pending") {
		refuse(`${describeFold(f)} is not a pending mark: unmark withdraws marks only (refold collapses an expanded fold)`);
	}
	const released = idsOf(f.kids.filter((k) => k < 0).map((k) => d.structure.nodes[kidFold(k)]));
	const structure = buildStructure(d.core, d.ctx, respec(d.structure, new Set([f.id]), []), d.pins, d.structure);
	return { result: { id: f.id, released }, structure };
}
