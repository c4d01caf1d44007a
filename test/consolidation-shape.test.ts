// Consolidation by height (assembly/select.ts): roots merge only with adjacent roots of their own
// height, lowest first, at most `fanout` children per parent. The Wasm core against both
// references on random roots, the rule checked on every answer, and the shape it gives a long
// session: commits of new marks, consolidated each time, keep the fold tree's depth logarithmic
// in the number of marks (at most 1 + log2 of them), where merging whole runs made a chain one
// level deeper per commit.
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { loadCoreFile, type PiFoldCore } from "../bindings/node.ts";
import { MARK_PINNED } from "../bindings/select.ts";
import { randomRoots, rng } from "../harness/reference/gen.ts";
import { selectConsolidationObjects, selectConsolidationTyped, toRoots } from "../harness/reference/select-ref.ts";

let core: PiFoldCore;
beforeAll(() => {
	core = loadCoreFile();
});

type Roots = { start: number[]; end: number[]; flags: number[]; height: number[] };

/** All three implementations agree, and the answer obeys the rule; returns the core's. */
function consolidate(r: Roots, k: number, maxGap: number, fanout: number) {
	const wasm = core.selectConsolidation(r, k, maxGap, fanout);
	const { groupCount, ...rest } = wasm;
	const typed = selectConsolidationTyped(
		Int32Array.from(r.start),
		Int32Array.from(r.end),
		Uint8Array.from(r.flags),
		k,
		maxGap,
		Int32Array.from(r.height),
		fanout,
	);
	const objects = selectConsolidationObjects(toRoots(r.start, r.end, r.flags, r.height), k, maxGap, fanout);
	expect(typed).toEqual(rest);
	expect(objects).toEqual(rest);
	// The rule, from scratch: disjoint groups in transcript order, each >= 2 adjacent unpinned roots
	// within maxGap of each other, at most fanout of them; each lowers the count by its size - 1.
	const pinned = (i: number) => (r.flags[i] & MARK_PINNED) !== 0;
	let visible = r.flags.filter((_, i) => !pinned(i)).length;
	expect(wasm.unpinnedBefore).toBe(visible);
	let previousLast = -1;
	for (let g = 0; g < groupCount; g++) {
		const [a, b] = [wasm.groups[2 * g], wasm.groups[2 * g + 1]];
		expect(a).toBeGreaterThan(previousLast);
		expect(b).toBeGreaterThan(a);
		if (fanout > 0) expect(b - a + 1).toBeLessThanOrEqual(fanout);
		for (let i = a; i <= b; i++) expect(pinned(i)).toBe(false);
		for (let i = a; i < b; i++) expect(r.start[i + 1] - r.end[i]).toBeLessThanOrEqual(maxGap);
		visible -= b - a;
		previousLast = b;
	}
	expect(wasm.unpinnedAfter).toBe(visible);
	expect(wasm.met).toBe(visible <= k);
	// Nothing is merged once few enough roots are left.
	if (wasm.unpinnedBefore <= k) expect(groupCount).toBe(0);
	return wasm;
}

describe("selectConsolidation by height", () => {
	it("random roots and heights: Wasm and both references agree and follow the rule", () => {
		const arb = fc.record({
			seed: fc.integer(),
			n: fc.integer({ min: 0, max: 60 }),
			gapSeen: fc.integer({ min: 0, max: 3 }),
			pin: fc.constantFrom(0, 0.1, 0.3),
			heights: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 8 }),
			runs: fc.integer({ min: 1, max: 6 }),
			k: fc.integer({ min: 1, max: 12 }),
			maxGap: fc.integer({ min: 0, max: 2 }),
			fanout: fc.constantFrom(0, 2, 3, 5, 10),
		});
		fc.assert(
			fc.property(arb, ({ seed, n, gapSeen, pin, heights, runs, k, maxGap, fanout }) => {
				const base = randomRoots(rng(seed), n, gapSeen, pin);
				// Heights in runs, as a session makes them (equal neighbours are the common case).
				const height = base.start.map((_, i) => heights[Math.floor(i / runs) % heights.length]);
				consolidate({ ...base, height }, k, maxGap, fanout);
			}),
			{ numRuns: 1500 },
		);
	});

	it("merges equal heights only, lowest first, in parts of near-equal size", () => {
		// Touching roots of heights 3 3 1 1 1 1 1 2 2, k = 4, fan-out 3: the five 1s make parts of 3 and 2.
		const height = [3, 3, 1, 1, 1, 1, 1, 2, 2];
		const r: Roots = {
			start: height.map((_, i) => i),
			end: height.map((_, i) => i + 1),
			flags: height.map(() => 0),
			height,
		};
		expect(consolidate(r, 6, 0, 3)).toMatchObject({ groups: Int32Array.of(2, 4, 5, 6), unpinnedAfter: 6, met: true });
		// k = 5 takes the 2s next (the lowest height left); k = 4 the 3s too; k = 3 cannot be met.
		expect(consolidate(r, 5, 0, 3)).toMatchObject({ groups: Int32Array.of(2, 4, 5, 6, 7, 8), unpinnedAfter: 5 });
		const all = Int32Array.of(0, 1, 2, 4, 5, 6, 7, 8);
		expect(consolidate(r, 4, 0, 3)).toMatchObject({ groups: all, unpinnedAfter: 4, met: true });
		expect(consolidate(r, 3, 0, 3)).toMatchObject({ groups: all, unpinnedAfter: 4, met: false });
		// When equal heights are not enough, neighbours of different heights merge, lowest first.
		const mixed: Roots = { start: [0, 1, 2, 3], end: [1, 2, 3, 4], flags: [0, 0, 0, 0], height: [4, 3, 2, 1] };
		expect(consolidate(mixed, 2, 0, 3)).toMatchObject({ groups: Int32Array.of(0, 1, 2, 3), met: true });
	});

	it("without heights or fan-out it is the whole-run rule: the binding's default fan-out comes with heights", () => {
		const r = { start: [0, 1, 2, 3, 4], end: [1, 2, 3, 4, 5], flags: [0, 0, 0, 0, 0] };
		expect([...core.selectConsolidation(r, 2).groups]).toEqual([0, 4]);
		// With heights, the fan-out defaults to consolidateAfter: at most 2 per parent here (the odd root stays).
		expect([...core.selectConsolidation({ ...r, height: [1, 1, 1, 1, 1] }, 2).groups]).toEqual([0, 1, 2, 3]);
		expect(() => core.selectConsolidation({ ...r, height: [1, 1, 0, 1, 1] }, 2)).toThrow(/height\[2\] must be >= 1/);
		expect(() => core.selectConsolidation({ ...r, height: [1, 1] }, 2)).toThrow(/columns differ in length/);
		expect(() => core.selectConsolidation(r, 2, 0, 1)).toThrow(/fanout must be an integer in \[2/);
	});
});

