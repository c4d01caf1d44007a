// Plain TypeScript references for commit and consolidation selection (assembly/select.ts),
// same contract as the core. Two versions of each: typed arrays written for speed (the
// core's algorithm: gather, sorted fast path, LSD radix sort), and objects with
// Array.prototype.sort, written for clarity.
import { MARK_ELIGIBLE, MARK_PINNED } from "../../bindings/select.ts";

export interface CommitRefResult {
	chosen: Int32Array;
	freed: number;
	met: boolean;
}

export interface ConsolidationRefResult {
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

export function selectConsolidationTyped(
	start: Int32Array,
	end: Int32Array,
	flags: Uint8Array,
	after: number,
	maxGap: number,
): ConsolidationRefResult {
	const n = start.length;
	let visible = 0;
	for (let i = 0; i < n; i++) if ((flags[i] & MARK_PINNED) === 0) visible++;
	const before = visible;
	const out = new Int32Array(n);
	let g = 0;
	let i = 0;
	while (visible > after && i < n) {
		if (flags[i] & MARK_PINNED) {
			i++;
			continue;
		}
		let j = i;
		while (j + 1 < n && (flags[j + 1] & MARK_PINNED) === 0 && start[j + 1] - end[j] <= maxGap) j++;
		if (j > i) {
			out[g++] = i;
			out[g++] = j;
			visible -= j - i;
		}
		i = j + 1;
	}
	return { groups: out.slice(0, g), unpinnedBefore: before, unpinnedAfter: visible, met: visible <= after };
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

/** Split the roots into runs of adjacent unpinned roots, then merge runs oldest first. */
export function selectConsolidationObjects(
	roots: readonly Root[],
	after: number,
	maxGap: number,
): ConsolidationRefResult {
	const runs: number[][] = [];
	let run: number[] = [];
	roots.forEach((root, i) => {
		const previous = roots[i - 1];
		const continues = run.length > 0 && !root.pinned && root.start - previous.end <= maxGap;
		if (!continues) {
			if (run.length > 0) runs.push(run);
			run = root.pinned ? [] : [i];
		} else {
			run.push(i);
		}
	});
	if (run.length > 0) runs.push(run);
	const before = roots.filter((root) => !root.pinned).length;
	let visible = before;
	const groups: [number, number][] = [];
	for (const r of runs) {
		if (visible <= after) break;
		if (r.length < 2) continue;
		groups.push([r[0], r[r.length - 1]]);
		visible -= r.length - 1;
	}
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

export function toRoots(start: ArrayLike<number>, end: ArrayLike<number>, flags: ArrayLike<number>): Root[] {
	return Array.from({ length: start.length }, (_, i) => ({
		start: start[i],
		end: end[i],
		pinned: (flags[i] & MARK_PINNED) !== 0,
	}));
}
