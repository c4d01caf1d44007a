// The lattice's structure: every fold by slot (a fold keeps its slot for as long as it exists), its
// parent and children by slot, the roots in transcript order, and the innermost fold of each
// position. Slots make growth cheap: a new root over older roots (a mark, a consolidation) only
// appends a node and relinks its children (roots.ts), nothing is renumbered. Pre-order, depths and
// the core's columns are derived on demand.
//
// buildStructure builds one whole from fold specs in canonical order (parents, children,
// identities and ids in one O(entries + folds) sweep, then the core's validateLattice). Creating,
// loading, and the operations that remove folds (unmark, reboundary) go through it on a fresh
// copy; the lattice swaps the result in only when it is whole, so a refusal (thrown as `Refused`)
// leaves the old structure untouched.
import { toHex } from "../../bindings/hex.ts";
import type { PiFoldCore } from "../../bindings/index.ts";
import type { FoldId } from "../fold-types.ts";
import type { ContextIndex } from "./entries.ts";
import { compareSpans, describeFold, type FoldNode, type FoldSpec, foldIdOf, kidFold, nodeOf, specOf } from "./fold.ts";
import { refuse } from "./outcome.ts";

/** The part of the core the lattice uses. */
export type LatticeCore = Pick<PiFoldCore, "foldIdentity" | "validateLattice">;

/**
 * One lattice's structure. It belongs to that lattice alone (clone copies it), so the growth
 * operations may change it in place once their change is known to be whole.
 */
export interface Structure {
	/** Every fold, by slot. */
	nodes: FoldNode[];
	byId: Map<FoldId, FoldNode>;
	/** Slots of the root folds, in transcript order. */
	roots: number[];
	/** innermost[p]: slot of the innermost fold covering position p, -1 when none (may be longer than the context). */
	innermost: Int32Array;
	/** Pre-order, computed on demand and dropped by every change. */
	preorder?: FoldNode[];
}

export interface LatticeColumns {
	start: Int32Array;
	end: Int32Array;
	parent: Int32Array;
	depth: Int32Array;
	leafCount: number;
}

export function spanText(ctx: ContextIndex, s: { start: number; end: number }): string {
	return s.start >= 0 && s.start < s.end && s.end <= ctx.size
		? `fold over ${ctx.spanLabel(s.start, s.end)}`
		: `fold over [${s.start}, ${s.end})`;
}

/**
 * Build and check a structure. `specs` must be in canonical order; `pins` are entry positions that
 * no fold may cover. A spec carried over from `previous` (its `was`) whose children are unchanged
 * keeps its identity without rehashing, so a change costs hashing only for the folds it makes.
 * Refuses (throws `Refused`) on anything invalid.
 */
