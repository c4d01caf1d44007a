// The fold lattice, case by case: every refusal reason (named specifically, nothing changed),
// nesting, expand/refold outside-in, the window, identities and save/load. Real Wasm core.
import { describe, expect, it } from "vitest";
import { fromHex, toHex } from "../bindings/hex.ts";
import { nodeCore } from "../bindings/node.ts";
import { FoldLattice, type LatticeEntry, type Outcome, type WindowItem } from "../src/lattice/index.ts";
import { type EntrySketch, sketchedEntries } from "./helpers/fixture-entries.ts";

const core = nodeCore();

// A small session: two chapters of tool work, system barriers, an incomplete batch, an orphaned
// result, and a batch whose result arrives after an unrelated entry.
const SKETCH: EntrySketch[] = [
	["s0", "system"],
	["u1", "user"],
	["a2", "assistant", ["t2a", "t2b"]],
	["r3", "toolResult", "t2a"],
	["r4", "toolResult", "t2b"],
	["a5", "assistant"],
	["u6", "user"],
	["a7", "assistant", ["t7"]],
	["r8", "toolResult", "t7"],
	["a9", "assistant", ["t9"]],
	["r10", "toolResult", "t9"],
	["a11", "assistant"],
	["s12", "system"],
	["u13", "user"],
	["a14", "assistant", ["t14"]],
	["c15", "custom"],
	["r16", "toolResult", "tGhost"],
	["u17", "user"],
	["a18", "assistant", ["t18"]],
	["c19", "custom"],
	["r20", "toolResult", "t18"],
	["a21", "assistant"],
	["u22", "user"],
	["a23", "assistant"],
];
const IDS = SKETCH.map(([id]) => id);

function lattice(entries: LatticeEntry[] = sketchedEntries(core, SKETCH)): FoldLattice {
	const made = FoldLattice.create(core, entries);
	if (!made.ok) throw new Error(made.reason);
	return made.lattice;
}

function ok<T extends object>(o: Outcome<T>): T {
	if (!o.ok) throw new Error(`expected success, got refusal: ${o.reason}`);
	return o;
}

/** Run an operation that must refuse: the reason names every `names`, and nothing changed. */
function refused(L: FoldLattice, run: (L: FoldLattice) => Outcome, ...names: string[]): string {
	const before = L.snapshot();
	const windowBefore = L.window();
	const o = run(L);
	if (o.ok) throw new Error(`expected a refusal, got ${JSON.stringify(o)}`);
	for (const name of names) expect(o.reason).toContain(name);
	expect(L.snapshot()).toEqual(before);
	expect(L.window()).toEqual(windowBefore);
	expect(core.validateLattice(L.columns())).toEqual({ ok: true });
	return o.reason;
}

/** A committed fold over [from, to]. */
function folded(L: FoldLattice, from: string, to: string, kind = "tool-batch"): string {
	const { id } = ok(L.mark(from, to, kind, { brief: `work ${from}..${to}` }));
	ok(L.commit([id]));
	return id;
}

const raw = (...ids: string[]): WindowItem[] => ids.map((entryId) => ({ type: "raw", entryId }));
const fold = (id: string): WindowItem => ({ type: "fold", id });
const span = (from: string, to: string) => IDS.slice(IDS.indexOf(from), IDS.indexOf(to) + 1);

describe("creating a lattice", () => {
	it("starts empty: the window is every entry raw", () => {
		const L = lattice();
		expect(L.folds()).toEqual([]);
		expect(L.window()).toEqual(raw(...IDS));
		expect(L.snapshot()).toEqual({ leafCount: IDS.length, folds: [], pins: [] });
	});

	it("refuses malformed entries, naming the entry and the field", () => {
		const good = sketchedEntries(core, SKETCH.slice(0, 3));
		const cases: [unknown, string[]][] = [
			[
				[...good, { ...good[0] }],
				['"s0"', "positions 0 and 3"],
			],
			[[{ ...good[0], hash: "ABC" }], ['"s0"', "hash", "64 lower-case hex"]],
			[[{ ...good[0], role: "robot" }], ['"s0"', '"robot"', "role"]],
			[[{ ...good[0], bytes: -1 }], ['"s0"', "bytes", "-1"]],
			[[{ ...good[0], id: "" }], ["entry 0", "id"]],
			[[{ ...good[2], toolCallIds: ["ok", 7] }], ['"a2"', "toolCallIds"]],
			["not a list", ["array"]],
		];
		for (const [entries, names] of cases) {
			const made = FoldLattice.create(core, entries as LatticeEntry[]);
			expect(made.ok).toBe(false);
			if (!made.ok) for (const name of names) expect(made.reason).toContain(name);
		}
	});
});

