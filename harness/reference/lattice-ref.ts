// Plain TypeScript references for lattice validation (assembly/lattice.ts), same contract:
// canonical pre-order, checks per fold in array order, first failure reported as
// { code, index, other }. Two versions: one on typed arrays written for speed (the core's
// algorithm), one on objects with a stack array, written for clarity.
import { LATTICE_CODES as C } from "../../bindings/lattice.ts";

export interface LatticeRefResult {
	code: number;
	/** First failing fold, -1 when OK. */
	index: number;
	/** The other fold involved, -1 when none. */
	other: number;
}

export interface Fold {
	start: number;
	end: number;
	parent: number;
	depth: number;
}

const OK: LatticeRefResult = Object.freeze({ code: C.OK, index: -1, other: -1 });

// ---------------------------------------------------------------- (a) typed arrays, for speed

const DEPTH_LIMIT = 1024;
const stack = new Int32Array(DEPTH_LIMIT); // most recent fold at each depth < height

/**
 * The core's algorithm: one cheap combined test per fold against the per-depth stack, and the
 * exact ordered checks (checkFold) only when it fails or the fold is too deep for the stack.
 */
export function validateLatticeTyped(
	start: Int32Array,
	end: Int32Array,
	parent: Int32Array,
	depth: Int32Array,
	leafCount: number,
): LatticeRefResult {
	const n = start.length;
	let height = 0;
	let ps = -0x8000_0000;
	let pe = -0x8000_0000;
	for (let i = 0; i < n; i++) {
		const s = start[i];
		const e = end[i];
		const p = parent[i];
		const d = depth[i];
		let suspect =
			e <= s ||
			s < 0 ||
			e > leafCount ||
			p < -1 ||
			p >= i ||
			ps > s ||
			(ps === s && pe <= e) ||
			d < 0 ||
			d >= DEPTH_LIMIT;
		if (!suspect) {
			const root = p < 0;
			suspect = d !== (root ? 0 : depth[p] + 1) || (!root && e > end[p]) || (d < height && end[stack[d]] > s);
		}
		if (suspect) {
			const result = checkFold(start, end, parent, depth, i, leafCount);
			if (result !== OK) return result;
		}
		if (d >= 0 && d < DEPTH_LIMIT) {
			stack[d] = i;
			if (d >= height) height = d + 1;
		}
		ps = s;
		pe = e;
	}
	return OK;
}

/** Every check on fold i, in the documented order; the open stack is fold i-1's parent chain. */
function checkFold(
	start: Int32Array,
	end: Int32Array,
	parent: Int32Array,
	depth: Int32Array,
	i: number,
	leafCount: number,
): LatticeRefResult {
	const s = start[i];
	const e = end[i];
	const p = parent[i];
	if (e <= s) return { code: C.EMPTY_SPAN, index: i, other: -1 };
	if (s < 0 || e > leafCount) return { code: C.OUT_OF_RANGE, index: i, other: -1 };
	if (p < -1 || p >= i) return { code: C.BAD_PARENT, index: i, other: -1 };
	let top = i - 1;
	if (top >= 0) {
		const ps = start[top];
		const pe = end[top];
		if (ps === s && pe === e) return { code: C.DUPLICATE, index: i, other: top };
		if (ps > s || (ps === s && pe < e)) return { code: C.ORDER, index: i, other: top };
		while (top >= 0 && end[top] <= s) top = parent[top];
		if (top >= 0 && end[top] < e) return { code: C.PARTIAL_OVERLAP, index: i, other: top };
	}
	if (p !== top) {
		if (p >= 0 && !(start[p] <= s && e <= end[p])) return { code: C.OUTSIDE_PARENT, index: i, other: p };
		let sib = top;
		while (sib >= 0 && parent[sib] !== p) sib = parent[sib];
		return { code: C.SIBLING_OVERLAP, index: i, other: sib };
	}
	if (depth[i] !== (top < 0 ? 0 : depth[top] + 1)) return { code: C.DEPTH, index: i, other: p };
	return OK;
}

