// reboundary: re-cut the pending marks so that exactly one pending mark covers exactly a span.
//
// - Marks fully inside the span merge into it (their briefs go: the new span is a new fold).
// - A mark that overlaps the span partially, or contains it, is split: each part outside the span
//   stays a pending mark of its own (same kind, its brief reset to be rewritten), provided that
//   part is itself a closed span; otherwise the whole re-cut is refused.
// - Standing (committed or expanded) folds are never changed: inside the span they become its
//   children; a partial overlap with one, or a span inside one, is refused.
// - A span that is already exactly one mark's is left as it is (only `kind` applies, if given).
import type { FoldId, FoldKind } from "../../fold-types.ts";
import { describeFold, type FoldNode, type FoldSpec } from "../fold.ts";
import { markKind } from "../fold-values.ts";
import { refuse } from "../outcome.ts";
import { buildStructure, foldAtSpan, respec } from "../structure.ts";
import { type Change, checkFoldable, idsOf, isStanding, type LatticeData, relateSpan, spanOf } from "./common.ts";

export interface ReboundaryOptions {
	/**
	 * The new mark's kind. Default: when the span is a part of one mark (one mark cut, none merged),
	 * that mark's kind; otherwise "chapter" (the span joins units or adds raw ones).
	 */
	kind?: FoldKind;
}

export interface ReboundaryResult {
	id: FoldId;
	/** Marks merged into the new one. */
	merged: FoldId[];
	/** Marks cut, and the pending marks their outside parts became. */
	split: { from: FoldId; into: FoldId[] }[];
	/** False when the span already was exactly one mark (and the kind did not change). */
	changed: boolean;
}

export function reboundary(
	d: LatticeData,
	fromEntryId: unknown,
	toEntryId: unknown,
	opts: ReboundaryOptions = {},
): Change<ReboundaryResult> {
	const [s, e] = spanOf(d.ctx, fromEntryId, toEntryId);
	const kind = opts?.kind === undefined ? undefined : markKind(opts.kind);
	checkFoldable(d, s, e);
	const span = d.ctx.spanLabel(s, e);
	const rel = relateSpan(d.structure, s, e);

	const standingPartial = rel.partial.find(isStanding);
	if (standingPartial) {
		refuse(
			`the span ${span} partially overlaps ${describeFold(standingPartial)}: reboundary never changes standing folds`,
		);
	}
	const standingContainer = rel.containers.findLast(isStanding);
	if (standingContainer) {
		refuse(`the span ${span} lies inside ${describeFold(standingContainer)}: reboundary never changes standing folds`);
	}
	if (rel.equal && isStanding(rel.equal)) {
		refuse(`the span ${span} is exactly ${describeFold(rel.equal)}: reboundary never changes standing folds`);
	}
	if (rel.equal) {
		const same = rel.equal;
		const changed = kind !== undefined && kind !== same.kind;
		return {
			result: { id: same.id, merged: [], split: [], changed },
			apply:
				kind === undefined
					? undefined
					: () => {
							same.kind = kind;
						},
		};
	}

	// Marks are roots and disjoint, so what is left is: marks inside (merged), and at most two marks
	// reaching outside the span (or one containing it), which are split.
	const merged = rel.inside.filter((f) => !isStanding(f));
	const cut = [...rel.containers, ...rel.partial];
	const remainders: { from: FoldNode; spec: FoldSpec }[] = [];
	for (const f of cut) {
		for (const [a, b] of [
			[f.start, s],
			[e, f.end],
		]) {
			if (a >= b) continue;
			const problem = d.ctx.spanProblem(a, b);
			if (problem) {
				refuse(`splitting ${describeFold(f)} would leave [${a}, ${b}) as a mark of its own, and ${problem}`);
			}
			const twin = relateSpan(d.structure, a, b).equal;
			if (twin) refuse(`splitting ${describeFold(f)} would leave [${a}, ${b}), which is exactly ${describeFold(twin)}`);
			remainders.push({
				from: f,
				spec: { start: a, end: b, kind: f.kind, state: "pending", brief: "", provenance: "deterministic" },
			});
		}
	}
	const touched = [...merged, ...cut];
	const spec: FoldSpec = {
		start: s,
		end: e,
		kind: kind ?? (merged.length === 0 && cut.length === 1 ? cut[0].kind : "chapter"),
		state: "pending",
		brief: "",
		provenance: "deterministic",
	};
	const remove = new Set(idsOf(touched));
	const structure = buildStructure(
		d.core,
		d.ctx,
		respec(d.structure, remove, [spec, ...remainders.map((r) => r.spec)]),
		d.pins,
		d.structure,
	);
	const split = cut.map((f) => ({
		from: f.id,
		into: remainders.filter((r) => r.from === f).map((r) => foldAtSpan(structure, r.spec.start, r.spec.end)!.id),
	}));
	return { result: { id: foldAtSpan(structure, s, e)!.id, merged: idsOf(merged), split, changed: true }, structure };
}
