// Lattice validation: is a list of folds a well-formed nesting over the session's entries?
//
// Input: n folds as four i32 arrays (start, end, parent, depth). Fold i covers the entry
// positions [start[i], end[i]) of a transcript with `leafCount` entries; parent[i] is the
// index of its parent fold or -1 for a root; depth[i] is 0 for a root, else parent depth + 1.
//
// Canonical order (the arrays must be in it): pre-order, i.e. sorted by start ascending and,
// for equal starts, the longer (outer) fold first. In this order a parent always comes before
// its children, equal spans are adjacent, and the folds containing any position form a chain
// that a single stack can follow.
//
// One pass, O(n). The fast path keeps a stack of the most recent fold at each depth (a static
// buffer, DEPTH_LIMIT levels) and, per fold, tests everything in one rarely-taken branch;
// only when that branch fires does `checkFold` replay the checks below in order to name the
// violation. Given a valid prefix, fold i (depth d, parent p) passes every check exactly
// when: the local and order checks pass, d = depth[p] + 1 (0 for a root), p contains i,
// and the most recent earlier fold at depth d ends at or before start[i]. (That fold, if it
// contained start[i], would be a fold between p and i; any other earlier fold at depth d
// lies in an earlier, closed subtree.) So no ancestor walk is needed. Folds deeper than
// DEPTH_LIMIT go through `checkFold` itself, whose open-fold stack is the previous fold's
// ancestor chain read through the (already validated) parent links; each fold is popped
// from that chain at most once, so the pass stays O(n).
//
// Checks, per fold i in array order, in this order; the first failure ends the pass and is
// reported with the fold index (latticeViolationIndex) and, where one is involved, the other
// fold (latticeViolationOther, else -1):
//   EMPTY_SPAN       end <= start.
//   OUT_OF_RANGE     start < 0 or end > leafCount.
//   BAD_PARENT       parent is not -1 and not an earlier fold (< -1, >= count, self, or later).
//   DUPLICATE        same span as fold i-1 (other = i-1). Equal spans are adjacent in canonical
//                    order, so with ORDER this rejects every duplicate, a child equal to its
//                    parent included.
//   ORDER            fold i sorts before fold i-1 (other = i-1).
//   PARTIAL_OVERLAP  fold i starts inside the innermost open fold o but ends after it (other = o).
//   OUTSIDE_PARENT   the declared parent p does not contain fold i (other = p).
//   SIBLING_OVERLAP  the declared parent (or "root") contains fold i, but so does one of its
//                    other children (or another root) s: the parent is not the innermost fold
//                    containing i, so two siblings overlap (other = s).
//   DEPTH            depth is not parent depth + 1, or not 0 for a root (other = parent or -1).
//
// Why leaves are then covered exactly once: after all checks, any two folds are either
// disjoint or strictly nested (no partial overlap, no duplicates), so the folds containing a
// position form a chain ordered by inclusion, whose smallest member is unique: each position
// belongs to exactly one innermost fold, or to none when no fold contains it. The parent
// checks make that chain the parent chain, and DEPTH makes depth its length minus one.

export const LATTICE_OK: u32 = 0;
export const LATTICE_EMPTY_SPAN: u32 = 1;
export const LATTICE_OUT_OF_RANGE: u32 = 2;
export const LATTICE_BAD_PARENT: u32 = 3;
export const LATTICE_DUPLICATE: u32 = 4;
export const LATTICE_ORDER: u32 = 5;
export const LATTICE_PARTIAL_OVERLAP: u32 = 6;
export const LATTICE_OUTSIDE_PARENT: u32 = 7;
export const LATTICE_SIBLING_OVERLAP: u32 = 8;
export const LATTICE_DEPTH: u32 = 9;

let violationIndex: i32 = -1;
let violationOther: i32 = -1;

/** Index of the fold at which the last validateLattice failed, -1 when it passed. */
export function latticeViolationIndex(): i32 {
  return violationIndex;
}