describe("mark", () => {
	it("lays a pending mark that shows nothing of itself; brief defaults to deterministic and empty", () => {
		const L = lattice();
		const { id, nested } = ok(L.mark("a7", "r8", "tool-batch"));
		expect(nested).toEqual([]);
		expect(L.get(id)).toMatchObject({ state: "pending", brief: "", provenance: "deterministic", start: 7, end: 9 });
		expect(L.window()).toEqual(raw(...IDS));
		expect(L.pending().map((f) => f.id)).toEqual([id]);
		const briefed = ok(L.mark("a9", "r10", "tool-batch", { brief: "ran the tests" }));
		expect(L.get(briefed.id)).toMatchObject({ brief: "ran the tests", provenance: "supplied" });
	});

	it("refuses an unknown entry, naming it", () => {
		const L = lattice();
		refused(L, (L) => L.mark("nope", "a5", "chapter"), '"nope"', "unknown");
		refused(L, (L) => L.mark("u1", "gone", "chapter"), '"gone"', "unknown");
	});

	it("refuses from after to, naming both positions", () => {
		refused(lattice(), (L) => L.mark("a5", "u1", "chapter"), '"a5" (position 5)', '"u1" (position 1)', "after");
	});

	it("refuses a span holding a system entry", () => {
		refused(lattice(), (L) => L.mark("a11", "u13", "chapter"), '"s12" (position 12)', "system");
	});

	it("refuses a span that splits a tool call from its result", () => {
		refused(lattice(), (L) => L.mark("u1", "r3", "chapter"), '"t2b"', '"r4" (position 4)', "whole tool batches");
	});

	it("refuses a span that holds a result without its call", () => {
		refused(lattice(), (L) => L.mark("r3", "a5", "chapter"), '"r3"', '"t2a"', '"a2" (position 2)');
	});

	it("refuses an incomplete batch (a call with no result yet)", () => {
		refused(lattice(), (L) => L.mark("u13", "a14", "chapter"), '"a14"', '"t14"', "no result yet");
	});

	it("refuses an orphaned result (its call is in no entry)", () => {
		refused(lattice(), (L) => L.mark("c15", "r16", "chapter"), '"r16"', '"tGhost"', "orphaned");
	});

	it("takes a batch whose result arrives after an unrelated entry, but only whole", () => {
		const L = lattice();
		refused(L, (L) => L.mark("a18", "c19", "tool-batch"), '"t18"', '"r20"');
		ok(L.mark("a18", "r20", "tool-batch"));
	});

	it("refuses a span holding a pinned entry", () => {
		const L = lattice();
		ok(L.pin(["u6"]));
		refused(L, (L) => L.mark("u6", "a11", "chapter"), '"u6" (position 6)', "pinned");
	});

	it("refuses a partial overlap, naming the fold", () => {
		const L = lattice();
		const { id } = ok(L.mark("u6", "r8", "chapter"));
		refused(L, (L) => L.mark("a7", "r10", "chapter"), id, "partially overlaps");
	});

	it("refuses a duplicate span, of a mark or of a standing fold", () => {
		const L = lattice();
		const pending = ok(L.mark("a7", "r8", "tool-batch")).id;
		refused(L, (L) => L.mark("a7", "r8", "chapter"), pending, "already covered");
		const standing = folded(L, "a9", "r10");
		refused(L, (L) => L.mark("a9", "r10", "tool-batch"), standing, "committed fold");
	});

	it("refuses a mark inside a mark: reboundary re-cuts marks", () => {
		const L = lattice();
		const { id } = ok(L.mark("u1", "a5", "chapter"));
		refused(L, (L) => L.mark("a2", "r4", "tool-batch"), id, "inside", "reboundary");
	});

	it("refuses a mark containing a mark: reboundary merges marks", () => {
		const L = lattice();
		const { id } = ok(L.mark("a2", "r4", "tool-batch"));
		refused(L, (L) => L.mark("u1", "a5", "chapter"), id, "contains", "reboundary");
	});

	it("refuses a mark inside a standing fold, committed or expanded", () => {
		const L = lattice();
		const id = folded(L, "u1", "a5", "chapter");
		refused(L, (L) => L.mark("a2", "r4", "tool-batch"), `committed fold ${id}`, "children are fixed");
		ok(L.expand(id));
		refused(L, (L) => L.mark("a2", "r4", "tool-batch"), `expanded fold ${id}`, "children are fixed");
	});

	it("refuses an unknown kind, the consolidation kind, and a bad brief", () => {
		const L = lattice();
		refused(L, (L) => L.mark("a7", "r8", "novel"), '"novel"', "tool-batch, chapter");
		refused(L, (L) => L.mark("a7", "r8", "consolidation"), "consolidate");
		refused(L, (L) => L.mark("a7", "r8", "tool-batch", { brief: "" }), "empty");
		refused(L, (L) => L.mark("a7", "r8", "tool-batch", { brief: " \n" }), "whitespace");
		refused(L, (L) => L.mark("a7", "r8", "tool-batch", { brief: "x".repeat(2001) }), "2001", "2000");
	});

	it("nests standing folds: a mark over folded work takes them as children", () => {
		const L = lattice();
		const batch = folded(L, "a2", "r4");
		const { id, nested } = ok(L.mark("u1", "a5", "chapter"));
		expect(nested).toEqual([batch]);
		expect(L.get(id)?.children).toEqual([
			{ type: "leaf", entryId: "u1" },
			{ type: "fold", id: batch },
			{ type: "leaf", entryId: "a5" },
		]);
		expect(L.get(batch)).toMatchObject({ parent: id, depth: 1 });
		// The mark shows nothing of itself: the batch still shows as its brief.
		expect(L.window().slice(0, 4)).toEqual([...raw("s0", "u1"), fold(batch), ...raw("a5")]);
	});
});

