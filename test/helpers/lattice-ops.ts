// Random lattice operations for the property tests: synthetic sessions of units (tool batches,
// barriers, an open batch), abstract operation picks, and how a pick becomes a concrete call
// against a lattice's current state (replayable on another lattice).
import fc from "fast-check";
import { FOLD_KINDS, type FoldLattice, type LatticeEntry, type Outcome } from "../../src/lattice/index.ts";
import type { EntrySketch } from "./fixture-entries.ts";

// ---- synthetic sessions ----

export type Unit =
	| { t: "user" | "text" | "custom" | "system" }
	| { t: "batch"; calls: number; interleave: boolean; shuffle: boolean }
	| { t: "open" };

export const unitArb: fc.Arbitrary<Unit> = fc.oneof(
	{ weight: 3, arbitrary: fc.constantFrom<Unit>({ t: "user" }, { t: "text" }, { t: "custom" }) },
	{ weight: 1, arbitrary: fc.constant<Unit>({ t: "system" }) },
	{
		weight: 4,
		arbitrary: fc.record({
			t: fc.constant("batch" as const),
			calls: fc.integer({ min: 1, max: 3 }),
			interleave: fc.boolean(),
			shuffle: fc.boolean(),
		}),
	},
	{ weight: 1, arbitrary: fc.constant<Unit>({ t: "open" }) },
);

/** A session from units: tool batches (results maybe reordered or after an unrelated entry), barriers, one open batch. */
export function sessionOf(units: readonly Unit[]): EntrySketch[] {
	const out: EntrySketch[] = [];
	let n = 0;
	const next = (tag: string) => `${tag}${n++}`;
	for (const u of units) {
		if (u.t === "batch") {
			const calls = Array.from({ length: u.calls }, (_, k) => `t${n}_${k}`);
			out.push([next("a"), "assistant", calls]);
			if (u.interleave) out.push([next("c"), "custom"]);
			for (const c of u.shuffle ? [...calls].reverse() : calls) out.push([next("r"), "toolResult", c]);
		} else if (u.t === "open") out.push([next("a"), "assistant", [`open${n}`]]);
		else if (u.t === "user") out.push([next("u"), "user"]);
		else if (u.t === "text") out.push([next("a"), "assistant"]);
		else out.push([next(u.t[0]), u.t]);
	}
	return out;
}

// ---- operations: abstract picks, made concrete against the lattice's current state ----

export type Op =
	| { op: "mark"; i: number; len: number; kind: number; brief: boolean; swap: boolean }
	| { op: "reboundary"; i: number; len: number; swap: boolean }
	| { op: "unmark"; f: number; pending: boolean }
	| { op: "detBrief"; f: number }
	| { op: "refold"; f: number; expanded: boolean }
	| { op: "brief"; f: number; text: number }
	| { op: "commit"; fs: number[] }
	| { op: "commitAll" }
	| { op: "frontier"; i: number; count: number }
	| { op: "expand"; f: number; visible: boolean }
	| { op: "pin" | "unpin"; es: number[]; pinned: boolean }
	| { op: "consolidate"; r: number; n: number; gap: number };

export const pick = fc.nat(1000);
export const opArb = (longSpans: number): fc.Arbitrary<Op> =>
	fc.oneof(
		{
			weight: 6,
			arbitrary: fc.record({
				op: fc.constant("mark" as const),
				i: pick,
				len: fc.oneof(fc.integer({ min: 0, max: 4 }), fc.integer({ min: 0, max: longSpans })),
				kind: fc.nat(FOLD_KINDS.length - 1),
				brief: fc.boolean(),
				swap: fc.nat(9).map((x) => x === 0),
			}),
		},
		{
			weight: 3,
			arbitrary: fc.record({
				op: fc.constant("reboundary" as const),
				i: pick,
				len: fc.integer({ min: 0, max: 6 }),
				swap: fc.constant(false),
			}),
		},
		{ weight: 1, arbitrary: fc.record({ op: fc.constant("detBrief" as const), f: pick }) },
		{ weight: 2, arbitrary: fc.record({ op: fc.constant("unmark" as const), f: pick, pending: fc.boolean() }) },
		{ weight: 2, arbitrary: fc.record({ op: fc.constant("refold" as const), f: pick, expanded: fc.boolean() }) },
		{ weight: 2, arbitrary: fc.record({ op: fc.constant("brief" as const), f: pick, text: fc.nat(9) }) },
		{ weight: 2, arbitrary: fc.record({ op: fc.constant("commit" as const), fs: fc.array(pick, { maxLength: 3 }) }) },
		{ weight: 5, arbitrary: fc.record({ op: fc.constant("commitAll" as const) }) },
		{
			weight: 4,
			arbitrary: fc.record({ op: fc.constant("frontier" as const), i: pick, count: fc.integer({ min: 2, max: 5 }) }),
		},
		{ weight: 3, arbitrary: fc.record({ op: fc.constant("expand" as const), f: pick, visible: fc.boolean() }) },
		{
			weight: 3,
			arbitrary: fc.record({
				op: fc.constantFrom("pin" as const, "unpin" as const),
				// Mostly one to three entries; an empty list now and then (refused).
				es: fc.oneof(
					{ weight: 9, arbitrary: fc.array(pick, { minLength: 1, maxLength: 3 }) },
					fc.constant<number[]>([]),
				),
				pinned: fc.nat(3).map((x) => x !== 0),
			}),
		},
		{
			weight: 3,
			arbitrary: fc.record({
				op: fc.constant("consolidate" as const),
				r: pick,
				n: fc.integer({ min: 1, max: 4 }),
				gap: fc.integer({ min: 0, max: 6 }),
			}),
		},
	);