/** The other fold involved in the last failure (see the codes above), else -1. */
export function latticeViolationOther(): i32 {
  return violationOther;
}

@inline function at(p: usize, i: i32): i32 {
  return load<i32>(p + (<usize>i << 2));
}

function fail(code: u32, index: i32, other: i32): u32 {
  violationIndex = index;
  violationOther = other;
  return code;
}

/** Depth levels the fast path tracks; deeper folds are checked by checkFold alone. */
const DEPTH_LIMIT: i32 = 1024;
// Most recent fold index at each depth < `height` (entries above it are never read).
const STACK: usize = memory.data(DEPTH_LIMIT << 2, 16);
let height: i32 = 0;

/** Validate `count` folds in canonical order over `leafCount` entries; returns a LATTICE_* code. */
export function validateLattice(
  start: usize, end: usize, parent: usize, depth: usize, count: u32, leafCount: u32,
): u32 {
  violationIndex = -1;
  violationOther = -1;
  height = 0;
  // One loop, no chunks: binaryen inlines a single-use range function anyway, and a cold
  // first call (baseline tier) over 85k folds measured about 2x a warm one, ~2 ms.
  return validateRange(start, end, parent, depth, <i32>count, leafCount);
}

// Reads at index -1 (a root's parent, the fold before the first) land in the 4 bytes before
// an array: host pointers are never below 4, and the values are masked out.
function validateRange(start: usize, end: usize, parent: usize, depth: usize, n: i32, leafCount: u32): u32 {
  let ps = i32.MIN_VALUE; // the previous fold's span; none before fold 0
  let pe = i32.MIN_VALUE;
  for (let i: i32 = 0; i < n; i++) {
    const s = at(start, i);
    const e = at(end, i);
    const p = at(parent, i);
    const d = at(depth, i);
    // Everything in one rarely-taken branch; the parent and stack loads only when the
    // local checks pass (p is then -1 or an earlier fold, d a tracked depth).
    let suspect =
      (e <= s) | (s < 0) | (<u32>e > leafCount) | (p < -1) | (p >= i) |
      (ps > s) | ((ps == s) & (pe <= e)) | (<u32>d >= <u32>DEPTH_LIMIT);
    if (!suspect) {
      const root = p < 0;
      const want = select<i32>(0, at(depth, p) + 1, root);
      // Slots at or above `height` may hold another call's indices: read fold i instead.
      const tracked = d < height;
      const last = select<i32>(load<i32>(STACK + (<usize>d << 2)), i, tracked);
      suspect = (d != want) | (!root & (e > at(end, p))) | (tracked & (at(end, last) > s));
    }
    if (suspect) {
      // A violation, or a fold deeper than the stack: the exact checks decide.
      const code = checkFold(start, end, parent, depth, i, leafCount);
      if (code != LATTICE_OK) return code;
    }
    if (<u32>d < <u32>DEPTH_LIMIT) {
      store<i32>(STACK + (<usize>d << 2), i);
      if (d >= height) height = d + 1;
    }
    ps = s;
    pe = e;
  }
  return LATTICE_OK;
}

/** Every check on fold i, in the documented order, assuming folds 0..i-1 passed. */
function checkFold(start: usize, end: usize, parent: usize, depth: usize, i: i32, leafCount: u32): u32 {
  const s = at(start, i);
  const e = at(end, i);
  const p = at(parent, i);
  if (e <= s) return fail(LATTICE_EMPTY_SPAN, i, -1);
  if (s < 0 || <u32>e > leafCount) return fail(LATTICE_OUT_OF_RANGE, i, -1);
  if (p < -1 || p >= i) return fail(LATTICE_BAD_PARENT, i, -1);
  let top = i - 1;
  if (top >= 0) {
    const ps = at(start, top);
    const pe = at(end, top);
    if (ps == s && pe == e) return fail(LATTICE_DUPLICATE, i, top);
    if (ps > s || (ps == s && pe < e)) return fail(LATTICE_ORDER, i, top);
    // Pop the folds that closed before s; what remains contains s.
    while (top >= 0 && at(end, top) <= s) top = at(parent, top);
    if (top >= 0 && at(end, top) < e) return fail(LATTICE_PARTIAL_OVERLAP, i, top);
  }
  if (p != top) return parentFailure(start, end, parent, i, p, top);
  const want = top < 0 ? 0 : at(depth, top) + 1;
  if (at(depth, i) != want) return fail(LATTICE_DEPTH, i, p);
  return LATTICE_OK;
}