describe("identity and ids", () => {
	it("identity is foldIdentity over the children's hashes; the id is f + its first 10 hex digits", () => {
		const L = lattice();
		const batch = folded(L, "a2", "r4");
		const { id } = ok(L.mark("u1", "a5", "chapter"));
		const hashOf = (entryId: string) => L.entries.find((e) => e.id === entryId)!.hash;
		const batchIdentity = toHex(core.foldIdentity(["a2", "r3", "r4"].map((e) => fromHex(hashOf(e)))));
		expect(L.get(batch)?.identity).toBe(batchIdentity);
		const outer = toHex(core.foldIdentity([hashOf("u1"), batchIdentity, hashOf("a5")].map((h) => fromHex(h))));
		expect(L.get(id)?.identity).toBe(outer);
		expect(id).toBe(`f${outer.slice(0, 10)}`);
		expect(L.leavesOf(id)).toEqual(span("u1", "a5").map((e) => ({ entryId: e, hash: hashOf(e) })));
	});

	it("an existing fold keeps its id through every later change", () => {
		const L = lattice();
		const batch = folded(L, "a7", "r8");
		const chapter = ok(L.mark("u6", "a11", "chapter")).id;
		ok(L.unmark(chapter));
		ok(L.mark("u6", "a11", "chapter"));
		ok(L.reboundary("u6", "r10"));
		expect(L.get(batch)).toMatchObject({ id: batch, state: "committed" });
	});

	it("refuses a fold whose content is identical to another's (same id)", () => {
		// Two entries with identical bytes give two one-leaf folds the same identity.
		const twins: EntrySketch[] = [
			["x", "user"],
			["y", "user"],
		];
		const L = lattice(sketchedEntries(core, twins, () => "same bytes"));
		const { id } = ok(L.mark("x", "x", "chapter"));
		refused(L, (L) => L.mark("y", "y", "chapter"), id, "identical content");
	});
});

