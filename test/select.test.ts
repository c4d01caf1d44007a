// Commit and consolidation selection: the Wasm core against two plain references, plus the
// rules themselves checked directly on the results.
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { loadCoreFile, type PiFoldCore } from "../bindings/node.ts";
import { type CommitMarks, MARK_ELIGIBLE, MARK_PINNED, type VisibleRoots } from "../bindings/select.ts";
import { randomMarks, randomRoots, rng } from "../harness/reference/gen.ts";
import {
	selectCommitObjects,
	selectCommitTyped,
	selectConsolidationObjects,
	selectConsolidationTyped,
	toMarks,
	toRoots,
} from "../harness/reference/select-ref.ts";

let core: PiFoldCore;
beforeAll(() => {
	core = loadCoreFile();
});

type Marks = { position: number[]; tokensFreed: number[]; flags: number[] };
type Roots = { start: number[]; end: number[]; flags: number[] };

const candidate = (m: Marks, i: number) => (m.flags[i] & (MARK_ELIGIBLE | MARK_PINNED)) === MARK_ELIGIBLE;

/** All three implementations agree; then the result obeys the rule, checked from scratch. */
function commit(m: Marks, need: number) {
	const wasm = core.selectCommit(m, need);
	const typed = selectCommitTyped(
		Int32Array.from(m.position),
		Uint32Array.from(m.tokensFreed),
		Uint8Array.from(m.flags),
		need,
	);
	const objects = selectCommitObjects(toMarks(m.position, m.tokensFreed, m.flags), need);
	expect(typed).toEqual(wasm);
	expect(objects).toEqual(wasm);
	// The rule: candidates sorted by (position, index); the chosen list is the shortest prefix reaching need.
	const order = m.position
		.map((_, i) => i)
		.filter((i) => candidate(m, i))
		.sort((a, b) => m.position[a] - m.position[b] || a - b);
	const chosen = [...wasm.chosen];
	expect(chosen).toEqual(order.slice(0, chosen.length));
	const freed = chosen.reduce((sum, i) => sum + m.tokensFreed[i], 0);
	expect(wasm.freed).toBe(freed);
	expect(wasm.met).toBe(need <= 0 || freed >= need);
	if (need <= 0) expect(chosen).toEqual([]);
	else if (!wasm.met) expect(chosen.length).toBe(order.length);
	else expect(freed - m.tokensFreed[chosen[chosen.length - 1]]).toBeLessThan(need); // stopped as soon as met
	return wasm;
}

function consolidate(r: Roots, k: number, maxGap: number) {
	const wasm = core.selectConsolidation(r, k, maxGap);
	const typed = selectConsolidationTyped(
		Int32Array.from(r.start),
		Int32Array.from(r.end),
		Uint8Array.from(r.flags),
		k,
		maxGap,
	);
	const objects = selectConsolidationObjects(toRoots(r.start, r.end, r.flags), k, maxGap);
	const { groupCount, ...rest } = wasm;
	expect(typed).toEqual(rest);
	expect(objects).toEqual(rest);
	expect(groupCount * 2).toBe(wasm.groups.length);
	// The rule, from scratch: every group is a whole run of >= 2 adjacent unpinned roots.
	const pinned = (i: number) => (r.flags[i] & MARK_PINNED) !== 0;
	const joined = (i: number) => !pinned(i) && !pinned(i + 1) && r.start[i + 1] - r.end[i] <= maxGap;
	let previousLast = -1;
	let after = r.flags.filter((f) => (f & MARK_PINNED) === 0).length;
	expect(wasm.unpinnedBefore).toBe(after);
	for (let g = 0; g < groupCount; g++) {
		const [first, last] = [wasm.groups[2 * g], wasm.groups[2 * g + 1]];
		expect(first).toBeGreaterThan(previousLast);
		expect(last).toBeGreaterThan(first);
		for (let i = first; i < last; i++) expect(joined(i)).toBe(true);
		if (first > 0) expect(joined(first - 1)).toBe(false);
		if (last + 1 < r.start.length) expect(joined(last)).toBe(false);
		// Oldest first: no run of two or more was skipped before this group.
		for (let i = previousLast + 1; i < first; i++) expect(joined(i)).toBe(false);
		// Nothing more was taken once the aim was reached.
		expect(after).toBeGreaterThan(k);
		after -= last - first;
		previousLast = last;
	}
	expect(wasm.unpinnedAfter).toBe(after);
	expect(wasm.met).toBe(after <= k);
	// Stopped early only because the aim was met; otherwise no run is left.
	if (!wasm.met) for (let i = previousLast + 1; i + 1 < r.start.length; i++) expect(joined(i)).toBe(false);
	return wasm;
}

