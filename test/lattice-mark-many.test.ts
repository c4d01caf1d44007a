// markMany: many marks in one change, all or nothing, with the same ids one-by-one marks get.
import { describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { FoldLattice } from "../src/lattice/index.ts";
import { type EntrySketch, sketchedEntries } from "./helpers/fixture-entries.ts";

const core = nodeCore();
const SKETCH: EntrySketch[] = [
	["u0", "user"],
	["a1", "assistant", ["t1"]],
	["r2", "toolResult", "t1"],
	["a3", "assistant", ["t3"]],
	["r4", "toolResult", "t3"],
	["s5", "system"],
	["a6", "assistant", ["t6"]],
	["r7", "toolResult", "t6"],
];

function fresh(): FoldLattice {
	const made = FoldLattice.create(core, sketchedEntries(core, SKETCH));
	if (!made.ok) throw new Error(made.reason);
	return made.lattice;
}

describe("markMany", () => {
	it("gives the same folds and ids as marking one by one", () => {
		const many = fresh();
		const r = many.markMany([
			{ from: "a6", to: "r7", kind: "tool-batch" },
			{ from: "a1", to: "r2", kind: "tool-batch" },
		]);
		if (!r.ok) throw new Error(r.reason);
		const single = fresh();
		const a = single.mark("a6", "r7", "tool-batch");
		const b = single.mark("a1", "r2", "tool-batch");
		if (!a.ok || !b.ok) throw new Error("single marks refused");
		expect(r.ids).toEqual([a.id, b.id]);
		expect(many.snapshot()).toEqual(single.snapshot());
	});

	it("refuses the whole batch, naming the bad request, and changes nothing", () => {
		const L = fresh();
		const before = L.snapshot();
		const bad = L.markMany([
			{ from: "a1", to: "r2", kind: "tool-batch" },
			{ from: "a3", to: "a6", kind: "tool-batch" }, // crosses the system entry and splits t6
		]);
		expect(bad.ok).toBe(false);
		if (!bad.ok) expect(bad.reason).toMatch(/^markMany: mark 1: /);
		expect(L.snapshot()).toEqual(before);
	});

	it("refuses requests that overlap each other", () => {
		const L = fresh();
		const r = L.markMany([
			{ from: "a1", to: "r4", kind: "chapter" },
			{ from: "a3", to: "r4", kind: "tool-batch" },
		]);
		expect(r.ok).toBe(false);
		if (!r.ok) expect(r.reason).toMatch(/overlaps mark 0/);
		expect(L.folds()).toEqual([]);
	});

	it("refuses an empty batch", () => {
		const r = fresh().markMany([]);
		expect(r.ok).toBe(false);
	});
});
