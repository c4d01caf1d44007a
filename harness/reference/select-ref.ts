// Plain TypeScript references for commit and consolidation selection (assembly/select.ts),
// same contract as the core. Two versions of each: typed arrays written for speed (the
// core's algorithm: gather, sorted fast path, LSD radix sort), and objects with
// Array.prototype.sort, written for clarity.
import { MARK_ELIGIBLE, MARK_PINNED } from "../../bindings/select.ts";

interface CommitRefResult {
	chosen: Int32Array;
	freed: number;
	met: boolean;
}

interface ConsolidationRefResult {
	/** Flat (first, last) pairs. */
	groups: Int32Array;
	unpinnedBefore: number;
	unpinnedAfter: number;
	met: boolean;
}

// ---------------------------------------------------------------- (a) typed arrays, for speed

// Reused scratch: keys (position with the sign bit flipped) and mark indices, twice for ping-pong.
let keysA = new Uint32Array(0);
let keysB = new Uint32Array(0);
let idxA = new Uint32Array(0);
let idxB = new Uint32Array(0);
const hist = new Uint32Array(4 * 256);

function ensure(n: number): void {
	if (keysA.length >= n) return;
	keysA = new Uint32Array(n);
	keysB = new Uint32Array(n);
	idxA = new Uint32Array(n);
	idxB = new Uint32Array(n);
}

export function selectCommitTyped(
	position: Int32Array,
	tokens: Uint32Array,
	flags: Uint8Array,
	need: number,
): CommitRefResult {
	if (need <= 0) return { chosen: new Int32Array(0), freed: 0, met: true };
	const n = position.length;
	ensure(n);
	let m = 0;
	let prev = 0;
	let sorted = true;
	for (let i = 0; i < n; i++) {
		if ((flags[i] & (MARK_ELIGIBLE | MARK_PINNED)) !== MARK_ELIGIBLE) continue;
		const key = (position[i] ^ 0x8000_0000) >>> 0;
		if (key < prev) sorted = false;
		prev = key;
		keysA[m] = key;
		idxA[m] = i;
		m++;
	}
	let keys = keysA;
	let idx = idxA;
	if (!sorted) {
		hist.fill(0);
		for (let j = 0; j < m; j++) {
			const k = keys[j];
			hist[k & 0xff]++;
			hist[256 + ((k >>> 8) & 0xff)]++;
			hist[512 + ((k >>> 16) & 0xff)]++;
			hist[768 + (k >>> 24)]++;
		}
		let dk = keysB;
		let di = idxB;
		for (let b = 0; b < 4; b++) {
			const h = b << 8;
			let sum = 0;
			let trivial = false;
			for (let v = 0; v < 256; v++) {
				const c = hist[h + v];
				if (c === m) {
					trivial = true;
					break;
				}
				hist[h + v] = sum;
				sum += c;
			}
			if (trivial) continue;
			const shift = b << 3;
			for (let j = 0; j < m; j++) {
				const k = keys[j];
				const to = hist[h + ((k >>> shift) & 0xff)]++;
				dk[to] = k;
				di[to] = idx[j];
			}
			[keys, dk] = [dk, keys];
			[idx, di] = [di, idx];
		}
	}
	let freed = 0;
	let k = 0;
	while (k < m) {
		freed += tokens[idx[k]];
		k++;
		if (freed >= need) break;
	}
	return { chosen: Int32Array.from(idx.subarray(0, k)), freed, met: freed >= need };
}

/**
 * The core's consolidation: pieces of adjacent equal-height roots cut into parts of at most
 * `fanout` (0: one part), a stable sort by height, parts taken until few enough roots are left;
 * then, if needed, adjacent pairs of the roots left, by their higher root; groups in transcript order.
 */
export function selectConsolidationTyped(
	start: Int32Array,
	end: Int32Array,
	flags: Uint8Array,
	after: number,
	maxGap: number,
	height?: Int32Array,
	fanout = 0,
): ConsolidationRefResult {
	const n = start.length;
	let visible = 0;
	for (let i = 0; i < n; i++) if ((flags[i] & MARK_PINNED) === 0) visible++;
	const before = visible;
	const h = (i: number) => (height ? height[i] : 1);
	const pinned = (i: number) => (flags[i] & MARK_PINNED) !== 0;
	const joins = (i: number) => !pinned(i) && !pinned(i + 1) && start[i + 1] - end[i] <= maxGap;
	const taken = new Uint8Array(n);
	const last = new Int32Array(n);
	const out: number[] = [];
	for (let round = 0; round < 2 && visible > after; round++) {
		const keys: number[] = [];
		const firsts: number[] = [];
		let i = 0;
		while (i < n) {
			if (pinned(i) || taken[i]) {
				i++;
				continue;
			}
			let j = i;
			while (j + 1 < n && joins(j) && !taken[j + 1] && (round === 1 || h(j + 1) === h(i))) j++;
			if (j > i && round === 1) {
				for (let q = i; q < j; q++) {
					keys.push(Math.max(h(q), h(q + 1)));
					firsts.push(q);
					last[q] = q + 1;
				}
			} else if (j > i) {
				const top = h(i);
				const len = j - i + 1;
				const parts = fanout === 0 ? 1 : Math.ceil(len / fanout);
				for (let p = 0, first = i; p < parts; p++) {
					const size = Math.floor(len / parts) + (p < len % parts ? 1 : 0);
					if (size >= 2) {
						keys.push(top);
						firsts.push(first);
						last[first] = first + size - 1;
					}
					first += size;
				}
			}
			i = j + 1;
		}
		// A stable sort by key (the order they were found in is transcript order).
		const order = keys.map((_, k) => k).sort((a, b) => keys[a] - keys[b] || a - b);
		for (const k of order) {
			if (visible <= after) break;
			const first = firsts[k];
			if (taken[first] || taken[last[first]]) continue;
			taken.fill(1, first, last[first] + 1);
			out.push(first, last[first]);
			visible -= last[first] - first;
		}
	}
	const pairs = Array.from({ length: out.length / 2 }, (_, g) => [out[2 * g], out[2 * g + 1]]);
	pairs.sort((a, b) => a[0] - b[0]);
	return {
		groups: Int32Array.from(pairs.flat()),
		unpinnedBefore: before,
		unpinnedAfter: visible,
		met: visible <= after,
	};
}

