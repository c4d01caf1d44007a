// Selection at a commit: which pending marks to apply, and which visible
// fold roots to consolidate under a parent.
//
// Consolidation rule, and why: once more than consolidateAfter unpinned roots are visible,
// adjacent roots get a parent. A consolidation takes two or more adjacent folds, and
// consolidateAfter is a count of visible roots per parent owed (a trigger, not a group width).
// Merging every run of adjacent roots whole, oldest first, takes the last consolidation again with
// the newest roots at each commit: a chain one level deeper per commit, as deep as the session is
// long. So, given each root's height (levels of folds in it), roots are merged like the digits of
// a counter: only runs of adjacent roots of equal height, lowest height first (the newest,
// smallest folds), cut into parents of at most `fanout` children each (near-equal sizes), until
// few enough roots are left. A parent of equal-height children is one level above them and holds
// at least twice the marks of one, so a tree of height h holds at least 2^(h-1) marks: depth grows
// with the logarithm of the session, and no brief indexes more than `fanout` children. Only when
// every neighbour differs in height (the roots are a full counter, which takes about
// 2^consolidateAfter marks) are adjacent pairs of different heights merged, the pair with the
// lowest higher root first. Without heights (all equal) and without a fan-out this is the
// whole-run rule, unchanged.

/** Mark / root flag bits (u8 per item). Other bits are reserved and ignored. */
export const MARK_ELIGIBLE: u32 = 1;
export const MARK_PINNED: u32 = 2;
/** Scratch selectCommit needs per mark at `work`: two u64 key arrays for the sort. */
export const COMMIT_WORK_BYTES_PER_MARK: u32 = 16;

// ---------------------------------------------------------------- commit selection

let commitFreed: f64 = 0;
let commitMet: bool = true;

/** Tokens freed by the marks the last selectCommit chose. */
export function selectFreed(): f64 {
  return commitFreed;
}

/** Whether the last selectCommit freed at least what it was asked to. */
export function selectMet(): bool {
  return commitMet;
}

let gatheredSorted: bool = true;

/**
 * Pack each eligible, unpinned mark as (position with the sign bit flipped) << 32 | index
 * into `work`, in index order; returns how many. Sorting these u64 values orders by
 * position then index, so ties need no extra care. Notes whether they are already sorted.
 */
function gather(position: usize, flags: usize, count: u32, work: usize): u32 {
  let m: u32 = 0;
  let prev: u32 = 0;
  let sorted = true;
  for (let i: u32 = 0; i < count; i++) {
    if ((<u32>load<u8>(flags + i) & (MARK_ELIGIBLE | MARK_PINNED)) != MARK_ELIGIBLE) continue;
    const key = <u32>load<i32>(position + (<usize>i << 2)) ^ 0x80000000;
    if (key < prev) sorted = false;
    prev = key;
    store<u64>(work + (<usize>m << 3), (<u64>key << 32) | <u64>i);
    m++;
  }
  gatheredSorted = sorted;
  return m;
}

// Four 256-bucket histograms, one per byte of the position key.
const HIST: usize = memory.data(4 * 256 * 4, 16);

function histogram(src: usize, m: u32): void {
  memory.fill(HIST, 0, 4 * 256 * 4);
  for (let j: u32 = 0; j < m; j++) {
    const key = <u32>(load<u64>(src + (<usize>j << 3)) >> 32);
    const h0 = HIST + ((<usize>key & 0xff) << 2);
    const h1 = HIST + 1024 + (((<usize>key >> 8) & 0xff) << 2);
    const h2 = HIST + 2048 + (((<usize>key >> 16) & 0xff) << 2);
    const h3 = HIST + 3072 + ((<usize>key >> 24) << 2);
    store<u32>(h0, load<u32>(h0) + 1);
    store<u32>(h1, load<u32>(h1) + 1);
    store<u32>(h2, load<u32>(h2) + 1);
    store<u32>(h3, load<u32>(h3) + 1);
  }
}