/** A concrete call: what was asked of the lattice, replayable on another. */
export type Call = [name: string, ...args: unknown[]];

export function invoke(L: FoldLattice, [name, ...args]: Call): Outcome {
	const method = (L as unknown as Record<string, (...a: unknown[]) => Outcome>)[name];
	return method.apply(L, args);
}

/** Positions where a span may start without cutting a tool batch (position n included, as an end). */
export function cutPoints(entries: readonly LatticeEntry[]): number[] {
	const first = new Map<string, number>();
	const last = new Map<string, number>();
	entries.forEach((e, p) => {
		for (const c of [...(e.toolCallIds ?? []), ...(e.toolCallId === undefined ? [] : [e.toolCallId])]) {
			if (!first.has(c)) first.set(c, p);
			last.set(c, p);
		}
	});
	const crossing = new Int32Array(entries.length + 1);
	for (const [c, lo] of first) {
		for (let p = lo + 1; p <= last.get(c)!; p++) crossing[p] = 1;
	}
	return Array.from({ length: entries.length + 1 }, (_, p) => p).filter((p) => crossing[p] === 0);
}

export function concrete(L: FoldLattice, op: Op, cuts: readonly number[]): Call[] {
	const ids = L.entries.map((e) => e.id);
	const folds = L.folds();
	const foldAt = (k: number) => (folds.length === 0 ? "f0000000000" : folds[k % folds.length].id);
	const span = (i: number, len: number, swap: boolean): [string, string] => {
		const a = i % (cuts.length - 1);
		const b = Math.min(a + 1 + len, cuts.length - 1);
		const from = ids[cuts[a]];
		const to = ids[cuts[b] - 1];
		return swap ? [to, from] : [from, to];
	};
	switch (op.op) {
		case "mark": {
			const [from, to] = span(op.i, op.len, op.swap);
			const kind = FOLD_KINDS[op.kind];
			return [op.brief ? ["mark", from, to, kind, { brief: `marked ${from}..${to}` }] : ["mark", from, to, kind]];
		}
		case "reboundary":
			return [["reboundary", ...span(op.i, op.len, op.swap)]];
		case "unmark": {
			const marks = folds.filter((f) => f.state === "pending");
			return [["unmark", op.pending && marks.length > 0 ? marks[op.f % marks.length].id : foldAt(op.f)]];
		}
		case "detBrief":
			return [["setDeterministicBrief", foldAt(op.f), `runtime ${op.f}`]];
		case "refold": {
			const open = folds.filter((f) => f.state === "expanded");
			return [["refold", op.expanded && open.length > 0 ? open[op.f % open.length].id : foldAt(op.f)]];
		}
		case "brief": {
			const text = op.text === 0 ? "" : op.text === 1 ? "x".repeat(2001) : `agent words ${op.text}`;
			return [["brief", foldAt(op.f), text]];
		}
		case "commit":
			return [["commit", op.fs.map(foldAt)]];
		case "commitAll": {
			// What the runtime does at a commit: brief every unbriefed mark, then commit them all.
			const pending = L.pending();
			return [
				...pending.filter((f) => f.brief === "").map((f): Call => ["setDeterministicBrief", f.id, `auto ${f.start}`]),
				...(pending.length > 0 ? [["commit", pending.map((f) => f.id)] as Call] : []),
			];
		}
		case "frontier":
			// The runtime cutting consecutive units into marks (committed by a later commitAll).
			return Array.from({ length: op.count }, (_, k): Call => ["mark", ...span(op.i + k, 0, false), "tool-batch"]);
		case "expand": {
			const visible = L.window().filter((w) => w.type === "fold");
			return [["expand", op.visible && visible.length > 0 ? visible[op.f % visible.length].id : foldAt(op.f)]];
		}
		case "pin":
		case "unpin": {
			// Mostly the pinned entries (unpin succeeds, pin meets "already pinned"), else any entries.
			if (op.pinned && L.pins().length > 0) {
				const pins = L.pins();
				return [[op.op, [...new Set(op.es.map((k) => pins[k % pins.length]))]]];
			}
			return [[op.op, op.es.map((k) => ids[k % ids.length])]];
		}
		case "consolidate": {
			const roots = L.visibleRoots();
			const start = roots.length === 0 ? 0 : op.r % roots.length;
			return [["consolidate", roots.slice(start, start + op.n), { maxGap: op.gap }]];
		}
	}
}
