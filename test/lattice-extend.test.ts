// extend indexes only the appended entries (ContextIndex.append shares its claims with the index
// it grew from). These properties check it against the full re-index it replaced: after any
// sequence of appends, refused ones included, the grown index answers every span, position and
// tool-call question as a fresh index over the same entries does, and an extended lattice equals
// one loaded over all entries; a refusal names the same fold and changes nothing.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { ContextIndex } from "../src/lattice/entries.ts";
import { FoldLattice, type LatticeEntry } from "../src/lattice/index.ts";
import { type EntrySketch, sketchedEntries } from "./helpers/fixture-entries.ts";

const core = nodeCore();

/**
 * A random stream of entries, ids unique: users, texts, system entries, tool calls whose results
 * come later (sometimes never, sometimes twice), and now and then an entry reusing an earlier id.
 */
const streamArb = fc
	.array(
		fc.record({
			kind: fc.constantFrom("user", "text", "system", "call", "result", "dupResult", "dupId"),
			pick: fc.nat(),
		}),
		{ minLength: 1, maxLength: 28 },
	)
	.map((steps) => {
		const out: EntrySketch[] = [];
		const pending: string[] = [];
		const answered: string[] = [];
		let n = 0;
		for (const s of steps) {
			const id = `e${n++}`;
			if (s.kind === "user") out.push([id, "user"]);
			else if (s.kind === "text") out.push([id, "assistant"]);
			else if (s.kind === "system") out.push([id, "system"]);
			else if (s.kind === "call") {
				const made = [`c${n}a`, ...(s.pick % 2 ? [`c${n}b`] : [])];
				pending.push(...made);
				out.push([id, "assistant", made]);
			} else if (s.kind === "dupId" && out.length > 0) out.push([out[s.pick % out.length][0], "user"]);
			else if (s.kind === "result" && pending.length > 0) {
				const [c] = pending.splice(s.pick % pending.length, 1);
				answered.push(c);
				out.push([id, "toolResult", c]);
			} else if (s.kind === "dupResult" && answered.length > 0) {
				out.push([id, "toolResult", answered[s.pick % answered.length]]); // a second result
			} else out.push([id, "toolResult", `orphan${n}`]);
		}
		return out;
	});

const chunksArb = fc.tuple(streamArb, fc.array(fc.nat(), { maxLength: 6 }));

/** Split entries at the given cut points (sorted, deduplicated) into consecutive chunks. */
function chunked<T>(xs: readonly T[], cuts: readonly number[]): T[][] {
	const at = [...new Set(cuts.map((c) => c % (xs.length + 1)))].sort((a, b) => a - b);
	const out: T[][] = [];
	let prev = 0;
	for (const c of [...at, xs.length]) {
		out.push(xs.slice(prev, c));
		prev = c;
	}
	return out;
}

function tryIndex(build: () => ContextIndex): ContextIndex | string {
	try {
		return build();
	} catch (err) {
		return (err as Error).message;
	}
}

/**
 * Whether [s, e) may be a fold's span, decided from the entries alone (independently of the index):
 * no system entry, and every tool call an entry of it mentions has a call and a result in the
 * context, all of them inside the span.
 */
function foldable(entries: readonly LatticeEntry[], s: number, e: number): boolean {
	const mentions = (x: LatticeEntry) => [
		...(x.toolCallIds ?? []),
		...(x.toolCallId === undefined ? [] : [x.toolCallId]),
	];
	for (let p = s; p < e; p++) {
		if (entries[p].role === "system") return false;
		for (const c of mentions(entries[p])) {
			const calls = entries.flatMap((x, q) => (x.toolCallIds?.includes(c) ? [q] : []));
			const results = entries.flatMap((x, q) => (x.toolCallId === c ? [q] : []));
			if (calls.length === 0 || results.length === 0) return false;
			if ([...calls, ...results].some((q) => q < s || q >= e)) return false;
		}
	}
	return true;
}

/** Every answer of the index, as plain data. */
function answers(ctx: ContextIndex) {
	const n = ctx.size;
	const spans: (string | null)[] = [];
	for (let s = 0; s < n; s++) for (let e = s + 1; e <= n; e++) spans.push(ctx.spanProblem(s, e));
	const callIds = new Set(
		ctx.entries.flatMap((e) => [...(e.toolCallIds ?? []), ...(e.toolCallId ? [e.toolCallId] : [])]),
	);
	return {
		ids: ctx.entries.map((e) => e.id),
		positions: ctx.entries.map((e) => ctx.position(e.id)),
		unknown: ctx.position("nope"),
		digests: ctx.digests.map((d) => Buffer.from(d).toString("hex")),
		spans,
		groups: [...callIds].sort().map((c) => [c, ctx.calls(c), ctx.results(c)]),
	};
}