// ---------------------------------------------------------------- (b) objects, for clarity

const contains = (outer: Fold, inner: Fold) => outer.start <= inner.start && inner.end <= outer.end;
const sameSpan = (a: Fold, b: Fold) => a.start === b.start && a.end === b.end;

/** Canonical order: start ascending, the longer fold first on equal starts. */
const canonicalCompare = (a: Fold, b: Fold) => a.start - b.start || b.end - a.end;

/** Straightforward version: an explicit stack of open folds, checked fold by fold. */
export function validateLatticeObjects(folds: readonly Fold[], leafCount: number): LatticeRefResult {
	const open: number[] = []; // indices of the folds containing the current start, outermost first
	const fail = (code: number, index: number, other = -1) => ({ code, index, other });
	for (const [i, fold] of folds.entries()) {
		if (fold.end <= fold.start) return fail(C.EMPTY_SPAN, i);
		if (fold.start < 0 || fold.end > leafCount) return fail(C.OUT_OF_RANGE, i);
		const isRoot = fold.parent === -1;
		if (!isRoot && !(Number.isInteger(fold.parent) && fold.parent >= 0 && fold.parent < i)) {
			return fail(C.BAD_PARENT, i);
		}
		if (i > 0) {
			const previous = folds[i - 1];
			if (sameSpan(previous, fold)) return fail(C.DUPLICATE, i, i - 1);
			if (canonicalCompare(previous, fold) > 0) return fail(C.ORDER, i, i - 1);
		}
		while (open.length > 0 && folds[open[open.length - 1]].end <= fold.start) open.pop();
		const innermost = open.length > 0 ? open[open.length - 1] : -1;
		if (innermost !== -1 && folds[innermost].end < fold.end) return fail(C.PARTIAL_OVERLAP, i, innermost);
		if (fold.parent !== innermost) {
			if (!isRoot && !contains(folds[fold.parent], fold)) return fail(C.OUTSIDE_PARENT, i, fold.parent);
			// The declared parent is on the stack (or is the virtual root below it): the fold
			// just above it also contains this one and has the same parent.
			return fail(C.SIBLING_OVERLAP, i, open[open.indexOf(fold.parent) + 1]);
		}
		if (fold.depth !== open.length) return fail(C.DEPTH, i, fold.parent);
		open.push(i);
	}
	return OK;
}

/** Columns to objects, for the object reference. */
export function toFolds(
	start: ArrayLike<number>,
	end: ArrayLike<number>,
	parent: ArrayLike<number>,
	depth: ArrayLike<number>,
): Fold[] {
	return Array.from({ length: start.length }, (_, i) => ({
		start: start[i],
		end: end[i],
		parent: parent[i],
		depth: depth[i],
	}));
}

/**
 * An independent, brute-force definition of a valid lattice (O(n^2), for small tests only):
 * spans non-empty and in range, strictly sorted in canonical order, every pair disjoint or
 * strictly nested, each parent the smallest fold strictly containing the child, each depth
 * the number of folds strictly containing it.
 */
export function isValidLatticeBruteForce(folds: readonly Fold[], leafCount: number): boolean {
	for (const [i, f] of folds.entries()) {
		if (!(f.start < f.end && f.start >= 0 && f.end <= leafCount)) return false;
		if (i > 0 && canonicalCompare(folds[i - 1], f) >= 0) return false;
		const containers = folds.filter((g, j) => j !== i && contains(g, f));
		if (containers.some((g) => sameSpan(g, f))) return false;
		if (folds.some((g) => g.start < f.start && f.start < g.end && g.end < f.end)) return false;
		if (f.depth !== containers.length) return false;
		const smallest = containers.sort((a, b) => a.end - a.start - (b.end - b.start))[0];
		if ((smallest === undefined ? -1 : folds.indexOf(smallest)) !== f.parent) return false;
	}
	return true;
}