/** One stable counting pass on key byte `b`; false (nothing moved) when every key shares that byte. */
function scatter(src: usize, dst: usize, m: u32, b: u32): bool {
  const hist = HIST + (<usize>b << 10);
  let sum: u32 = 0;
  for (let v: usize = 0; v < 256; v++) {
    const c = load<u32>(hist + (v << 2));
    if (c == m) return false;
    store<u32>(hist + (v << 2), sum);
    sum += c;
  }
  const shift = <u64>(32 + (b << 3));
  for (let j: u32 = 0; j < m; j++) {
    const item = load<u64>(src + (<usize>j << 3));
    const h = hist + (<usize>((item >> shift) & 0xff) << 2);
    const to = load<u32>(h);
    store<u32>(h, to + 1);
    store<u64>(dst + (<usize>to << 3), item);
  }
  return true;
}

/** LSD radix sort of m packed items at `a` (spare room at `b`); returns where the sorted items are. */
function radixSort(a: usize, b: usize, m: u32): usize {
  histogram(a, m);
  let src = a;
  let dst = b;
  for (let byte: u32 = 0; byte < 4; byte++) {
    if (scatter(src, dst, m, byte)) {
      const t = src;
      src = dst;
      dst = t;
    }
  }
  return src;
}

/**
 * Choose pending marks stalest first: eligible (flag 1), unpinned (flag 2 clear), by position
 * ascending, ties by lower index, stopping as soon as the freed total reaches `need`.
 * Marks may be unsorted. Writes the chosen indices, in the order chosen, at `out` (i32) and
 * returns how many; see selectFreed / selectMet. need <= 0 chooses nothing (met).
 * `work` holds COMMIT_WORK_BYTES_PER_MARK * count bytes of scratch.
 */
export function selectCommit(
  position: usize, tokens: usize, flags: usize, count: u32, need: f64, out: usize, work: usize,
): u32 {
  commitFreed = 0;
  commitMet = true;
  if (need <= 0) return 0;
  const m = gather(position, flags, count, work);
  const items = gatheredSorted ? work : radixSort(work, work + (<usize>m << 3), m);
  let freed: f64 = 0;
  let k: u32 = 0;
  while (k < m) {
    const index = <u32>load<u64>(items + (<usize>k << 3));
    store<u32>(out + (<usize>k << 2), index);
    freed += <f64>load<u32>(tokens + (<usize>index << 2));
    k++;
    if (freed >= need) break;
  }
  commitFreed = freed;
  commitMet = freed >= need;
  return k;
}

// ---------------------------------------------------------------- consolidation

let unpinnedBefore: u32 = 0;
let unpinnedAfter: u32 = 0;
let consolidationAim: bool = true;

/** Unpinned visible roots before the last selectConsolidation. */
export function consolidationUnpinnedBefore(): u32 {
  return unpinnedBefore;
}

/** Unpinned visible roots once its groups are merged. */
export function consolidationUnpinnedAfter(): u32 {
  return unpinnedAfter;
}

/** Whether that is at most consolidateAfter. */
export function consolidationMet(): bool {
  return consolidationAim;
}

/** selectConsolidation's answer when the roots are not disjoint spans in transcript order. */
export const CONSOLIDATION_BAD_ROOTS: u32 = 0xffffffff;
let badRoot: i32 = -1;

/** The first root that is empty or starts before the previous one ends, else -1. */
export function consolidationBadRoot(): i32 {
  return badRoot;
}

@inline function pinnedAt(flags: usize, i: u32): bool {
  return (<u32>load<u8>(flags + i) & MARK_PINNED) != 0;
}

/** Scratch selectConsolidation needs per root at `work`: two u64 arrays, a u32 and a u8 per root. */
export const CONSOLIDATION_WORK_BYTES_PER_ROOT: u32 = 24;

@inline function heightAt(height: usize, i: u32): u32 {
  return height == 0 ? 1 : <u32>load<i32>(height + (<usize>i << 2));
}