describe("ContextIndex.append", () => {
	it("answers exactly as a fresh index over the same entries, refused appends included", () => {
		fc.assert(
			fc.property(chunksArb, ([sketches, cuts]) => {
				const entries = sketchedEntries(core, sketches);
				let grown: ContextIndex | undefined;
				let accepted: LatticeEntry[] = [];
				const older: { index: ContextIndex; entries: LatticeEntry[]; held: readonly LatticeEntry[] }[] = [];
				for (const chunk of chunked(entries, cuts)) {
					const base = grown;
					const next = tryIndex(() => (base ? base.append(chunk) : new ContextIndex(chunk)));
					const fresh = tryIndex(() => new ContextIndex([...accepted, ...chunk]));
					if (typeof fresh === "string") {
						// The same refusal, and the index it grew from answers as before.
						expect(next).toBe(fresh);
						if (base) expect(answers(base)).toEqual(answers(new ContextIndex(accepted)));
						continue;
					}
					expect(typeof next).not.toBe("string");
					if (base) older.push({ index: base, entries: accepted, held: base.entries });
					grown = next as ContextIndex;
					accepted = [...accepted, ...chunk];
					expect(answers(grown)).toEqual(answers(fresh));
					// The indexes it grew from share its storage: they still answer for their own entries only.
					for (const o of older) {
						expect(answers(o.index)).toEqual(answers(new ContextIndex(o.entries)));
						// An entries array handed out never grows with a later append (callers compare them by identity).
						expect(o.held.map((e) => e.id)).toEqual(o.entries.map((e) => e.id));
					}
					for (let s = 0; s < grown.size; s++) {
						for (let e = s + 1; e <= grown.size; e++) {
							expect(grown.spanProblem(s, e) === null, `[${s}, ${e})`).toBe(foldable(accepted, s, e));
						}
					}
				}
			}),
			{ numRuns: 300 },
		);
	});

	it("two appends from one index do not see each other's entries", () => {
		const [a, b, c, d] = sketchedEntries(core, [
			["a", "assistant", ["k"]],
			["b", "toolResult", "k"],
			["c", "user"],
			["d", "toolResult", "k"],
		]);
		const base = new ContextIndex([a]);
		const left = base.append([b, c]);
		const right = base.append([c, d]);
		expect(answers(left)).toEqual(answers(new ContextIndex([a, b, c])));
		expect(answers(right)).toEqual(answers(new ContextIndex([a, c, d])));
		expect(answers(base)).toEqual(answers(new ContextIndex([a])));
	});
});

describe("FoldLattice.extend", () => {
	it("equals a lattice loaded over all the entries, or refuses as checking every fold does, changing nothing", () => {
		fc.assert(
			fc.property(chunksArb, fc.array(fc.tuple(fc.nat(), fc.nat()), { maxLength: 6 }), ([sketches, cuts], marks) => {
				const entries = sketchedEntries(core, sketches);
				const [first, ...rest] = chunked(entries, cuts);
				const created = FoldLattice.create(core, first);
				if (!created.ok) return; // a bad first chunk: nothing to extend
				const { lattice } = created;
				let accepted = [...first];
				// Some marks and commits over the first chunk (refusals are fine: only the valid ones stay).
				for (const [x, y] of marks) {
					if (accepted.length === 0) break;
					const s = x % accepted.length;
					const e = s + (y % (accepted.length - s));
					const m = lattice.mark(accepted[s].id, accepted[e].id, "chapter");
					if (m.ok && x % 2 === 0) lattice.commit([m.id]);
				}
				for (const chunk of rest) {
					const before = lattice.snapshot();
					const r = lattice.extend(chunk);
					const reference = FoldLattice.load(core, [...accepted, ...chunk], lattice.save());
					if (!r.ok) {
						expect(lattice.snapshot()).toEqual(before);
						if (reference.ok) {
							// Only a refusal the full re-index makes (ids, entries) may differ from load's.
							expect(r.reason).toMatch(/share the id|expected/);
						}
						continue;
					}
					expect(reference.ok, reference.ok ? "" : reference.reason).toBe(true);
					if (!reference.ok) continue;
					accepted = [...accepted, ...chunk];
					expect(lattice.snapshot()).toEqual(reference.lattice.snapshot());
					expect(lattice.window()).toEqual(reference.lattice.window());
					expect(lattice.columns()).toEqual(reference.lattice.columns());
				}
			}),
			{ numRuns: 300 },
		);
	});
});
