// Seeded generators for the lattice and selection tests and the quick benchmark.
// A seed (from fast-check) drives a small PRNG, so a failing case is reproducible from it.

interface Rng {
	/** Uniform float in [0, 1). */
	next(): number;
	/** Uniform integer in [lo, hi]. */
	int(lo: number, hi: number): number;
}

/** mulberry32: tiny, fast, good enough for test data. */
export function rng(seed: number): Rng {
	let a = seed >>> 0;
	const next = () => {
		a = (a + 0x6d2b79f5) >>> 0;
		let t = a;
		t = Math.imul(t ^ (t >>> 15), t | 1);
		t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
		return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
	};
	return { next, int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)) };
}

/** A lattice as plain number columns (easy to mutate; the API takes them as they are). */
export interface LatticeColumns {
	start: number[];
	end: number[];
	parent: number[];
	depth: number[];
	leafCount: number;
}

/**
 * A random valid lattice: folds laid out left to right with random gaps, each nested
 * randomly into children, emitted in pre-order (which is the canonical order). A child
 * never equals its parent. Stops at `maxFolds`; `maxLength` caps every fold's length.
 */
export function randomLattice(
	r: Rng,
	leafCount: number,
	maxFolds: number,
	{ nestChance = 0.6, maxLength = Number.POSITIVE_INFINITY } = {},
): LatticeColumns {
	const out: LatticeColumns = { start: [], end: [], parent: [], depth: [], leafCount };
	const fill = (lo: number, hi: number, parent: number, depth: number): void => {
		let pos = lo;
		while (pos < hi && out.start.length < maxFolds) {
			pos += r.next() < 0.5 ? 0 : r.int(1, 2);
			if (pos >= hi) break;
			const room = Math.min(hi - pos, maxLength);
			// Mostly short folds, sometimes long ones, so both wide and deep lattices appear.
			let end = pos + 1 + Math.floor(r.next() ** 2 * room);
			if (parent !== -1 && pos === lo && end === hi) {
				if (end - pos === 1) break;
				end -= 1;
			}
			const index = out.start.length;
			out.start.push(pos);
			out.end.push(end);
			out.parent.push(parent);
			out.depth.push(depth);
			if (end - pos > 1 && r.next() < nestChance) fill(pos, end, index, depth + 1);
			pos = end;
		}
	};
	fill(0, leafCount, -1, 0);
	return out;
}

export function cloneLattice(l: LatticeColumns): LatticeColumns {
	return {
		start: [...l.start],
		end: [...l.end],
		parent: [...l.parent],
		depth: [...l.depth],
		leafCount: l.leafCount,
	};
}

/** Insert a fold at `at`, renumbering parent links that point at or after it. */
function insertFold(l: LatticeColumns, at: number, fold: [number, number, number, number]): void {
	for (let i = 0; i < l.parent.length; i++) if (l.parent[i] >= at) l.parent[i]++;
	l.start.splice(at, 0, fold[0]);
	l.end.splice(at, 0, fold[1]);
	l.parent.splice(at, 0, fold[2]);
	l.depth.splice(at, 0, fold[3]);
}

export const MUTATIONS = [
	"shiftEnd",
	"shiftStart",
	"swap",
	"depth",
	"duplicate",
	"childEqualsParent",
	"outOfRange",
	"shrinkLeaves",
	"parentIndex",
	"empty",
	"toGrandparent",
	"toEarlierFold",
] as const;
type Mutation = (typeof MUTATIONS)[number];

/** Apply one mutation to a copy of a non-empty lattice. The result is usually, not always, invalid. */
export function mutate(valid: LatticeColumns, r: Rng, kind: Mutation): LatticeColumns {
	const l = cloneLattice(valid);
	const n = l.start.length;
	const i = r.int(0, n - 1);
	const delta = r.next() < 0.5 ? -r.int(1, 2) : r.int(1, 2);
	switch (kind) {
		case "shiftEnd":
			l.end[i] += delta;
			break;
		case "shiftStart":
			l.start[i] += delta;
			break;
		case "swap": {
			const j = r.int(0, n - 1);
			for (const col of [l.start, l.end, l.parent, l.depth]) [col[i], col[j]] = [col[j], col[i]];
			break;
		}
		case "depth":
			l.depth[i] += delta;
			break;
		case "duplicate":
			insertFold(l, i + 1, [l.start[i], l.end[i], l.parent[i] >= i + 1 ? l.parent[i] + 1 : l.parent[i], l.depth[i]]);
			break;
		case "childEqualsParent":
			insertFold(l, i + 1, [l.start[i], l.end[i], i, l.depth[i] + 1]);
			break;
		case "outOfRange":
			if (r.next() < 0.5) l.start[i] = -r.int(1, 3);
			else l.end[i] = l.leafCount + r.int(1, 3);
			break;
		case "shrinkLeaves":
			l.leafCount = Math.max(0, Math.max(...l.end) - r.int(1, 2));
			break;
		case "parentIndex":
			l.parent[i] = r.int(-3, n + 2);
			break;
		case "empty":
			l.end[i] = l.start[i] - r.int(0, 1);
			break;
		case "toGrandparent": {
			// Claim an ancestor further up (or root): the real parent becomes an overlapping sibling.
			const p = l.parent[i];
			l.parent[i] = p === -1 ? -1 : l.parent[p];
			l.depth[i] = l.parent[i] === -1 ? 0 : l.depth[l.parent[i]] + 1;
			break;
		}
		case "toEarlierFold": {
			const j = r.int(0, Math.max(0, i - 1));
			if (j < i) {
				l.parent[i] = j;
				l.depth[i] = l.depth[j] + 1;
			}
			break;
		}
	}
	return l;
}

/** Random marks for the commit selection. `spread` bounds positions (small = many ties). */
export function randomMarks(
	r: Rng,
	n: number,
	spread: number,
	maxTokens = 1000,
): { position: number[]; tokensFreed: number[]; flags: number[] } {
	const position: number[] = [];
	const tokensFreed: number[] = [];
	const flags: number[] = [];
	for (let i = 0; i < n; i++) {
		position.push(spread >= 0x8000_0000 ? r.int(-0x8000_0000, 0x7fff_ffff) : r.int(0, spread));
		tokensFreed.push(r.int(0, maxTokens));
		const roll = r.next();
		flags.push(roll < 0.7 ? 1 : roll < 0.8 ? 3 : roll < 0.9 ? 0 : 2);
	}
	return { position, tokensFreed, flags };
}

/** Random visible roots in transcript order: gaps up to `maxGapSeen`, pinned with `pinChance`. */
export function randomRoots(
	r: Rng,
	n: number,
	maxGapSeen: number,
	pinChance: number,
): { start: number[]; end: number[]; flags: number[] } {
	const start: number[] = [];
	const end: number[] = [];
	const flags: number[] = [];
	let pos = r.int(0, 3);
	for (let i = 0; i < n; i++) {
		start.push(pos);
		pos += r.int(1, 4);
		end.push(pos);
		pos += r.next() < 0.5 ? 0 : r.int(0, maxGapSeen);
		flags.push(r.next() < pinChance ? 2 : r.next() < 0.3 ? 1 : 0);
	}
	return { start, end, flags };
}
