// clone() shares the lattice's immutable parts and copies the fold nodes: a change on the clone
// (or on the original) never shows on the other, and a fresh clone saves exactly as its original.
import { describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { FoldLattice } from "../src/lattice/index.ts";
import { sketchedEntries } from "./helpers/fixture-entries.ts";

const core = nodeCore();

function lattice() {
	const entries = sketchedEntries(core, [
		["u1", "user"],
		["a1", "assistant", ["c1"]],
		["r1", "toolResult", "c1"],
		["a2", "assistant"],
		["u2", "user"],
		["a3", "assistant", ["c2"]],
		["r2", "toolResult", "c2"],
		["a4", "assistant"],
		["u3", "user"],
	]);
	const made = FoldLattice.create(core, entries);
	if (!made.ok) throw new Error(made.reason);
	const l = made.lattice;
	const m1 = l.mark("a1", "r1", "tool-batch");
	const m2 = l.mark("a3", "r2", "tool-batch");
	if (!m1.ok || !m2.ok) throw new Error("mark refused");
	return { l, entries, first: m1.id, second: m2.id };
}

describe("FoldLattice.clone", () => {
	it("starts equal to its original", () => {
		const { l } = lattice();
		expect(l.clone().save()).toEqual(l.save());
	});

	it("brief, commit, consolidate, expand and pin on the clone never show on the original", () => {
		const { l, first, second } = lattice();
		const before = l.save();
		const c = l.clone();
		expect(c.setDeterministicBrief(first, "one").ok).toBe(true);
		expect(c.setDeterministicBrief(second, "two").ok).toBe(true);
		expect(c.commit([first, second]).ok).toBe(true);
		expect(c.expand(first).ok).toBe(true);
		expect(c.refold(first).ok).toBe(true);
		expect(c.consolidate([first, second], { maxGap: 4 }).ok).toBe(true);
		expect(c.pin(["u3"]).ok).toBe(true);
		expect(c.save()).not.toEqual(before);
		expect(l.save()).toEqual(before);
		expect(l.get(first)?.state).toBe("pending");
		expect(l.get(first)?.brief).toBe("");
		expect(l.pending().map((f) => f.id)).toEqual([first, second]);
		expect(l.pins()).toEqual([]);
	});

	it("changes on the original never show on the clone", () => {
		const { l, first, second } = lattice();
		const c = l.clone();
		const before = c.save();
		expect(l.brief(first, "mine").ok).toBe(true);
		expect(l.unmark(second).ok).toBe(true);
		expect(c.save()).toEqual(before);
		expect(c.get(first)?.brief).toBe("");
		expect(c.get(second)?.state).toBe("pending");
	});

	it("extending either side leaves the other over its own entries", () => {
		const { l, entries } = lattice();
		const c = l.clone();
		const extra = sketchedEntries(core, [
			["u1", "user"],
			["x1", "assistant"],
		]).slice(1);
		expect(c.extend(extra).ok).toBe(true);
		expect(c.entries.length).toBe(entries.length + 1);
		expect(l.entries.length).toBe(entries.length);
		expect(l.foldOf("x1")).toBeUndefined();
		expect(c.foldOf("x1")).toBeNull();
		// The original can still grow by the same id on its own chain.
		expect(l.extend(extra).ok).toBe(true);
		expect(l.foldOf("x1")).toBeNull();
	});
});