describe("selectCommit", () => {
	const need = fc.oneof(
		fc.integer({ min: -50, max: 0 }),
		fc.integer({ min: 1, max: 40_000 }),
		fc.double({ min: 0.5, max: 5000, noNaN: true }),
	);

	it("random marks (ties, pins, ineligible, unsorted): Wasm and both references agree and follow the rule", () => {
		const arb = fc.record({
			seed: fc.integer(),
			n: fc.integer({ min: 0, max: 80 }),
			spread: fc.constantFrom(3, 20, 1000, 2 ** 31),
		});
		fc.assert(
			fc.property(arb, need, ({ seed, n, spread }, needTokens) => {
				commit(randomMarks(rng(seed), n, spread), needTokens);
			}),
			{ numRuns: 1500 },
		);
	});

	it("large unsorted inputs exercise every radix pass (full i32 positions, 5000 marks)", () => {
		for (const seed of [1, 2, 3]) {
			const m = randomMarks(rng(seed), 5000, 2 ** 31, 2 ** 32 - 1);
			const total = m.tokensFreed.reduce((s, t, i) => (candidate(m, i) ? s + t : s), 0);
			commit(m, total / 2);
			expect(commit(m, total + 1).met).toBe(false);
		}
	});

	it("already-sorted input (fast path) gives the same choice as a shuffled copy", () => {
		fc.assert(
			fc.property(fc.integer(), fc.integer({ min: 1, max: 60 }), (seed, n) => {
				const r = rng(seed);
				const m = randomMarks(r, n, 10);
				const sorted = m.position.map((_, i) => i).sort((a, b) => m.position[a] - m.position[b] || a - b);
				const pick = (order: number[]): Marks => ({
					position: order.map((i) => m.position[i]),
					tokensFreed: order.map((i) => m.tokensFreed[i]),
					flags: order.map((i) => m.flags[i]),
				});
				const want = r.int(1, 3000);
				const a = commit(pick(sorted), want);
				const b = commit(m, want);
				// Same marks chosen, named by their index in each layout.
				expect([...a.chosen].map((i) => sorted[i])).toEqual([...b.chosen]);
				expect(a.freed).toBe(b.freed);
			}),
			{ numRuns: 300 },
		);
	});

	const marks: Marks = {
		position: [40, 10, 30, 10, 20, 5, 50],
		tokensFreed: [100, 200, 300, 400, 500, 600, 700],
		flags: [MARK_ELIGIBLE, MARK_ELIGIBLE, MARK_ELIGIBLE, MARK_ELIGIBLE, MARK_ELIGIBLE | MARK_PINNED, 0, MARK_ELIGIBLE],
	};
	// Candidates stalest first: 1 (pos 10), 3 (pos 10, tie: higher index), 2 (30), 0 (40), 6 (50).

	it("need 0 or negative chooses nothing and counts as met", () => {
		for (const n of [0, -5]) expect(commit(marks, n)).toEqual({ chosen: new Int32Array(0), freed: 0, met: true });
	});

	it("stops at the first mark that reaches the need; ties go to the lower index", () => {
		expect(commit(marks, 1)).toEqual({ chosen: Int32Array.of(1), freed: 200, met: true });
		expect(commit(marks, 201)).toEqual({ chosen: Int32Array.of(1, 3), freed: 600, met: true });
		expect(commit(marks, 600)).toEqual({ chosen: Int32Array.of(1, 3), freed: 600, met: true });
		expect(commit(marks, 601)).toEqual({ chosen: Int32Array.of(1, 3, 2), freed: 900, met: true });
	});

	it("need above everything chooses every candidate and reports the aim missed", () => {
		expect(commit(marks, 10_000)).toEqual({ chosen: Int32Array.of(1, 3, 2, 0, 6), freed: 1700, met: false });
	});

	it("all pinned or none eligible chooses nothing", () => {
		expect(commit({ ...marks, flags: marks.flags.map(() => MARK_ELIGIBLE | MARK_PINNED) }, 10)).toMatchObject({
			chosen: new Int32Array(0),
			met: false,
		});
		expect(commit({ ...marks, flags: marks.flags.map(() => 0) }, 10)).toMatchObject({
			chosen: new Int32Array(0),
			met: false,
		});
		expect(commit({ position: [], tokensFreed: [], flags: [] }, 10)).toEqual({
			chosen: new Int32Array(0),
			freed: 0,
			met: false,
		});
	});

	it("zero-token marks are taken in turn without meeting the need", () => {
		expect(commit({ position: [3, 1, 2], tokensFreed: [5, 0, 0], flags: [1, 1, 1] }, 5)).toEqual({
			chosen: Int32Array.of(1, 2, 0),
			freed: 5,
			met: true,
		});
	});

	it("accepts typed arrays as well as plain arrays, with reserved flag bits ignored", () => {
		const typed: CommitMarks = {
			position: Int32Array.from(marks.position),
			tokensFreed: Uint32Array.from(marks.tokensFreed),
			flags: Uint8Array.from(marks.flags, (f) => f | 0xf0),
		};
		expect(core.selectCommit(typed, 601)).toEqual(core.selectCommit(marks, 601));
	});

	it("the core's exported flag constants match the binding's", () => {
		const x = core.instance.exports as unknown as Record<string, WebAssembly.Global>;
		expect([x.MARK_ELIGIBLE.value, x.MARK_PINNED.value]).toEqual([MARK_ELIGIBLE, MARK_PINNED]);
		// Mirrored privately in bindings/select.ts (scratch per mark, the bad-roots answer).
		expect(x.COMMIT_WORK_BYTES_PER_MARK.value).toBe(16);
		expect(x.CONSOLIDATION_WORK_BYTES_PER_ROOT.value).toBe(24);
		expect(x.CONSOLIDATION_BAD_ROOTS.value >>> 0).toBe(0xffff_ffff);
	});
});

