// Lattice validation: the Wasm core against two plain references and a brute-force definition.
import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { LATTICE_CODES, type LatticeInput, type LatticeVerdict } from "../bindings/lattice.ts";
import { loadCoreFile, type PiFoldCore } from "../bindings/node.ts";
import { cloneLattice, type LatticeColumns, MUTATIONS, mutate, randomLattice, rng } from "../harness/reference/gen.ts";
import {
	isValidLatticeBruteForce,
	type LatticeRefResult,
	toFolds,
	validateLatticeObjects,
	validateLatticeTyped,
} from "../harness/reference/lattice-ref.ts";

let core: PiFoldCore;
beforeAll(() => {
	core = loadCoreFile();
});

const CODE_BY_NUMBER = Object.fromEntries(Object.entries(LATTICE_CODES).map(([k, v]) => [v, k]));

/** Run all three implementations; return the Wasm result after asserting they agree. */
function agree(l: LatticeColumns): LatticeRefResult {
	const verdict = core.validateLattice(l);
	const wasm: LatticeRefResult = verdict.ok
		? { code: 0, index: -1, other: -1 }
		: { code: verdict.codeNumber, index: verdict.index, other: verdict.other };
	const typed = validateLatticeTyped(
		Int32Array.from(l.start),
		Int32Array.from(l.end),
		Int32Array.from(l.parent),
		Int32Array.from(l.depth),
		l.leafCount,
	);
	const objects = validateLatticeObjects(toFolds(l.start, l.end, l.parent, l.depth), l.leafCount);
	expect(typed).toEqual(wasm);
	expect(objects).toEqual(wasm);
	if (!verdict.ok) expect(CODE_BY_NUMBER[verdict.codeNumber]).toBe(verdict.code);
	return wasm;
}

const seedAndSize = fc.record({
	seed: fc.integer(),
	leaves: fc.integer({ min: 1, max: 80 }),
	folds: fc.integer({ min: 1, max: 60 }),
});

describe("valid lattices", () => {
	it("all implementations accept random nestings, and so does the brute-force definition", () => {
		fc.assert(
			fc.property(seedAndSize, ({ seed, leaves, folds }) => {
				const l = randomLattice(rng(seed), leaves, folds);
				expect(agree(l).code).toBe(LATTICE_CODES.OK);
				expect(isValidLatticeBruteForce(toFolds(l.start, l.end, l.parent, l.depth), l.leafCount)).toBe(true);
				// Typed-array input takes the copy path; same verdict.
				const typed: LatticeInput = { ...l, start: Int32Array.from(l.start), depth: Int32Array.from(l.depth) };
				expect(core.validateLattice(typed)).toEqual({ ok: true });
			}),
			{ numRuns: 400 },
		);
	});

	it("covers every leaf exactly once: the folds containing a position form the innermost fold's parent chain", () => {
		fc.assert(
			fc.property(seedAndSize, ({ seed, leaves, folds }) => {
				const l = randomLattice(rng(seed), leaves, folds);
				for (let x = 0; x < l.leafCount; x++) {
					const containing = l.start.flatMap((s, i) => (s <= x && x < l.end[i] ? [i] : []));
					// Innermost = the last in pre-order; its ancestors must be exactly the others.
					const chain: number[] = [];
					for (let f = containing.length ? containing[containing.length - 1] : -1; f !== -1; f = l.parent[f]) {
						chain.unshift(f);
					}
					expect(chain).toEqual(containing);
					if (chain.length) expect(l.depth[chain[chain.length - 1]]).toBe(chain.length - 1);
				}
			}),
			{ numRuns: 200 },
		);
	});

	it("accepts the empty lattice and single folds at the edges", () => {
		expect(core.validateLattice({ start: [], end: [], parent: [], depth: [], leafCount: 0 })).toEqual({ ok: true });
		expect(core.validateLattice({ start: [0], end: [1], parent: [-1], depth: [0], leafCount: 1 }).ok).toBe(true);
		expect(core.validateLattice({ start: [4], end: [5], parent: [-1], depth: [0], leafCount: 5 }).ok).toBe(true);
	});
});