describe("brief and setDeterministicBrief", () => {
	it("brief rewrites a pending fold's brief verbatim, any number of times", () => {
		const L = lattice();
		const { id } = ok(L.mark("a7", "r8", "tool-batch"));
		ok(L.brief(id, "first"));
		ok(L.brief(id, "  second, verbatim  "));
		expect(L.get(id)).toMatchObject({ brief: "  second, verbatim  ", provenance: "supplied" });
	});

	it("refuses a standing fold's brief, an unknown fold, and bad text", () => {
		const L = lattice();
		const id = folded(L, "a7", "r8");
		refused(L, (L) => L.brief(id, "new words"), id, "never rewritten");
		refused(L, (L) => L.brief("f0000000000", "words"), '"f0000000000"', "unknown fold");
		const pending = ok(L.mark("a9", "r10", "tool-batch")).id;
		refused(L, (L) => L.brief(pending, ""), "empty");
		refused(L, (L) => L.brief(pending, "é".repeat(2001)), "2001");
		ok(L.brief(pending, "é".repeat(2000)));
	});

	it("the runtime writes deterministic briefs only where the agent has not", () => {
		const L = lattice();
		const a = ok(L.mark("a7", "r8", "tool-batch")).id;
		ok(L.setDeterministicBrief(a, "read x.ts"));
		ok(L.setDeterministicBrief(a, "read x.ts (rewritten)"));
		expect(L.get(a)).toMatchObject({ brief: "read x.ts (rewritten)", provenance: "deterministic" });
		ok(L.brief(a, "the agent's words"));
		refused(L, (L) => L.setDeterministicBrief(a, "runtime words"), a, "supplied");
		ok(L.commit([a]));
		refused(L, (L) => L.setDeterministicBrief(a, "late"), a, "never rewritten");
	});
});

describe("unmark", () => {
	it("withdraws a mark; the folds it held are roots again", () => {
		const L = lattice();
		const batch = folded(L, "a2", "r4");
		const { id } = ok(L.mark("u1", "a5", "chapter"));
		expect(ok(L.unmark(id)).released).toEqual([batch]);
		expect(L.get(id)).toBeUndefined();
		expect(L.get(batch)).toMatchObject({ parent: null, depth: 0 });
	});

	it("refuses a standing fold and an unknown id", () => {
		const L = lattice();
		const id = folded(L, "a7", "r8");
		refused(L, (L) => L.unmark(id), id, "not a pending mark");
		refused(L, (L) => L.unmark("fnope"), '"fnope"');
	});
});