/** Whether roots i and i + 1 may share a parent: both unpinned, at most maxGap entries apart. */
@inline function joins(start: usize, end: usize, flags: usize, i: u32, maxGap: u32): bool {
  if (pinnedAt(flags, i) || pinnedAt(flags, i + 1)) return false;
  const gap = <i64>load<i32>(start + (<usize>(i + 1) << 2)) - <i64>load<i32>(end + (<usize>i << 2));
  return gap <= <i64>maxGap;
}

/**
 * Push the parts of the piece [i, j] (>= 2 adjacent roots) as candidates (key << 32 | first) at
 * `cands`, from `at`; returns the new count. The piece is cut into ceil(len / fanout) parts
 * (fanout 0: one) of near-equal sizes, the larger first; a part's last index is kept at
 * `lasts[first]`.
 */
function pushParts(i: u32, j: u32, key: u32, fanout: u32, cands: usize, at: u32, lasts: usize): u32 {
  const len = j - i + 1;
  const parts: u32 = fanout == 0 ? 1 : (len + fanout - 1) / fanout;
  let first = i;
  let n = at;
  for (let p: u32 = 0; p < parts; p++) {
    const size = len / parts + <u32>(p < len % parts);
    // Only a fan-out of 2 over an odd piece leaves a part of one root: no group, it stays.
    if (size >= 2) {
      store<u64>(cands + (<usize>n << 3), (<u64>key << 32) | <u64>first);
      store<u32>(lasts + (<usize>first << 2), first + size - 1);
      n++;
    }
    first += size;
  }
  return n;
}

/**
 * Visible roots in transcript order (start/end i32, flags u8 with MARK_PINNED, height i32 per
 * root, or 0 for all equal). When more than `after` roots are unpinned, merge them as the header
 * says: the candidates are maximal pieces of >= 2 adjacent roots (each starting at most `maxGap`
 * entries after the previous one ends; a pinned root or a wider gap ends a piece) of equal
 * height, cut into parts of at most `fanout` roots (0: no limit), taken lowest height first and
 * oldest first among equal heights, each lowering the unpinned count by its size - 1, until the
 * count is <= `after`. If that is not enough, adjacent pairs of the roots not taken are merged
 * regardless of height, the pair with the lowest higher root first. Writes the groups, in transcript order,
 * as (first, last) i32 pairs at `out` (room for count i32s) and returns how many. `work` holds
 * CONSOLIDATION_WORK_BYTES_PER_ROOT * count bytes of scratch. When every candidate is taken and
 * the count is still above `after`, consolidationMet() is false. Roots that are empty or overlap
 * return CONSOLIDATION_BAD_ROOTS (see consolidationBadRoot).
 */