describe("invalid lattices", () => {
	it("mutated lattices: Wasm and both references report the same code, fold and other fold", () => {
		fc.assert(
			fc.property(seedAndSize, fc.constantFrom(...MUTATIONS), fc.integer(), ({ seed, leaves, folds }, kind, mseed) => {
				const valid = randomLattice(rng(seed), leaves, folds);
				fc.pre(valid.start.length > 0);
				const l = mutate(valid, rng(mseed), kind);
				const result = agree(l);
				const folded = toFolds(l.start, l.end, l.parent, l.depth);
				expect(result.code === LATTICE_CODES.OK).toBe(isValidLatticeBruteForce(folded, l.leafCount));
			}),
			{ numRuns: 1500 },
		);
	});

	it("arbitrary small columns: same verdicts, and OK exactly when the brute-force definition holds", () => {
		const small = fc.integer({ min: -2, max: 7 });
		const arb = fc.integer({ min: 0, max: 6 }).chain((n) =>
			fc.record({
				start: fc.array(small, { minLength: n, maxLength: n }),
				end: fc.array(small, { minLength: n, maxLength: n }),
				parent: fc.array(fc.integer({ min: -2, max: 6 }), { minLength: n, maxLength: n }),
				depth: fc.array(fc.integer({ min: -1, max: 3 }), { minLength: n, maxLength: n }),
				leafCount: fc.integer({ min: 0, max: 7 }),
			}),
		);
		fc.assert(
			fc.property(arb, (l) => {
				const result = agree(l);
				expect(result.code === LATTICE_CODES.OK).toBe(
					isValidLatticeBruteForce(toFolds(l.start, l.end, l.parent, l.depth), l.leafCount),
				);
			}),
			{ numRuns: 3000 },
		);
	});

	it("the mutations reach every violation code (the generator exercises each check)", () => {
		const seen = new Set<number>();
		const r = rng(20_240_601);
		for (let t = 0; t < 3000; t++) {
			const l = randomLattice(r, r.int(5, 60), r.int(2, 40));
			if (l.start.length === 0) continue;
			seen.add(agree(mutate(l, r, MUTATIONS[t % MUTATIONS.length])).code);
		}
		seen.delete(LATTICE_CODES.OK);
		expect([...seen].sort((a, b) => a - b)).toEqual(Object.values(LATTICE_CODES).filter((c) => c !== LATTICE_CODES.OK));
	});
});

// Base: leaves [0, 12); 0 = [0,6) root, 1 = [0,2) in 0, 2 = [2,6) in 0, 3 = [3,5) in 2,
// 4 = [8,12) root, 5 = [9,10) in 4.
const BASE: LatticeColumns = {
	start: [0, 0, 2, 3, 8, 9],
	end: [6, 2, 6, 5, 12, 10],
	parent: [-1, 0, 0, 2, -1, 4],
	depth: [0, 1, 1, 2, 0, 1],
	leafCount: 12,
};

function failing(change: (l: LatticeColumns) => void): Extract<LatticeVerdict, { ok: false }> {
	const l = cloneLattice(BASE);
	change(l);
	agree(l);
	const v = core.validateLattice(l);
	if (v.ok) throw new Error("expected a violation");
	return v;
}