describe("reboundary", () => {
	it("merges the marks inside the span into one", () => {
		const L = lattice();
		const a = ok(L.mark("a7", "r8", "tool-batch")).id;
		const b = ok(L.mark("a9", "r10", "tool-batch")).id;
		const { id, merged, split, changed } = ok(L.reboundary("u6", "a11"));
		expect({ merged, split, changed }).toEqual({ merged: [a, b], split: [], changed: true });
		expect(L.pending().map((f) => [f.id, f.kind, f.start, f.end])).toEqual([[id, "chapter", 6, 12]]);
	});

	it("splits a mark around the span; the outside parts stay marks of their own", () => {
		const L = lattice();
		const chapter = ok(L.mark("u6", "a11", "chapter", { brief: "the whole chapter" })).id;
		const { id, split } = ok(L.reboundary("a7", "r8"));
		expect(split).toHaveLength(1);
		expect(split[0].from).toBe(chapter);
		const spans = L.pending().map((f) => [f.start, f.end, f.kind, f.brief]);
		expect(spans).toEqual([
			[6, 7, "chapter", ""],
			[7, 9, "chapter", ""],
			[9, 12, "chapter", ""],
		]);
		expect(L.pending().map((f) => f.id)).toEqual([split[0].into[0], id, split[0].into[1]]);
	});

	it("re-cuts across two marks: the span takes their overlap, the rest stays marked", () => {
		const L = lattice();
		ok(L.mark("u1", "a5", "chapter"));
		ok(L.mark("u6", "r8", "chapter"));
		ok(L.reboundary("a5", "u6"));
		expect(L.pending().map((f) => [f.start, f.end])).toEqual([
			[1, 5],
			[5, 7],
			[7, 9],
		]);
	});

	it("keeps the span of an existing mark as it is", () => {
		const L = lattice();
		const { id } = ok(L.mark("a7", "r8", "tool-batch", { brief: "kept" }));
		expect(ok(L.reboundary("a7", "r8"))).toMatchObject({ id, changed: false });
		expect(L.get(id)).toMatchObject({ brief: "kept", kind: "tool-batch" });
	});

	it("takes standing folds inside the span as children", () => {
		const L = lattice();
		const batch = folded(L, "a7", "r8");
		const { id } = ok(L.reboundary("u6", "a11"));
		expect(L.get(batch)?.parent).toBe(id);
	});

	it("refuses a remainder that is not a closed span", () => {
		const L = lattice();
		const { id } = ok(L.mark("a18", "r20", "tool-batch"));
		refused(L, (L) => L.reboundary("c19", "c19"), id, "[18, 19)", '"t18"');
	});

	it("refuses a remainder that would duplicate a standing fold", () => {
		const L = lattice();
		const batch = folded(L, "a7", "r8");
		const mark = ok(L.mark("a7", "r10", "chapter")).id;
		refused(L, (L) => L.reboundary("a9", "r10"), mark, batch, "exactly");
	});

	it("never changes standing folds: partial overlap, inside one, or exactly one", () => {
		const L = lattice();
		const part = folded(L, "u6", "r8", "chapter");
		refused(L, (L) => L.reboundary("a7", "a11"), part, "partially overlaps", "standing");
		refused(L, (L) => L.reboundary("u6", "r8"), part, "exactly", "standing");
		const chapter = folded(L, "u1", "a5", "chapter");
		refused(L, (L) => L.reboundary("a2", "r4"), chapter, "inside", "standing");
	});

	it("refuses the same span problems as mark", () => {
		const L = lattice();
		refused(L, (L) => L.reboundary("a11", "u13"), '"s12"', "system");
		refused(L, (L) => L.reboundary("u1", "r3"), '"t2b"');
		refused(L, (L) => L.reboundary("r4", "u1"), "after");
		refused(L, (L) => L.reboundary("u1", "a5", { kind: "consolidation" }), "consolidate");
	});
});

describe("pin and unpin", () => {
	it("pins and unpins entries, all-or-nothing over the list", () => {
		const L = lattice();
		ok(L.pin(["u13", "u6"]));
		expect(L.pins()).toEqual(["u6", "u13"]);
		const { id } = ok(L.mark("u1", "a5", "chapter"));
		refused(L, (L) => L.pin(["u17", "a2"]), '"a2"', id, "unmark it first");
		expect(L.pins()).toEqual(["u6", "u13"]);
		refused(L, (L) => L.unpin(["u6", "u17"]), '"u17"', "not pinned");
		ok(L.unpin(["u6"]));
		expect(L.pins()).toEqual(["u13"]);
	});

	it("refuses an entry inside a standing fold, an already pinned entry, unknown and repeated entries", () => {
		const L = lattice();
		const id = folded(L, "a7", "r8");
		refused(L, (L) => L.pin(["r8"]), '"r8"', id, "cannot be pinned");
		ok(L.pin(["u6"]));
		refused(L, (L) => L.pin(["u6"]), '"u6"', "already pinned");
		refused(L, (L) => L.pin(["zz"]), '"zz"', "unknown");
		refused(L, (L) => L.pin(["u1", "u1"]), '"u1"', "twice");
		refused(L, (L) => L.pin([]), "empty");
	});
});