export function buildStructure(
	core: LatticeCore,
	ctx: ContextIndex,
	specs: readonly FoldSpec[],
	pins: Iterable<number>,
	previous?: Structure,
): Structure {
	const n = ctx.size;
	const count = specs.length;
	for (let i = 0; i < count; i++) {
		const f = specs[i];
		if (!(Number.isInteger(f.start) && Number.isInteger(f.end) && f.start >= 0 && f.start < f.end && f.end <= n)) {
			refuse(`${spanText(ctx, f)} is empty or reaches outside the context's ${n} entries`);
		}
		if (i > 0) {
			const order = compareSpans(specs[i - 1], f);
			if (order === 0) refuse(`two folds would cover the same span, ${spanText(ctx, f)}`);
			if (order > 0) refuse(`internal: ${spanText(ctx, f)} is out of canonical order`);
		}
	}

	// One sweep over positions with a stack of open folds gives parents, depths and direct children.
	// Slots are the pre-order indices here.
	const parent = new Int32Array(count);
	const depth = new Int32Array(count);
	const kids: number[][] = specs.map(() => []);
	const roots: number[] = [];
	const innermost = new Int32Array(n);
	const open: number[] = [];
	let next = 0;
	for (let p = 0; p < n; p++) {
		while (open.length > 0 && specs[open[open.length - 1]].end <= p) open.pop();
		while (next < count && specs[next].start === p) {
			const t = open.length > 0 ? open[open.length - 1] : -1;
			if (t !== -1 && specs[next].end > specs[t].end) {
				refuse(`${spanText(ctx, specs[next])} partially overlaps ${spanText(ctx, specs[t])}`);
			}
			parent[next] = t;
			depth[next] = t === -1 ? 0 : depth[t] + 1;
			if (t === -1) roots.push(next);
			else kids[t].push(-(next + 1));
			open.push(next++);
		}
		const t = open.length > 0 ? open[open.length - 1] : -1;
		innermost[p] = t;
		if (t !== -1) kids[t].push(p);
	}

	// Identities and heights bottom-up: in pre-order every child comes after its parent.
	const identities: Uint8Array[] = new Array(count);
	const hexes: string[] = new Array(count);
	const heights = new Int32Array(count);
	for (let i = count - 1; i >= 0; i--) {
		heights[i] = heightOf(kids[i], (slot) => heights[slot]);
		const prior = previous && specs[i].was !== undefined ? previous.byId.get(specs[i].was!) : undefined;
		if (prior && previous && sameChildren(kids[i], specs, prior, previous)) {
			identities[i] = prior.identityBytes;
			hexes[i] = prior.identity;
		} else {
			identities[i] = core.foldIdentity(kids[i].map((k) => (k >= 0 ? ctx.digest(k) : identities[kidFold(k)])));
			hexes[i] = toHex(identities[i]);
		}
	}

	const nodes: FoldNode[] = new Array(count);
	const byId = new Map<FoldId, FoldNode>();
	for (let i = 0; i < count; i++) {
		const s = specs[i];
		const identity = hexes[i];
		const id = foldIdOf(identity);
		const node = nodeOf(s, identities[i], identity, { slot: i, parent: parent[i], kids: kids[i], height: heights[i] });
		if (s.was !== undefined && s.was !== id) {
			refuse(`internal: the change would alter the content of fold ${s.was} (its id would become ${id})`);
		}
		const twin = byId.get(id);
		if (twin) refuseTwin(ctx, s, id, identity, twin);
		if (s.state === "pending" && parent[i] !== -1) {
			refuse(
				`a pending mark, ${spanText(ctx, s)}, would lie inside ${describeFold(nodes[parent[i]])}: marks are roots`,
			);
		}
		byId.set(id, node);
		nodes[i] = node;
	}

	for (const p of pins) {
		if (innermost[p] !== -1) {
			refuse(`pinned ${ctx.label(p)} would lie inside ${describeFold(nodes[innermost[p]])}: pinned entries never fold`);
		}
	}

	const columns: LatticeColumns = {
		start: Int32Array.from(nodes, (f) => f.start),
		end: Int32Array.from(nodes, (f) => f.end),
		parent,
		depth,
		leafCount: n,
	};
	const verdict = core.validateLattice(columns);
	if (!verdict.ok) refuse(`the core rejects the lattice (${verdict.code}): ${verdict.message}`);
	return { nodes, byId, roots, innermost, preorder: nodes.slice() };
}

/** Two folds would share an id: their leaves have identical content (or, vanishingly, an id prefix collides). */
export function refuseTwin(
	ctx: ContextIndex,
	s: { start: number; end: number },
	id: FoldId,
	identity: string,
	twin: FoldNode,
): never {
	refuse(
		`${spanText(ctx, s)} would get the id ${id}, already the id of ${describeFold(twin)}: ` +
			`their leaves have identical content${twin.identity === identity ? "" : " (an id prefix collision)"}`,
	);
}

/** Every fold in pre-order (transcript order, outer before inner). */
export function preorderOf(structure: Structure): FoldNode[] {
	if (structure.preorder) return structure.preorder;
	const out: FoldNode[] = [];
	const visit = (slot: number): void => {
		const f = structure.nodes[slot];
		out.push(f);
		for (const k of f.kids) if (k < 0) visit(kidFold(k));
	};
	for (const r of structure.roots) visit(r);
	structure.preorder = out;
	return out;
}