describe("one hand-written case per code", () => {
	it("the base lattice is valid", () => {
		expect(agree(BASE).code).toBe(LATTICE_CODES.OK);
	});

	const cases: [keyof typeof LATTICE_CODES, (l: LatticeColumns) => void, number, number, RegExp][] = [
		["EMPTY_SPAN", (l) => (l.end[3] = 3), 3, -1, /fold 3 \[3, 3\) is empty/],
		["OUT_OF_RANGE", (l) => (l.end[4] = 13), 4, -1, /fold 4 \[8, 13\) reaches outside the entries \[0, 12\)/],
		[
			"OUT_OF_RANGE",
			(l) => {
				l.start[0] = -1;
				l.start[1] = -1;
			},
			0,
			-1,
			/fold 0 \[-1, 6\)/,
		],
		["BAD_PARENT", (l) => (l.parent[2] = 2), 2, -1, /fold 2 names parent 2, itself/],
		["BAD_PARENT", (l) => (l.parent[1] = 3), 1, -1, /fold 1 names parent 3, a later fold/],
		["BAD_PARENT", (l) => (l.parent[5] = -2), 5, -1, /fold 5 names parent -2, no fold/],
		[
			"DUPLICATE",
			(l) => {
				l.start[3] = 2;
				l.end[3] = 6;
			},
			3,
			2,
			/fold 3 \[2, 6\) has the same span as fold 2/,
		],
		["DUPLICATE", (l) => (l.end[1] = 6), 1, 0, /fold 1 \[0, 6\) has the same span as fold 0/],
		["ORDER", (l) => (l.start[4] = 1), 4, 3, /fold 4 \[1, 12\) sorts before fold 3 \[3, 5\)/],
		["ORDER", (l) => (l.end[1] = 7), 1, 0, /fold 1 \[0, 7\) sorts before fold 0 \[0, 6\)/],
		["PARTIAL_OVERLAP", (l) => (l.end[3] = 7), 3, 2, /fold 3 \[3, 7\) partially overlaps fold 2 \[2, 6\)/],
		["OUTSIDE_PARENT", (l) => (l.parent[3] = 1), 3, 1, /fold 3 \[3, 5\) is not inside its parent, fold 1 \[0, 2\)/],
		["OUTSIDE_PARENT", (l) => (l.parent[5] = 0), 5, 0, /fold 5 \[9, 10\) is not inside its parent, fold 0/],
		[
			"SIBLING_OVERLAP",
			(l) => (l.parent[3] = 0),
			3,
			2,
			/fold 3 \[3, 5\) lies inside fold 2 \[2, 6\), another child of its parent fold 0/,
		],
		[
			"SIBLING_OVERLAP",
			(l) => {
				l.parent[5] = -1;
				l.depth[5] = 0;
			},
			5,
			4,
			/fold 5 \[9, 10\) lies inside fold 4 \[8, 12\), another root/,
		],
		["DEPTH", (l) => (l.depth[3] = 1), 3, 2, /fold 3 has depth 1, expected 2 \(its parent fold 2 has depth 1\)/],
		["DEPTH", (l) => (l.depth[4] = 1), 4, -1, /fold 4 has depth 1, expected 0 \(a root\)/],
	];
	for (const [code, change, index, other, message] of cases) {
		it(`${code} at fold ${index}`, () => {
			const v = failing(change);
			expect(v).toMatchObject({ code, codeNumber: LATTICE_CODES[code], index, other });
			expect(v.message).toMatch(message);
		});
	}

	it("reports the first failing fold in array order, not the worst one", () => {
		// Fold 3 is out of order AND fold 5 is empty: fold 3 comes first.
		const v = failing((l) => {
			l.start[3] = 1;
			l.end[5] = 9;
		});
		expect(v).toMatchObject({ code: "ORDER", index: 3, other: 2 });
	});

	it("the core's exported code constants match the binding's table", () => {
		const x = core.instance.exports as unknown as Record<string, WebAssembly.Global>;
		for (const [name, value] of Object.entries(LATTICE_CODES)) expect(x[`LATTICE_${name}`].value).toBe(value);
	});

	it("the core's self-check passes", () => {
		expect(core.selfCheck()).toMatchObject({ ok: true });
	});
});