describe("commit", () => {
	it("commits all listed marks or none", () => {
		const L = lattice();
		const a = ok(L.mark("a7", "r8", "tool-batch", { brief: "a" })).id;
		const b = ok(L.mark("a9", "r10", "tool-batch")).id;
		refused(L, (L) => L.commit([a, b]), b, "no brief yet");
		expect(L.get(a)?.state).toBe("pending");
		ok(L.setDeterministicBrief(b, "b"));
		expect(ok(L.commit([a, b])).committed).toEqual([a, b]);
		expect(L.window().slice(6, 10)).toEqual([...raw("u6"), fold(a), fold(b), ...raw("a11")]);
		expect(L.visibleRoots()).toEqual([a, b]);
	});

	it("refuses a standing fold, an unknown id, a repeated id and an empty list", () => {
		const L = lattice();
		const id = folded(L, "a7", "r8");
		refused(L, (L) => L.commit([id]), id, "not a pending mark");
		refused(L, (L) => L.commit(["fx"]), '"fx"', "unknown fold");
		const m = ok(L.mark("a9", "r10", "tool-batch", { brief: "m" })).id;
		refused(L, (L) => L.commit([m, m]), m, "twice");
		refused(L, (L) => L.commit([]), "empty");
	});

	it("a committed mark keeps its children's states (an expanded child stays expanded, hidden)", () => {
		const L = lattice();
		const batch = folded(L, "a7", "r8");
		ok(L.expand(batch));
		const chapter = ok(L.mark("u6", "a11", "chapter", { brief: "chapter" })).id;
		ok(L.commit([chapter]));
		expect(L.get(batch)?.state).toBe("expanded");
		expect(L.window().slice(6, 8)).toEqual([fold(chapter), ...raw("s12")]);
		ok(L.expand(chapter));
		expect(L.window().slice(6, 12)).toEqual(raw(...span("u6", "a11")));
	});
});

describe("expand and refold, outside-in", () => {
	function nested(): { L: FoldLattice; inner: string; outer: string } {
		const L = lattice();
		const inner = folded(L, "a2", "r4");
		const outer = folded(L, "u1", "a5", "chapter");
		return { L, inner, outer };
	}

	it("opens one level at a time and refolds", () => {
		const { L, inner, outer } = nested();
		expect(L.window().slice(0, 3)).toEqual([...raw("s0"), fold(outer), ...raw("u6")]);
		refused(L, (L) => L.expand(inner), inner, `committed fold ${outer}`, "outside-in");
		ok(L.expand(outer));
		expect(L.window().slice(0, 5)).toEqual([...raw("s0", "u1"), fold(inner), ...raw("a5", "u6")]);
		ok(L.expand(inner));
		expect(L.window().slice(0, 7)).toEqual(raw(...span("s0", "u6")));
		ok(L.refold(outer));
		expect(L.window().slice(0, 3)).toEqual([...raw("s0"), fold(outer), ...raw("u6")]);
		expect(L.get(inner)?.state).toBe("expanded");
		ok(L.refold(inner)); // hidden, but refolding it is allowed and changes nothing visible
		expect(L.window().slice(0, 3)).toEqual([...raw("s0"), fold(outer), ...raw("u6")]);
	});

	it("refuses a mark, an expanded fold, an unknown id; refold refuses what is not expanded", () => {
		const { L, outer } = nested();
		const m = ok(L.mark("a7", "r8", "tool-batch")).id;
		refused(L, (L) => L.expand(m), m, "not folded yet");
		ok(L.expand(outer));
		refused(L, (L) => L.expand(outer), outer, "already expanded");
		refused(L, (L) => L.expand("fq"), '"fq"');
		refused(L, (L) => L.refold(m), m, "not expanded");
	});

	it("a committed fold inside a mark is visible and expands", () => {
		const L = lattice();
		const batch = folded(L, "a2", "r4");
		ok(L.mark("u1", "a5", "chapter"));
		ok(L.expand(batch));
		expect(L.window().slice(0, 6)).toEqual(raw(...span("s0", "a5")));
	});
});