/** Fold i's declared parent p differs from the innermost open fold `top`: say which rule broke. */
function parentFailure(start: usize, end: usize, parent: usize, i: i32, p: i32, top: i32): u32 {
  if (p >= 0 && !(at(start, p) <= at(start, i) && at(end, i) <= at(end, p))) {
    return fail(LATTICE_OUTSIDE_PARENT, i, p);
  }
  // p (or the virtual root when p == -1) contains i, so it is a proper ancestor of `top`
  // on the open chain; the chain's member just below p is the sibling that contains i.
  let s = top;
  while (s >= 0 && at(parent, s) != p) s = at(parent, s);
  return fail(LATTICE_SIBLING_OVERLAP, i, s);
}

// ---------------------------------------------------------------- self-check
// Leaves [0, 10): 0 = [0,6) root, 1 = [0,2) in 0, 2 = [2,6) in 0, 3 = [3,4) in 2, 4 = [7,10) root.
const K_START: usize = memory.data<i32>([0, 0, 2, 3, 7]);
const K_END: usize = memory.data<i32>([6, 2, 6, 4, 10]);
const K_PARENT: usize = memory.data<i32>([-1, 0, 0, 2, -1]);
const K_DEPTH: usize = memory.data<i32>([0, 1, 1, 2, 0]);
// The same with one field broken per case: [array(0 start,1 end,2 parent,3 depth), fold, value, code, index, other].
const K_CASES: usize = memory.data<i32>([
  1, 1, 0, 1, 1, -1, // [0,0) empty
  1, 4, 11, 2, 4, -1, // end past leafCount
  2, 3, 3, 3, 3, -1, // self parent
  1, 1, 6, 4, 1, 0, // child equal to parent
  0, 4, 1, 5, 4, 3, // root starting before fold 3
  1, 3, 7, 6, 3, 2, // [3,7) crosses the end of [2,6)
  2, 3, 1, 7, 3, 1, // [3,4) is not inside [0,2)
  2, 3, 0, 8, 3, 2, // [3,4) inside sibling [2,6)
  3, 4, 1, 9, 4, -1, // root with depth 1
]);
const K_SCRATCH: usize = memory.data(4 * 5 * 4);

export function selfCheckLattice(): bool {
  const bytes: usize = 5 * 4;
  const s = K_SCRATCH;
  const e = s + bytes;
  const p = e + bytes;
  const d = p + bytes;
  if (validateLattice(K_START, K_END, K_PARENT, K_DEPTH, 5, 10) != LATTICE_OK || violationIndex != -1) return false;
  for (let c: usize = 0; c < 9; c++) {
    const row = K_CASES + c * 24;
    memory.copy(s, K_START, bytes);
    memory.copy(e, K_END, bytes);
    memory.copy(p, K_PARENT, bytes);
    memory.copy(d, K_DEPTH, bytes);
    store<i32>(s + <usize>load<i32>(row) * bytes + (<usize>load<i32>(row, 4) << 2), load<i32>(row, 8));
    const code = validateLattice(s, e, p, d, 5, 10);
    if (code != <u32>load<i32>(row, 12)) return false;
    if (violationIndex != load<i32>(row, 16) || violationOther != load<i32>(row, 20)) return false;
  }
  return true;
}