describe("large lattices (several core chunks, memory growth)", () => {
	it("agrees on a 50k-fold lattice and on a violation far past the first chunk", () => {
		const l = randomLattice(rng(7), 400_000, 50_000, { nestChance: 0.7, maxLength: 200 });
		expect(l.start.length).toBeGreaterThan(10_000);
		expect(agree(l).code).toBe(LATTICE_CODES.OK);
		const at = l.start.length - 3;
		const broken = cloneLattice(l);
		broken.depth[at] += 1;
		expect(agree(broken)).toEqual({ code: LATTICE_CODES.DEPTH, index: at, other: broken.parent[at] });
	});

	it("a 5000-deep chain (past the core's 1024-level fast stack), then shallow folds again", () => {
		const n = 5000;
		const l: LatticeColumns = { start: [], end: [], parent: [], depth: [], leafCount: 2 * n + 20 };
		for (let i = 0; i < n; i++) {
			l.start.push(i);
			l.end.push(2 * n - i);
			l.parent.push(i - 1);
			l.depth.push(i);
		}
		// A root after the chain, with two children and a grandchild.
		const r = n;
		l.start.push(2 * n, 2 * n, 2 * n + 1, 2 * n + 4);
		l.end.push(2 * n + 10, 2 * n + 4, 2 * n + 3, 2 * n + 9);
		l.parent.push(-1, r, r + 1, r);
		l.depth.push(0, 1, 2, 1);
		expect(agree(l).code).toBe(LATTICE_CODES.OK);

		const crossing = cloneLattice(l);
		crossing.end[n - 1] = n + 3; // [n-1, n+3) crosses the end of its parent [n-2, n+2)
		expect(agree(crossing)).toEqual({ code: LATTICE_CODES.PARTIAL_OVERLAP, index: n - 1, other: n - 2 });

		const skipped = cloneLattice(l);
		skipped.parent[3000] = 2998; // fold 2999 lies between: a sibling that contains it
		skipped.depth[3000] = 2999;
		expect(agree(skipped)).toEqual({ code: LATTICE_CODES.SIBLING_OVERLAP, index: 3000, other: 2999 });

		const shallow = cloneLattice(l);
		shallow.parent[r + 3] = r + 1; // [2n+4, 2n+9) is not inside [2n, 2n+4)
		shallow.depth[r + 3] = 2;
		expect(agree(shallow)).toEqual({ code: LATTICE_CODES.OUTSIDE_PARENT, index: r + 3, other: r + 1 });
	});
});

describe("bad input is refused before the core runs", () => {
	const ok = () => cloneLattice(BASE);
	const cases: [string, () => unknown, ErrorConstructor, RegExp][] = [
		["not an object", () => null, TypeError, /needs \{ start, end, parent, depth, leafCount \}, got null/],
		[
			"a Float64Array column",
			() => ({ ...ok(), end: new Float64Array(6) }),
			TypeError,
			/lattice\.end must be an Int32Array or an array of integers, got an object \(\[object Float64Array\]\)/,
		],
		["a missing column", () => ({ ...ok(), depth: undefined }), TypeError, /lattice\.depth must be/],
		[
			"mismatched lengths",
			() => ({ ...ok(), parent: [-1] }),
			RangeError,
			/lattice\.parent has 1 items, lattice\.start has 6/,
		],
		[
			"a fraction",
			() => ({ ...ok(), end: [6, 2, 6.5, 5, 12, 10] }),
			TypeError,
			/lattice\.end\[2\] must be an integer, got 6\.5/,
		],
		[
			"a string",
			() => ({ ...ok(), start: [0, "0", 2, 3, 8, 9] }),
			TypeError,
			/lattice\.start\[1\] must be an integer, got "0"/,
		],
		[
			"NaN",
			() => ({ ...ok(), depth: [0, 1, Number.NaN, 2, 0, 1] }),
			TypeError,
			/lattice\.depth\[2\] must be an integer, got NaN/,
		],
		[
			"beyond i32",
			() => ({ ...ok(), end: [6, 2, 6, 5, 2 ** 31, 10] }),
			RangeError,
			/lattice\.end\[4\] = 2147483648 is outside/,
		],
		[
			"negative leafCount",
			() => ({ ...ok(), leafCount: -1 }),
			RangeError,
			/lattice\.leafCount must be an integer.*got -1/,
		],
		["fractional leafCount", () => ({ ...ok(), leafCount: 1.5 }), RangeError, /lattice\.leafCount .*got 1\.5/],
		["missing leafCount", () => ({ ...ok(), leafCount: undefined }), RangeError, /lattice\.leafCount .*got undefined/],
	];
	for (const [what, input, type, message] of cases) {
		it(what, () => {
			expect(() => core.validateLattice(input() as LatticeInput)).toThrow(type);
			expect(() => core.validateLattice(input() as LatticeInput)).toThrow(message);
			expect(core.validateLattice(BASE)).toEqual({ ok: true }); // nothing left behind
		});
	}
});
