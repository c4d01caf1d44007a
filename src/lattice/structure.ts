// Builds the lattice's structure from fold specs in canonical order: parents, depths, direct
// children, identities and ids in one O(entries + folds) sweep, then the core's validateLattice.
// Every change to the fold set goes through here on a fresh copy; the lattice swaps the result in
// only when it is whole, so a refusal (thrown as `Refused`) leaves the old structure untouched.
import { toHex } from "../../bindings/hex.ts";
import type { PiFoldCore } from "../../bindings/index.ts";
import type { FoldId } from "../fold-types.ts";
import type { ContextIndex } from "./entries.ts";
import { compareSpans, describeFold, type FoldNode, type FoldSpec, foldIdOf, kidFold, specOf } from "./fold.ts";
import { refuse } from "./outcome.ts";

/** The part of the core the lattice uses. */
export type LatticeCore = Pick<PiFoldCore, "foldIdentity" | "validateLattice">;

export interface Structure {
	/** Every fold, in pre-order. */
	readonly folds: readonly FoldNode[];
	readonly byId: ReadonlyMap<FoldId, FoldNode>;
	/** The top level in order: root folds and the leaves no fold covers (encoded as FoldNode.kids). */
	readonly top: readonly number[];
	/** innermost[p]: pre-order index of the innermost fold covering position p, -1 when none. */
	readonly innermost: Int32Array;
	/** The columns validateLattice checked. */
	readonly columns: LatticeColumns;
}

export interface LatticeColumns {
	start: Int32Array;
	end: Int32Array;
	parent: Int32Array;
	depth: Int32Array;
	leafCount: number;
}

function spanText(ctx: ContextIndex, s: { start: number; end: number }): string {
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
	const parent = new Int32Array(count);
	const depth = new Int32Array(count);
	const kids: number[][] = specs.map(() => []);
	const top: number[] = [];
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
			(t === -1 ? top : kids[t]).push(-(next + 1));
			open.push(next++);
		}
		const t = open.length > 0 ? open[open.length - 1] : -1;
		innermost[p] = t;
		(t === -1 ? top : kids[t]).push(p);
	}

	// Identities bottom-up: in pre-order every child comes after its parent.
	const identities: Uint8Array[] = new Array(count);
	const hexes: string[] = new Array(count);
	for (let i = count - 1; i >= 0; i--) {
		const prior = previous && specs[i].was !== undefined ? previous.byId.get(specs[i].was!) : undefined;
		if (prior && previous && sameChildren(kids[i], specs, prior, previous)) {
			identities[i] = prior.identityBytes;
			hexes[i] = prior.identity;
		} else {
			identities[i] = core.foldIdentity(kids[i].map((k) => (k >= 0 ? ctx.digests[k] : identities[kidFold(k)])));
			hexes[i] = toHex(identities[i]);
		}
	}

	const folds: FoldNode[] = new Array(count);
	const byId = new Map<FoldId, FoldNode>();
	for (let i = 0; i < count; i++) {
		const s = specs[i];
		const identity = hexes[i];
		const id = foldIdOf(identity);
		const node: FoldNode = {
			id,
			identity,
			identityBytes: identities[i],
			kind: s.kind,
			state: s.state,
			brief: s.brief,
			provenance: s.provenance,
			start: s.start,
			end: s.end,
			index: i,
			parent: parent[i],
			depth: depth[i],
			kids: kids[i],
		};
		if (s.was !== undefined && s.was !== id) {
			refuse(`internal: the change would alter the content of fold ${s.was} (its id would become ${id})`);
		}
		const twin = byId.get(id);
		if (twin) {
			refuse(
				`${spanText(ctx, s)} would get the id ${id}, already the id of ${describeFold(twin)}: ` +
					`their leaves have identical content${twin.identity === identity ? "" : " (an id prefix collision)"}`,
			);
		}
		if (s.state === "pending" && parent[i] !== -1) {
			refuse(
				`a pending mark, ${spanText(ctx, s)}, would lie inside ${describeFold(folds[parent[i]])}: marks are roots`,
			);
		}
		byId.set(id, node);
		folds[i] = node;
	}

	for (const p of pins) {
		if (innermost[p] !== -1) {
			refuse(`pinned ${ctx.label(p)} would lie inside ${describeFold(folds[innermost[p]])}: pinned entries never fold`);
		}
	}

	const columns: LatticeColumns = {
		start: Int32Array.from(folds, (f) => f.start),
		end: Int32Array.from(folds, (f) => f.end),
		parent,
		depth,
		leafCount: n,
	};
	const verdict = core.validateLattice(columns);
	if (!verdict.ok) refuse(`the core rejects the lattice (${verdict.code}): ${verdict.message}`);
	return { folds, byId, top, innermost, columns };
}

/**
 * The specs of the current structure minus `remove`, plus `add`, in canonical order. O(folds)
 * per added fold (binary search, then one splice), no sort.
 */
export function respec(structure: Structure, remove: ReadonlySet<FoldId>, add: readonly FoldSpec[]): FoldSpec[] {
	const specs: FoldSpec[] = [];
	for (const f of structure.folds) {
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
		} else if (specs[kidFold(k)].was !== previous.folds[kidFold(o)].id) return false;
	}
	return true;
}

/** The fold with exactly the span [s, e), found by climbing from the innermost fold at s. */
export function foldAtSpan(structure: Structure, s: number, e: number): FoldNode | undefined {
	for (let i = structure.innermost[s]; i !== -1; i = structure.folds[i].parent) {
		const f = structure.folds[i];
		if (f.start === s && f.end === e) return f;
	}
	return undefined;
}

/** The empty structure over a context. */
export function emptyStructure(core: LatticeCore, ctx: ContextIndex): Structure {
	return buildStructure(core, ctx, [], []);
}