// ---------------------------------------------------------------- (b) objects, for clarity

export interface Mark {
	position: number;
	tokensFreed: number;
	eligible: boolean;
	pinned: boolean;
}

export interface Root {
	start: number;
	end: number;
	pinned: boolean;
	/** Levels of folds in it (1 when not given). */
	height?: number;
}

/** Sort the candidates stalest first and take them until enough is freed. */
export function selectCommitObjects(marks: readonly Mark[], need: number): CommitRefResult {
	const chosen: number[] = [];
	let freed = 0;
	if (need > 0) {
		const candidates = marks
			.map((mark, index) => ({ ...mark, index }))
			.filter((mark) => mark.eligible && !mark.pinned)
			.sort((a, b) => a.position - b.position || a.index - b.index);
		for (const mark of candidates) {
			if (freed >= need) break;
			chosen.push(mark.index);
			freed += mark.tokensFreed;
		}
	}
	return { chosen: Int32Array.from(chosen), freed, met: need <= 0 || freed >= need };
}

/** Cut a piece of adjacent roots into `parts` near-equal parts, the larger first. */
function cut<T>(piece: readonly T[], fanout: number): T[][] {
	const parts = fanout === 0 ? 1 : Math.ceil(piece.length / fanout);
	const out: T[][] = [];
	let at = 0;
	for (let p = 0; p < parts; p++) {
		const size = Math.floor(piece.length / parts) + (p < piece.length % parts ? 1 : 0);
		out.push(piece.slice(at, at + size));
		at += size;
	}
	return out;
}

/**
 * Split the roots into pieces of adjacent unpinned roots of equal height, cut each into parts of
 * at most `fanout`, and merge parts lowest height first, oldest first, until few enough roots are
 * left; if that is not enough, merge adjacent pairs of the roots left, lowest higher root first.
 */
export function selectConsolidationObjects(
	roots: readonly Root[],
	after: number,
	maxGap: number,
	fanout = 0,
): ConsolidationRefResult {
	const before = roots.filter((root) => !root.pinned).length;
	let visible = before;
	const taken = new Set<number>();
	const groups: [number, number][] = [];
	const heightOf = (i: number) => roots[i].height ?? 1;
	for (const equalHeights of [true, false]) {
		if (visible <= after) break;
		const pieces: number[][] = [];
		let piece: number[] = [];
		roots.forEach((root, i) => {
			const prev = piece[piece.length - 1];
			const continues =
				prev !== undefined &&
				prev === i - 1 &&
				!root.pinned &&
				!taken.has(i) &&
				root.start - roots[prev].end <= maxGap &&
				(!equalHeights || heightOf(i) === heightOf(piece[0]));
			if (continues) piece.push(i);
			else {
				if (piece.length > 1) pieces.push(piece);
				piece = root.pinned || taken.has(i) ? [] : [i];
			}
		});
		if (piece.length > 1) pieces.push(piece);
		// Equal heights: each piece cut into parts of at most `fanout`. Mixed: every adjacent pair.
		const split = (p: number[]) =>
			equalHeights ? cut(p, fanout).filter((part) => part.length > 1) : p.slice(1).map((i) => [i - 1, i]);
		const parts = pieces
			.flatMap(split)
			.map((part) => ({ part, top: Math.max(...part.map(heightOf)) }))
			.sort((a, b) => a.top - b.top || a.part[0] - b.part[0]);
		for (const { part } of parts) {
			if (visible <= after) break;
			if (part.some((i) => taken.has(i))) continue;
			groups.push([part[0], part[part.length - 1]]);
			for (const i of part) taken.add(i);
			visible -= part.length - 1;
		}
	}
	groups.sort((a, b) => a[0] - b[0]);
	return {
		groups: Int32Array.from(groups.flat()),
		unpinnedBefore: before,
		unpinnedAfter: visible,
		met: visible <= after,
	};
}

/** Flag columns to objects, for the object references. */
export function toMarks(position: ArrayLike<number>, tokens: ArrayLike<number>, flags: ArrayLike<number>): Mark[] {
	return Array.from({ length: position.length }, (_, i) => ({
		position: position[i],
		tokensFreed: tokens[i],
		eligible: (flags[i] & MARK_ELIGIBLE) !== 0,
		pinned: (flags[i] & MARK_PINNED) !== 0,
	}));
}

export function toRoots(
	start: ArrayLike<number>,
	end: ArrayLike<number>,
	flags: ArrayLike<number>,
	height?: ArrayLike<number>,
): Root[] {
	return Array.from({ length: start.length }, (_, i) => ({
		start: start[i],
		end: end[i],
		pinned: (flags[i] & MARK_PINNED) !== 0,
		...(height ? { height: height[i] } : {}),
	}));
}