describe("selectConsolidation", () => {
	it("random roots: Wasm and both references agree and follow the rule", () => {
		const arb = fc.record({
			seed: fc.integer(),
			n: fc.integer({ min: 0, max: 50 }),
			gapSeen: fc.integer({ min: 0, max: 4 }),
			pin: fc.constantFrom(0, 0.1, 0.3, 0.8),
			k: fc.integer({ min: 1, max: 15 }),
			maxGap: fc.integer({ min: 0, max: 3 }),
		});
		fc.assert(
			fc.property(arb, ({ seed, n, gapSeen, pin, k, maxGap }) => {
				consolidate(randomRoots(rng(seed), n, gapSeen, pin), k, maxGap);
			}),
			{ numRuns: 1500 },
		);
	});

	// Twelve touching unpinned roots [0,1) [1,2) ... [11,12).
	const touching = (n: number): Roots => ({
		start: [...Array(n).keys()],
		end: [...Array(n).keys()].map((i) => i + 1),
		flags: Array(n).fill(0),
	});

	it("k not exceeded: nothing is merged", () => {
		const c = consolidate(touching(10), 10, 0);
		expect(c).toMatchObject({ groupCount: 0, unpinnedBefore: 10, unpinnedAfter: 10, met: true });
		expect(consolidate(touching(0), 1, 0)).toMatchObject({ groupCount: 0, met: true });
	});

	it("one root over k: the whole oldest run becomes one group", () => {
		const c = consolidate(touching(11), 10, 0);
		expect([...c.groups]).toEqual([0, 10]);
		expect(c).toMatchObject({ unpinnedAfter: 1, met: true });
	});

	it("pinned roots break runs and are never merged", () => {
		const r = touching(12);
		r.flags[2] = MARK_PINNED;
		r.flags[7] = MARK_PINNED;
		// 10 unpinned; runs 0-1, 3-6, 8-11. k = 9: the first run (saves 1) is enough.
		expect([...consolidate(r, 9, 0).groups]).toEqual([0, 1]);
		// k = 8: 10 - 1 = 9 is not, so the second run too (taken whole: 6 left, below k).
		expect(consolidate(r, 8, 0)).toMatchObject({ groups: Int32Array.of(0, 1, 3, 6), unpinnedAfter: 6, met: true });
		// k = 5: 10 - 1 - 3 = 6 > 5, so the third run too.
		const c = consolidate(r, 5, 0);
		expect([...c.groups]).toEqual([0, 1, 3, 6, 8, 11]);
		expect(c).toMatchObject({ unpinnedAfter: 3, met: true });
		// k = 2 cannot be reached: three runs leave three roots.
		expect(consolidate(r, 2, 0)).toMatchObject({ groupCount: 3, unpinnedAfter: 3, met: false });
	});

	it("gaps: maxGap decides which roots count as adjacent", () => {
		// [0,2) [3,5) [5,6) [9,10): gaps 1, 0, 3.
		const r: Roots = { start: [0, 3, 5, 9], end: [2, 5, 6, 10], flags: [0, 0, 0, 0] };
		expect(consolidate(r, 1, 0)).toMatchObject({ groups: Int32Array.of(1, 2), unpinnedAfter: 3, met: false });
		expect(consolidate(r, 1, 1)).toMatchObject({ groups: Int32Array.of(0, 2), unpinnedAfter: 2, met: false });
		expect(consolidate(r, 1, 3)).toMatchObject({ groups: Int32Array.of(0, 3), unpinnedAfter: 1, met: true });
	});

	it("pinned roots do not count toward consolidateAfter", () => {
		const r = touching(12);
		for (const i of [0, 1, 2]) r.flags[i] = MARK_PINNED;
		expect(consolidate(r, 9, 0)).toMatchObject({ groupCount: 0, unpinnedBefore: 9, met: true });
	});

	it("accepts typed arrays", () => {
		const r = touching(12);
		const typed: VisibleRoots = {
			start: Int32Array.from(r.start),
			end: Int32Array.from(r.end),
			flags: Uint8Array.from(r.flags),
		};
		expect(core.selectConsolidation(typed, 3)).toEqual(core.selectConsolidation(r, 3));
	});

	it("large input: 20k roots agree", () => {
		consolidate(randomRoots(rng(99), 20_000, 2, 0.05), 10, 1);
		// No pins and every gap within maxGap: one run, merged whole.
		const c = consolidate(randomRoots(rng(98), 20_000, 2, 0), 10, 2);
		expect([...c.groups]).toEqual([0, 19_999]);
		expect(c).toMatchObject({ unpinnedAfter: 1, met: true });
	});
});

