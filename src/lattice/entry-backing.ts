// The storage a context index shares with the indexes appended to it (entries.ts).
import type { LatticeEntry } from "./entries.ts";

/**
 * What an index and the indexes appended to it share: entries, digests and the tool spans by
 * position, filled up to `entries.length` (typed arrays have spare capacity). An index reads only
 * its own first `size` positions, so an append by the newest index writes past every older one's
 * end and the older ones see nothing change; an append from an older index (or one that changes an
 * earlier position's tool span) copies what it needs instead.
 */
export interface Backing {
	entries: LatticeEntry[];
	digests: Uint8Array[];
	toolLo: Int32Array;
	toolHi: Int32Array;
	toolOpen: Uint8Array;
	/** Positions of the system entries, ascending. */
	systems: number[];
}

export function emptyBacking(capacity: number): Backing {
	return {
		entries: [],
		digests: [],
		toolLo: new Int32Array(capacity),
		toolHi: new Int32Array(capacity),
		toolOpen: new Uint8Array(capacity),
		systems: [],
	};
}

/** A backing of its own holding the first `n` positions of `b` (room for `need` in all). */
export function copyBacking(b: Backing, n: number, systems: number, need: number): Backing {
	const out = emptyBacking(Math.max(need, 16));
	out.entries = b.entries.slice(0, n);
	out.digests = b.digests.slice(0, n);
	out.toolLo.set(b.toolLo.subarray(0, n));
	out.toolHi.set(b.toolHi.subarray(0, n));
	out.toolOpen.set(b.toolOpen.subarray(0, n));
	out.systems = b.systems.slice(0, systems);
	return out;
}

/** Make the typed arrays hold at least `need` positions (doubling, so appends cost O(new) on average). */
export function reserve(b: Backing, need: number): void {
	if (b.toolLo.length >= need) return;
	const capacity = Math.max(need, 2 * b.toolLo.length, 16);
	const grow = <T extends Int32Array | Uint8Array>(a: T, make: (n: number) => T): T => {
		const out = make(capacity);
		out.set(a);
		return out;
	};
	b.toolLo = grow(b.toolLo, (n) => new Int32Array(n));
	b.toolHi = grow(b.toolHi, (n) => new Int32Array(n));
	b.toolOpen = grow(b.toolOpen, (n) => new Uint8Array(n));
}