/** A fold's height from its children's: 1 with leaves only, else one more than the highest child fold. */
export function heightOf(kids: readonly number[], childHeight: (slot: number) => number): number {
	let h = 1;
	for (const k of kids) if (k < 0) h = Math.max(h, childHeight(kidFold(k)) + 1);
	return h;
}

/** Nesting depth of a fold (a root has 0). */
export function depthOf(structure: Structure, f: FoldNode): number {
	let d = 0;
	for (let i = f.parent; i !== -1; i = structure.nodes[i].parent) d++;
	return d;
}

/** The root fold above (or at) a fold. */
export function rootOf(structure: Structure, f: FoldNode): FoldNode {
	let r = f;
	while (r.parent !== -1) r = structure.nodes[r.parent];
	return r;
}

/** Pre-order columns, as validateLattice takes them. */
export function columnsOf(structure: Structure, leafCount: number): LatticeColumns {
	const order = preorderOf(structure);
	const index = new Map<FoldNode, number>(order.map((f, i) => [f, i]));
	const depth = new Int32Array(order.length);
	const parent = new Int32Array(order.length);
	order.forEach((f, i) => {
		parent[i] = f.parent === -1 ? -1 : (index.get(structure.nodes[f.parent]) as number);
		depth[i] = parent[i] === -1 ? 0 : depth[parent[i]] + 1;
	});
	return {
		start: Int32Array.from(order, (f) => f.start),
		end: Int32Array.from(order, (f) => f.end),
		parent,
		depth,
		leafCount,
	};
}

/**
 * The specs of the current structure minus `remove`, plus `add`, in canonical order. O(folds)
 * per added fold (binary search, then one splice), no sort.
 */
export function respec(structure: Structure, remove: ReadonlySet<FoldId>, add: readonly FoldSpec[]): FoldSpec[] {
	const specs: FoldSpec[] = [];
	for (const f of preorderOf(structure)) {
		if (!remove.has(f.id)) specs.push(specOf(f));
	}
	for (const spec of add) {
		let lo = 0;
		let hi = specs.length;
		while (lo < hi) {
			const mid = (lo + hi) >>> 1;
			if (compareSpans(specs[mid], spec) < 0) lo = mid + 1;
			else hi = mid;
		}
		specs.splice(lo, 0, spec);
	}
	return specs;
}

/** Whether a carried fold's new children are its old ones: the same leaves and the same carried folds. */
function sameChildren(
	kids: readonly number[],
	specs: readonly FoldSpec[],
	prior: FoldNode,
	previous: Structure,
): boolean {
	const old = prior.kids;
	if (old.length !== kids.length) return false;
	for (let j = 0; j < kids.length; j++) {
		const k = kids[j];
		const o = old[j];
		if (k >= 0 || o >= 0) {
			if (k !== o) return false;
		} else if (specs[kidFold(k)].was !== previous.nodes[kidFold(o)].id) return false;
	}
	return true;
}

/** The fold with exactly the span [s, e), found by climbing from the innermost fold at s. */
export function foldAtSpan(structure: Structure, s: number, e: number): FoldNode | undefined {
	for (let i = structure.innermost[s]; i !== -1; i = structure.nodes[i].parent) {
		const f = structure.nodes[i];
		if (f.start === s && f.end === e) return f;
	}
	return undefined;
}

/** A copy another lattice may change without this one seeing it: nodes, their index and arrays. */
export function copyStructure(s: Structure, size: number): Structure {
	const nodes = s.nodes.map((f) => ({ ...f }));
	return {
		nodes,
		byId: new Map(nodes.map((f) => [f.id, f])),
		roots: s.roots.slice(),
		innermost: s.innermost.slice(0, size),
	};
}