describe("bad input is refused with a specific error", () => {
	const marks = (): Marks => ({ position: [1, 2], tokensFreed: [3, 4], flags: [1, 1] });
	const roots = (): Roots => ({ start: [0, 2], end: [2, 4], flags: [0, 0] });
	const cases: [string, () => unknown, ErrorConstructor, RegExp][] = [
		[
			"marks not an object",
			() => core.selectCommit(undefined as never, 1),
			TypeError,
			/selectCommit needs \{ position, tokensFreed, flags \}/,
		],
		[
			"a column of the wrong type",
			() => core.selectCommit({ ...marks(), tokensFreed: new Int32Array(2) as never }, 1),
			TypeError,
			/marks\.tokensFreed must be a Uint32Array or an array of integers/,
		],
		[
			"unequal lengths",
			() => core.selectCommit({ ...marks(), flags: [1] }, 1),
			RangeError,
			/position 2, tokensFreed 2, flags 1/,
		],
		[
			"negative tokens",
			() => core.selectCommit({ ...marks(), tokensFreed: [3, -4] }, 1),
			RangeError,
			/marks\.tokensFreed\[1\] = -4 is outside \[0, 4294967295\]/,
		],
		[
			"fractional position",
			() => core.selectCommit({ ...marks(), position: [1.25, 2] }, 1),
			TypeError,
			/marks\.position\[0\] must be an integer, got 1\.25/,
		],
		[
			"flags beyond a byte",
			() => core.selectCommit({ ...marks(), flags: [1, 256] }, 1),
			RangeError,
			/marks\.flags\[1\] = 256 is outside \[0, 255\]/,
		],
		[
			"need not a number",
			() => core.selectCommit(marks(), "5" as never),
			TypeError,
			/needTokens must be a number, got "5"/,
		],
		["need NaN", () => core.selectCommit(marks(), Number.NaN), RangeError, /needTokens must be finite, got NaN/],
		[
			"need infinite",
			() => core.selectCommit(marks(), Number.POSITIVE_INFINITY),
			RangeError,
			/needTokens must be finite/,
		],
		[
			"roots not an object",
			() => core.selectConsolidation(null as never, 1),
			TypeError,
			/selectConsolidation needs \{ start, end, flags \}/,
		],
		[
			"roots of unequal length",
			() => core.selectConsolidation({ ...roots(), end: [2] }, 1),
			RangeError,
			/start 2, end 1, flags 2/,
		],
		[
			"an empty root",
			() => core.selectConsolidation({ ...roots(), end: [2, 2] }, 1),
			RangeError,
			/root 1 is empty: roots\.end\[1\] = 2 is not after roots\.start\[1\] = 2/,
		],
		[
			"overlapping roots",
			() => core.selectConsolidation({ ...roots(), start: [0, 1] }, 1),
			RangeError,
			/root 1 \[1, 4\) starts before root 0 ends \(2\)/,
		],
		[
			"consolidateAfter 0",
			() => core.selectConsolidation(roots(), 0),
			RangeError,
			/consolidateAfter must be an integer in \[1, 2\^32\), got 0/,
		],
		[
			"consolidateAfter fractional",
			() => core.selectConsolidation(roots(), 2.5),
			RangeError,
			/consolidateAfter must be an integer .*got 2\.5/,
		],
		[
			"consolidateAfter missing",
			() => core.selectConsolidation(roots(), undefined as never),
			TypeError,
			/consolidateAfter must be a number, got undefined/,
		],
		[
			"negative maxGap",
			() => core.selectConsolidation(roots(), 1, -1),
			RangeError,
			/maxGap must be an integer in \[0, 2\^32\), got -1/,
		],
	];
	for (const [what, call, type, message] of cases) {
		it(what, () => {
			expect(call).toThrow(type);
			expect(call).toThrow(message);
			expect(core.selectCommit(marks(), 4)).toEqual({ chosen: Int32Array.of(0, 1), freed: 7, met: true });
		});
	}
});