describe("consolidate", () => {
	it("makes adjacent committed roots and the raw gap between them one committed fold", () => {
		const L = lattice();
		const a = folded(L, "a7", "r8");
		const b = folded(L, "a9", "r10");
		const c = folded(L, "u1", "a5", "chapter");
		const joined = ok(L.consolidate([b, a]));
		expect(joined.children).toEqual([a, b]);
		expect(L.get(joined.id)).toMatchObject({ kind: "consolidation", state: "committed", provenance: "deterministic" });
		expect(L.get(joined.id)?.brief).toContain(a);
		const wide = ok(L.consolidate([c, joined.id], { maxGap: 1, brief: "chapters 1-2", provenance: "supplied" }));
		expect(wide.gapEntries).toEqual(["u6"]);
		expect(L.get(wide.id)?.children).toEqual([
			{ type: "fold", id: c },
			{ type: "leaf", entryId: "u6" },
			{ type: "fold", id: joined.id },
		]);
		expect(L.window().slice(0, 3)).toEqual([...raw("s0"), fold(wide.id), ...raw("a11")]);
		expect(L.visibleRoots()).toEqual([wide.id]);
	});

	it("refuses one fold, a nested fold, a fold not collapsed, a gap too wide, and a bad maxGap", () => {
		const L = lattice();
		const a = folded(L, "a7", "r8");
		const b = folded(L, "a9", "r10");
		const c = folded(L, "u1", "a5", "chapter");
		refused(L, (L) => L.consolidate([a]), "two or more");
		refused(L, (L) => L.consolidate([c, a]), c, a, "not adjacent", "1 entry lies", "maxGap is 0");
		refused(L, (L) => L.consolidate([c, a], { maxGap: -1 }), "maxGap", "-1");
		ok(L.expand(b));
		refused(L, (L) => L.consolidate([a, b]), b, "not collapsed");
		ok(L.refold(b));
		const m = ok(L.mark("a7", "r10", "chapter", { brief: "m" })).id;
		refused(L, (L) => L.consolidate([a, b]), a, `nested in pending mark ${m}`);
	});

	it("refuses a gap holding a fold, a pinned entry, or a system entry", () => {
		const L = lattice();
		const c = folded(L, "u1", "a5", "chapter");
		const a = folded(L, "a7", "r8");
		const b = folded(L, "a9", "r10");
		refused(L, (L) => L.consolidate([c, b], { maxGap: 3 }), a, "lies between");
		ok(L.pin(["u6"]));
		refused(L, (L) => L.consolidate([c, a], { maxGap: 1 }), '"u6"', "pinned");
		const later = folded(L, "u13", "u13", "chapter");
		refused(L, (L) => L.consolidate([b, later], { maxGap: 2 }), '"s12"', "system");
	});
});

describe("window, columns, save and load", () => {
	it("columns are the pre-order spans the core validates", () => {
		const L = lattice();
		folded(L, "a2", "r4");
		folded(L, "u1", "a5", "chapter");
		ok(L.mark("a7", "r8", "tool-batch"));
		const cols = L.columns();
		expect(Array.from(cols.start)).toEqual(L.folds().map((f) => f.start));
		expect(Array.from(cols.parent)).toEqual([-1, 0, -1]);
		expect(Array.from(cols.depth)).toEqual([0, 1, 0]);
		expect(core.validateLattice(cols)).toEqual({ ok: true });
	});

	it("save and load round-trip the whole state", () => {
		const L = lattice();
		const inner = folded(L, "a2", "r4");
		folded(L, "u1", "a5", "chapter");
		ok(L.expand(L.get(inner)!.parent!));
		ok(L.mark("u6", "a11", "chapter", { brief: "pending words" }));
		ok(L.pin(["u13"]));
		const loaded = FoldLattice.load(core, sketchedEntries(core, SKETCH), L.save());
		expect(loaded.ok && loaded.lattice.snapshot()).toEqual(L.snapshot());
	});

	it("load refuses a fold whose content changed, and a pin inside a fold", () => {
		const L = lattice();
		const id = folded(L, "a7", "r8");
		const changed = sketchedEntries(core, SKETCH, (e) =>
			JSON.stringify({ type: "message", id: e, edited: e === "r8" }),
		);
		const saved = L.save();
		const again = FoldLattice.load(core, changed, saved);
		expect(again.ok).toBe(false);
		if (!again.ok) expect(again.reason).toContain(id);
		const pinned = FoldLattice.load(core, sketchedEntries(core, SKETCH), { ...saved, pins: ["r8"] });
		expect(pinned.ok).toBe(false);
		if (!pinned.ok) expect(pinned.reason).toContain('"r8"');
	});
});
