// The lattice grows in place (appends, marks, consolidations link in at the cost of what they add)
// while removals rebuild. The full rebuild is the oracle: after every step of random operation
// sequences, with appends of new entries in between, the lattice answers exactly as one loaded
// from its own save (built whole from specs and validated by the core), and a clone taken before
// a step is unaffected by it. The local span relations a mark uses agree with the scan of every fold.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { ContextIndex } from "../src/lattice/entries.ts";
import { FoldLattice, type LatticeEntry } from "../src/lattice/index.ts";
import { loadStructure } from "../src/lattice/load.ts";
import { relateForMark, relateSpan } from "../src/lattice/ops/common.ts";
import { sketchedEntries } from "./helpers/fixture-entries.ts";
import { concrete, cutPoints, invoke, type Op, opArb, sessionOf, unitArb } from "./helpers/lattice-ops.ts";

const core = nodeCore();

/** Everything a caller can ask of a lattice, as plain data. */
function observed(L: FoldLattice) {
	const n = L.entries.length;
	return {
		snapshot: L.snapshot(),
		window: L.window(),
		visibleRoots: L.visibleRoots(),
		pending: L.pending(),
		rootSpans: Array.from({ length: Math.min(n, 8) + 1 }, (_, k) => L.rootSpans(Math.floor((k * n) / 8))),
		foldOf: L.entries.map((e) => L.foldOf(e.id)),
		heights: L.folds().map((f) => L.height(f.id)),
		columns: L.columns(),
	};
}

/** Each fold's height is one more than its highest child fold's (1 with leaves only). */
function checkHeights(L: FoldLattice): void {
	for (const f of L.folds()) {
		const kids = f.children.flatMap((c) => (c.type === "fold" ? [L.height(c.id) as number] : []));
		expect(L.height(f.id)).toBe(1 + Math.max(0, ...kids));
	}
}

/** The oracle: the same lattice built whole from its save. */
function rebuilt(L: FoldLattice): FoldLattice {
	const loaded = FoldLattice.load(core, L.entries, L.save());
	if (!loaded.ok) throw new Error(`the full rebuild refuses what the lattice holds: ${loaded.reason}`);
	return loaded.lattice;
}

type Step = { op: Op } | { append: number };

const stepArb = fc.oneof(
	{ weight: 6, arbitrary: opArb(10).map((op): Step => ({ op })) },
	{ weight: 1, arbitrary: fc.integer({ min: 1, max: 6 }).map((append): Step => ({ append })) },
);

describe("incremental growth against the full rebuild", () => {
	it("answers as the lattice rebuilt from its save after every step, appends included", () => {
		let steps = 0;
		let grown = 0;
		fc.assert(
			fc.property(
				fc.array(unitArb, { minLength: 6, maxLength: 30 }),
				fc.nat(),
				fc.array(stepArb, { minLength: 10, maxLength: 40, size: "max" }),
				(units, split, plan) => {
					const all = sketchedEntries(core, sessionOf(units));
					// Start over a prefix that ends at a cut point; the rest comes in appends.
					const cuts = cutPoints(all).filter((p) => p > 0);
					let size = cuts[split % cuts.length];
					const made = FoldLattice.create(core, all.slice(0, size));
					if (!made.ok) throw new Error(made.reason);
					const L = made.lattice;
					for (const step of plan) {
						if ("append" in step) {
							if (size === all.length) continue;
							const next = Math.min(all.length, size + step.append);
							const r = L.extend(all.slice(size, next));
							if (!r.ok) throw new Error(r.reason);
							size = next;
							grown++;
						} else {
							const entries = L.entries as LatticeEntry[];
							for (const call of concrete(L, step.op, cutPoints(entries))) {
								const before = L.clone();
								const seen = observed(before);
								invoke(L, call);
								steps++;
								// A clone taken before is untouched by the step.
								expect(observed(before)).toEqual(seen);
							}
						}
						expect(observed(L)).toEqual(observed(rebuilt(L)));
						expect(core.validateLattice(L.columns())).toEqual({ ok: true });
						checkHeights(L);
					}
				},
			),
			{ numRuns: 150 },
		);
		expect(steps).toBeGreaterThan(1000);
		expect(grown).toBeGreaterThan(100);
	});

	it("a clone grows on its own: growth of either never shows on the other", () => {
		const all = sketchedEntries(
			core,
			sessionOf(Array.from({ length: 12 }, () => ({ t: "batch", calls: 2, interleave: false, shuffle: false }))),
		);
		const made = FoldLattice.create(core, all.slice(0, 18));
		if (!made.ok) throw new Error(made.reason);
		const L = made.lattice;
		const ids = L.entries.map((e) => e.id);
		expect(L.mark(ids[0], ids[2], "tool-batch").ok).toBe(true);
		const C = L.clone();
		const before = observed(L);
		expect(C.extend(all.slice(18)).ok).toBe(true);
		expect(C.mark(ids[3], ids[5], "tool-batch").ok).toBe(true);
		expect(observed(L)).toEqual(before);
		expect(L.extend(all.slice(18, 21)).ok).toBe(true);
		expect(L.mark(ids[6], ids[8], "tool-batch").ok).toBe(true);
		expect(C.entries.length).toBe(all.length);
		expect(L.entries.length).toBe(21);
		expect(C.foldOf(ids[6])).toBeNull();
		expect(L.foldOf(ids[3])).toBeNull();
		for (const X of [L, C]) expect(observed(X)).toEqual(observed(rebuilt(X)));
	});
});

describe("the relations a mark reads", () => {
	it("agree with the scan of every fold, for every span of random lattices", () => {
		let spans = 0;
		fc.assert(
			fc.property(
				fc.array(unitArb, { minLength: 4, maxLength: 20 }),
				fc.array(opArb(8), { minLength: 5, maxLength: 30 }),
				(units, ops) => {
					const entries = sketchedEntries(core, sessionOf(units));
					const made = FoldLattice.create(core, entries);
					if (!made.ok) throw new Error(made.reason);
					const L = made.lattice;
					for (const op of ops) for (const call of concrete(L, op, cutPoints(entries))) invoke(L, call);
					// The structure is internal: build it from the lattice's save (the first property shows a
					// grown structure answers as this one does).
					const { structure } = loadStructure(core, new ContextIndex(entries), L.save());
					for (let s = 0; s < entries.length; s++) {
						for (let e = s + 1; e <= entries.length; e++) {
							const full = relateSpan(structure, s, e);
							const fast = relateForMark(structure, s, e);
							expect(fast.equal?.id).toBe(full.equal?.id);
							expect(fast.partial?.id).toBe(full.partial[0]?.id);
							expect(fast.container?.id).toBe(full.containers.at(-1)?.id);
							expect(fast.pendingInside?.id).toBe(full.inside.find((f) => f.state === "pending")?.id);
							spans++;
						}
					}
				},
			),
			{ numRuns: 100 },
		);
		expect(spans).toBeGreaterThan(10_000);
	});
});