export function selectConsolidation(
  start: usize, end: usize, flags: usize, count: u32, after: u32, maxGap: u32, out: usize,
  height: usize, fanout: u32, work: usize,
): u32 {
  // One pass checks the spans (the host words the error) and counts unpinned roots.
  let visible: u32 = 0;
  let prevEnd = i32.MIN_VALUE;
  badRoot = -1;
  for (let i: u32 = 0; i < count; i++) {
    const s = load<i32>(start + (<usize>i << 2));
    const e = load<i32>(end + (<usize>i << 2));
    if ((e <= s) | (s < prevEnd)) {
      badRoot = <i32>i;
      unpinnedBefore = unpinnedAfter = 0;
      consolidationAim = false;
      return CONSOLIDATION_BAD_ROOTS;
    }
    visible += <u32>!pinnedAt(flags, i);
    prevEnd = e;
  }
  unpinnedBefore = visible;
  // Scratch: candidates and the sort's spare room (u64 each), last index by first (u32), taken (u8).
  const cands = work;
  const spare = cands + (<usize>count << 3);
  const lasts = spare + (<usize>count << 3);
  const taken = lasts + (<usize>count << 2);
  memory.fill(taken, 0, count);
  let groups: u32 = 0;
  for (let round: u32 = 0; round < 2 && visible > after; round++) {
    let n: u32 = 0;
    let i: u32 = 0;
    while (i < count) {
      if (pinnedAt(flags, i) || load<u8>(taken + i) != 0) {
        i++;
        continue;
      }
      const h0 = heightAt(height, i);
      let j = i;
      while (j + 1 < count && joins(start, end, flags, j, maxGap) && load<u8>(taken + j + 1) == 0) {
        if (round == 0 && heightAt(height, j + 1) != h0) break;
        j++;
      }
      const top = h0;
      if (j > i && round == 0) n = pushParts(i, j, top, fanout, cands, n, lasts);
      else if (j > i) {
        // Mixed heights: adjacent pairs by their higher root, so a level is added where least is lost.
        for (let q = i; q < j; q++) {
          const hq = heightAt(height, q);
          const hr = heightAt(height, q + 1);
          store<u64>(cands + (<usize>n << 3), (<u64>(hq > hr ? hq : hr) << 32) | <u64>q);
          store<u32>(lasts + (<usize>q << 2), q + 1);
          n++;
        }
      }
      i = j + 1;
    }
    // Stable by key: lowest height first, transcript order among equals (pushed in that order).
    const sorted = n < 2 ? cands : radixSort(cands, spare, n);
    for (let k: u32 = 0; k < n && visible > after; k++) {
      const first = <u32>load<u64>(sorted + (<usize>k << 3));
      const last = load<u32>(lasts + (<usize>first << 2));
      if (load<u8>(taken + first) != 0 || load<u8>(taken + last) != 0) continue; // overlapping pairs
      memory.fill(taken + first, 1, last - first + 1);
      store<u32>(out + (<usize>groups << 3), first);
      store<u32>(out + (<usize>groups << 3), last, 4);
      groups++;
      visible -= last - first;
    }
  }
  inTranscriptOrder(out, groups, cands, spare);
  unpinnedAfter = visible;
  consolidationAim = visible <= after;
  return groups;
}

/** Sort the (first, last) pairs at `out` by first, through the scratch at `a` and `b`. */
function inTranscriptOrder(out: usize, groups: u32, a: usize, b: usize): void {
  if (groups < 2) return;
  for (let g: u32 = 0; g < groups; g++) {
    const first = load<u32>(out + (<usize>g << 3));
    const last = load<u32>(out + (<usize>g << 3), 4);
    store<u64>(a + (<usize>g << 3), (<u64>first << 32) | <u64>last);
  }
  const sorted = radixSort(a, b, groups);
  for (let g: u32 = 0; g < groups; g++) {
    const pair = load<u64>(sorted + (<usize>g << 3));
    store<u32>(out + (<usize>g << 3), <u32>(pair >> 32));
    store<u32>(out + (<usize>g << 3), <u32>pair, 4);
  }
}

// ---------------------------------------------------------------- self-check
// Marks: positions 9, 3, 3, 1, 7, 5 with tokens 10, 20, 30, 40, 50, 60; mark 3 pinned,
// mark 4 ineligible. Stalest first: 1 (pos 3, ties by index), 2 (pos 3), 5 (pos 5), 0 (pos 9).
const C_POS: usize = memory.data<i32>([9, 3, 3, 1, 7, 5]);
const C_TOK: usize = memory.data<u32>([10, 20, 30, 40, 50, 60]);
const C_FLAGS: usize = memory.data<u8>([1, 1, 1, 3, 0, 1]);
const C_OUT: usize = memory.data(6 * 4, 16);
const C_WORK: usize = memory.data(6 * 16, 16);
// Roots [0,2) [2,4) [5,6) [6,8) pinned [8,9) [9,12) [12,13) [13,14).
const R_START: usize = memory.data<i32>([0, 2, 5, 6, 8, 9, 12, 13]);
const R_END: usize = memory.data<i32>([2, 4, 6, 8, 9, 12, 13, 14]);
const R_FLAGS: usize = memory.data<u8>([0, 0, 0, 0, 2, 0, 0, 0]);
const B_START: usize = memory.data<i32>([0, 1]);
const B_END: usize = memory.data<i32>([2, 3]);
const R_WORK: usize = memory.data(8 * 24, 16);
// Touching roots [i, i+1) of heights 3 1 1 1 1 2 2 1, none pinned.
const H_START: usize = memory.data<i32>([0, 1, 2, 3, 4, 5, 6, 7]);
const H_END: usize = memory.data<i32>([1, 2, 3, 4, 5, 6, 7, 8]);
const H_HEIGHT: usize = memory.data<i32>([3, 1, 1, 1, 1, 2, 2, 1]);
const H_FLAGS: usize = memory.data<u8>([0, 0, 0, 0, 0, 0, 0, 0]);

