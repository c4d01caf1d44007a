// What every operation works on, and the argument checks they share. Operations read the current
// state and return a Change; they never modify anything themselves (the lattice applies a Change
// only once it is whole).
import type { FoldId } from "../../fold-types.ts";
import type { ContextIndex } from "../entries.ts";
import type { FoldNode } from "../fold.ts";
import { refuse, show } from "../outcome.ts";
import { type LatticeCore, preorderOf, type Structure } from "../structure.ts";

export interface LatticeData {
	readonly core: LatticeCore;
	readonly ctx: ContextIndex;
	readonly structure: Structure;
	/** Pinned entry positions. */
	readonly pins: ReadonlySet<number>;
}

/**
 * An operation's accepted change: a new structure and/or pin set to swap in, and/or attribute
 * updates (state, brief) to apply to existing folds, plus what to answer.
 */
export interface Change<T extends object> {
	result: T;
	structure?: Structure;
	pins?: ReadonlySet<number>;
	apply?: () => void;
}

/** The span [s, e) from two entry ids, in order. */
export function spanOf(ctx: ContextIndex, fromEntryId: unknown, toEntryId: unknown): [number, number] {
	const s = ctx.resolve(fromEntryId, "from entry");
	const t = ctx.resolve(toEntryId, "to entry");
	if (s > t) {
		refuse(
			`the from entry ${ctx.label(s)} comes after the to entry ${ctx.label(t)}: a span runs from the earlier entry`,
		);
	}
	return [s, t + 1];
}

/** Refuse a span no fold may ever cover: a system entry, a split tool batch, a pinned entry. */
export function checkFoldable(d: LatticeData, s: number, e: number): void {
	const problem = d.ctx.spanProblem(s, e);
	if (problem) refuse(problem);
	let pinned = -1;
	for (const p of d.pins) if (p >= s && p < e && (pinned === -1 || p < pinned)) pinned = p;
	if (pinned !== -1) {
		refuse(
			`the span ${d.ctx.spanLabel(s, e)} contains pinned ${d.ctx.label(pinned)}: pinned entries never fold (unpin it first)`,
		);
	}
}

/** How the existing folds stand to a span [s, e). Every list is in pre-order (outermost first). */
interface SpanRelations {
	/** The fold with exactly this span. */
	equal?: FoldNode;
	/** Folds that overlap it without either containing the other. */
	partial: FoldNode[];
	/** Folds strictly containing it. */
	containers: FoldNode[];
	/** Folds strictly inside it. */
	inside: FoldNode[];
}

/** How every fold stands to [s, e): a scan of them all (reboundary needs every fold inside). */
export function relateSpan(structure: Structure, s: number, e: number): SpanRelations {
	const rel: SpanRelations = { partial: [], containers: [], inside: [] };
	for (const f of preorderOf(structure)) {
		if (f.end <= s || f.start >= e) continue;
		if (f.start === s && f.end === e) rel.equal = f;
		else if (f.start <= s && f.end >= e) rel.containers.push(f);
		else if (f.start >= s && f.end <= e) rel.inside.push(f);
		else rel.partial.push(f);
	}
	return rel;
}

/** What a new mark over [s, e) must know of the folds there: the first of each kind that refuses it. */
interface MarkRelations {
	equal?: FoldNode;
	/** The first fold, in pre-order, overlapping the span partially. */
	partial?: FoldNode;
	/** The innermost fold strictly containing the span. */
	container?: FoldNode;
	/** The first pending mark strictly inside the span. */
	pendingInside?: FoldNode;
}

/**
 * relateSpan's answers a mark needs, from the folds at the span's two ends and the roots inside it,
 * without a scan of every fold. Laminar folds make it exact: a fold equal to, containing or
 * partially overlapping [s, e) covers s or e - 1, so it is on the ancestor chain of one of them,
 * and a pending mark is always a root.
 */
export function relateForMark(structure: Structure, s: number, e: number): MarkRelations {
	const rel: MarkRelations = {};
	const chain = (p: number): FoldNode[] => {
		const out: FoldNode[] = [];
		for (let i = structure.innermost[p]; i !== -1; i = structure.nodes[i].parent) out.push(structure.nodes[i]);
		return out.reverse(); // outermost first, as in pre-order
	};
	for (const f of chain(s)) {
		if (f.start === s && f.end === e) rel.equal = f;
		else if (f.start <= s && f.end >= e) rel.container = f;
		else if (f.start < s) rel.partial ??= f;
	}
	if (!rel.partial) {
		for (const f of chain(e - 1)) {
			if (f.start > s && f.end > e) {
				rel.partial = f;
				break;
			}
		}
	}
	const { roots, nodes } = structure;
	let lo = 0;
	let hi = roots.length;
	while (lo < hi) {
		const mid = (lo + hi) >>> 1;
		if (nodes[roots[mid]].start < s) lo = mid + 1;
		else hi = mid;
	}
	for (let i = lo; i < roots.length && nodes[roots[i]].start < e; i++) {
		const f = nodes[roots[i]];
		if (f.state === "pending" && f.end <= e && !(f.start === s && f.end === e)) {
			rel.pendingInside = f;
			break;
		}
	}
	return rel;
}

export function isStanding(f: FoldNode): boolean {
	return f.state !== "pending";
}

export function foldById(d: LatticeData, id: unknown): FoldNode {
	if (typeof id !== "string") refuse(`a fold id must be a string, got ${show(id)}`);
	const f = d.structure.byId.get(id);
	if (!f) refuse(`unknown fold ${show(id)}: the lattice has no fold with that id (${d.structure.nodes.length} folds)`);
	return f;
}

/** A non-empty list of distinct strings, for the list operations. */
function distinctList(value: unknown, what: string, op: string): string[] {
	if (!Array.isArray(value)) refuse(`${op} takes an array of ${what} ids, got ${show(value)}`);
	if (value.length === 0) refuse(`${op} needs at least one ${what} id, got an empty list`);
	const seen = new Set<string>();
	for (const v of value) {
		if (typeof v !== "string") refuse(`${op}: every ${what} id must be a string, got ${show(v)}`);
		if (seen.has(v)) refuse(`${op}: ${what} ${show(v)} is listed twice`);
		seen.add(v);
	}
	return value;
}

export function foldList(d: LatticeData, ids: unknown, op: string): FoldNode[] {
	return distinctList(ids, "fold", op).map((id) => foldById(d, id));
}

export function entryPositions(d: LatticeData, ids: unknown, op: string): number[] {
	return distinctList(ids, "entry", op).map((id) => d.ctx.resolve(id));
}

/** The fold ids of a list of nodes. */
export function idsOf(folds: readonly FoldNode[]): FoldId[] {
	return folds.map((f) => f.id);
}