/** A session's roots as commits add marks: each root with its height, span and children count. */
interface SimRoot {
	start: number;
	end: number;
	height: number;
}

/**
 * Commit `commits` times, each adding `marks(c)` new roots of height 1 after the last root, then
 * consolidating with the core (heights given or not). Returns the deepest height reached, the most
 * children any parent got, and how many commits ended with more than k roots.
 */
function simulate(commits: number, marks: (c: number) => number, k: number, withHeights: boolean) {
	let roots: SimRoot[] = [];
	let at = 0;
	let total = 0;
	let deepest = 1;
	let widest = 0;
	let over = 0;
	for (let c = 0; c < commits; c++) {
		for (let m = marks(c); m > 0; m--, total++) {
			roots.push({ start: at, end: at + 3, height: 1 });
			at += 3;
		}
		const choice = core.selectConsolidation(
			{
				start: roots.map((r) => r.start),
				end: roots.map((r) => r.end),
				flags: roots.map(() => 0),
				...(withHeights ? { height: roots.map((r) => r.height) } : {}),
			},
			k,
		);
		const next: SimRoot[] = [];
		let i = 0;
		for (let g = 0; g < choice.groupCount; g++) {
			const [a, b] = [choice.groups[2 * g], choice.groups[2 * g + 1]];
			while (i < a) next.push(roots[i++]);
			const kids = roots.slice(a, b + 1);
			const height = 1 + Math.max(...kids.map((r) => r.height));
			next.push({ start: kids[0].start, end: kids[kids.length - 1].end, height });
			deepest = Math.max(deepest, height);
			widest = Math.max(widest, kids.length);
			i = b + 1;
		}
		while (i < roots.length) next.push(roots[i++]);
		roots = next;
		if (!choice.met) over++;
	}
	return { total, deepest, widest, over, roots: roots.length };
}

describe("the shape of a long session", () => {
	it("depth grows with the logarithm of the marks; each parent indexes at most k", () => {
		const r = rng(7);
		const sizes = Array.from({ length: 1600 }, () => r.int(3, 40));
		const k = 10;
		for (const commits of [50, 400, 1600]) {
			const run = simulate(commits, (c) => sizes[c], k, true);
			// Equal-height parents double the marks per level: a counter of k roots holds about 2^k
			// marks; past that, pairs of different heights add a level now and then.
			expect(run.deepest, `${run.total} marks`).toBeLessThanOrEqual(1 + Math.ceil(Math.log2(run.total)));
			expect(run.widest).toBeLessThanOrEqual(k);
			// The roots stay at most k after every commit.
			expect(run.over).toBe(0);
		}
		// Whole runs, oldest first (no heights): the last parent is taken again at every commit.
		const chain = simulate(400, (c) => sizes[c], k, false);
		expect(chain.deepest).toBeGreaterThan(300);
	});

	it("a 512-stage session's few commits of many marks stay within six levels", () => {
		// About what the 200k-window workload makes: a commit every ~50 stages, 25-40 marks each.
		const r = rng(11);
		const run = simulate(10, () => r.int(25, 40), 10, true);
		expect(run.deepest).toBeLessThanOrEqual(6);
	});
});