export function selfCheckSelect(): bool {
  // Need 55: 20 + 30 = 50 is short, + 60 = 110 meets it after three marks.
  if (selectCommit(C_POS, C_TOK, C_FLAGS, 6, 55, C_OUT, C_WORK) != 3) return false;
  if (load<u32>(C_OUT) != 1 || load<u32>(C_OUT, 4) != 2 || load<u32>(C_OUT, 8) != 5) return false;
  if (commitFreed != 110 || !commitMet) return false;
  // More than all four eligible marks free (120): all of them, aim missed.
  if (selectCommit(C_POS, C_TOK, C_FLAGS, 6, 1000, C_OUT, C_WORK) != 4 || load<u32>(C_OUT, 12) != 0) return false;
  if (commitFreed != 120 || commitMet) return false;
  if (selectCommit(C_POS, C_TOK, C_FLAGS, 6, 0, C_OUT, C_WORK) != 0 || !commitMet) return false;
  // 7 unpinned roots, k = 4: the first run (gap 1 allowed) is roots 0-3, leaving 4 unpinned.
  if (selectConsolidation(R_START, R_END, R_FLAGS, 8, 4, 1, C_OUT, 0, 0, R_WORK) != 1) return false;
  if (load<u32>(C_OUT) != 0 || load<u32>(C_OUT, 4) != 3 || unpinnedAfter != 4 || !consolidationAim) return false;
  // Touching only (gap 0): runs 0-1 and 2-3, then 5-7 gives 7 - 1 - 1 - 2 = 3 <= 3.
  if (selectConsolidation(R_START, R_END, R_FLAGS, 8, 3, 0, C_OUT, 0, 0, R_WORK) != 3) return false;
  if (load<u32>(C_OUT, 16) != 5 || load<u32>(C_OUT, 20) != 7 || unpinnedAfter != 3 || !consolidationAim) return false;
  // k = 2 cannot be reached: the same three runs, aim missed.
  if (selectConsolidation(R_START, R_END, R_FLAGS, 8, 2, 0, C_OUT, 0, 0, R_WORK) != 3) return false;
  if (unpinnedAfter != 3 || consolidationAim) return false;
  // [0,2) [1,3): root 1 starts before root 0 ends.
  if (selectConsolidation(B_START, B_END, R_FLAGS, 2, 1, 0, C_OUT, 0, 0, R_WORK) != CONSOLIDATION_BAD_ROOTS) return false;
  if (badRoot != 1) return false;
  // Heights, fan-out 2, k = 3: the four height-1 roots in two pairs, then the two of height 2;
  // roots 0 and 7 have no equal neighbour left, nor an untaken one: 5 remain, aim missed.
  if (selectConsolidation(H_START, H_END, H_FLAGS, 8, 3, 0, C_OUT, H_HEIGHT, 2, R_WORK) != 3) return false;
  if (load<u32>(C_OUT) != 1 || load<u32>(C_OUT, 4) != 2 || load<u32>(C_OUT, 8) != 3 || load<u32>(C_OUT, 12) != 4) return false;
  if (load<u32>(C_OUT, 16) != 5 || load<u32>(C_OUT, 20) != 6 || unpinnedAfter != 5 || consolidationAim) return false;
  return true;
}
