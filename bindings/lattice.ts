// Lattice validation over the core (assembly/lattice.ts): do these folds nest properly?
import { columnLength, show, writeColumn } from "./columns.ts";
import { type CoreInstance, describe } from "./instance.ts";

/**
 * Violation codes, as numbered by the core. Folds must be in canonical order: pre-order,
 * start ascending and, for equal starts, the longer (outer) fold first. Checks run per fold
 * in array order, in the order listed; the first failure is reported.
 */
export const LATTICE_CODES = {
	OK: 0,
	/** end <= start. */
	EMPTY_SPAN: 1,
	/** start < 0 or end > leafCount. */
	OUT_OF_RANGE: 2,
	/** parent is neither -1 nor the index of an earlier fold (covers self, later and out-of-range indices). */
	BAD_PARENT: 3,
	/** Same span as the previous fold (`other`); in canonical order equal spans are adjacent. */
	DUPLICATE: 4,
	/** Sorts before the previous fold (`other`) in canonical order. */
	ORDER: 5,
	/** Starts inside the innermost open fold (`other`) and ends after it. */
	PARTIAL_OVERLAP: 6,
	/** Not contained in its declared parent (`other`). */
	OUTSIDE_PARENT: 7,
	/**
	 * Lies inside another child of its declared parent, or inside another root (`other`):
	 * the parent is not the innermost fold containing it.
	 */
	SIBLING_OVERLAP: 8,
	/** depth is not parent depth + 1 (0 for a root). */
	DEPTH: 9,
} as const;

export type LatticeCode = Exclude<keyof typeof LATTICE_CODES, "OK">;

const CODE_NAMES = Object.keys(LATTICE_CODES) as (keyof typeof LATTICE_CODES)[];

/** Folds as parallel arrays: span [start, end) over entry positions [0, leafCount). */
export interface LatticeInput {
	start: Int32Array | readonly number[];
	end: Int32Array | readonly number[];
	/** Index of the parent fold, -1 for a root. */
	parent: Int32Array | readonly number[];
	/** 0 for a root, else parent depth + 1. */
	depth: Int32Array | readonly number[];
	leafCount: number;
}

export type LatticeVerdict =
	| { ok: true }
	| {
			ok: false;
			code: LatticeCode;
			codeNumber: number;
			/** The first fold, in array order, at which a check failed. */
			index: number;
			/** The other fold the failure involves (see LATTICE_CODES), or -1. */
			other: number;
			message: string;
	  };

export interface LatticeApi {
	/**
	 * Validate a fold lattice in one O(n) pass. Throws TypeError/RangeError for malformed
	 * input (not arrays, mismatched lengths, non-integers, values outside i32).
	 *
	 * There is no `validateLatticeInto`: with Int32Array input a passing call allocates
	 * nothing but the frozen `{ ok: true }` it shares, and a failing call needs its message
	 * string anyway, so an output parameter would save nothing.
	 */
	validateLattice(input: LatticeInput): LatticeVerdict;
}

/** The core's lattice exports (assembly/lattice.ts). */
export interface LatticeExports {
	validateLattice(start: number, end: number, parent: number, depth: number, count: number, leafCount: number): number;
	latticeViolationIndex(): number;
	latticeViolationOther(): number;
}

const FIELDS = ["start", "end", "parent", "depth"] as const;
const NAMES = FIELDS.map((f) => `lattice.${f}`);
const OK: LatticeVerdict = Object.freeze({ ok: true });

function span(input: LatticeInput, i: number): string {
	return `[${input.start[i]}, ${input.end[i]})`;
}

function explain(input: LatticeInput, code: LatticeCode, i: number, o: number): string {
	const fold = `fold ${i} ${span(input, i)}`;
	const other = `fold ${o} ${span(input, o)}`;
	const p = input.parent[i];
	switch (code) {
		case "EMPTY_SPAN":
			return `${fold} is empty: a fold covers at least one entry`;
		case "OUT_OF_RANGE":
			return `${fold} reaches outside the entries [0, ${input.leafCount})`;
		case "BAD_PARENT": {
			const what = p === i ? "itself" : p > i && p < input.start.length ? "a later fold" : "no fold";
			const allowed =
				i === 0 ? "fold 0 can only be a root (-1)" : `a parent is -1 (root) or an earlier fold, 0..${i - 1}`;
			return `fold ${i} names parent ${p}, ${what}: ${allowed}`;
		}
		case "DUPLICATE":
			return `${fold} has the same span as fold ${o}`;
		case "ORDER":
			return `${fold} sorts before ${other}: folds go by start ascending, the longer first on equal starts`;
		case "PARTIAL_OVERLAP":
			return `${fold} partially overlaps ${other}: it starts inside it and ends after it`;
		case "OUTSIDE_PARENT":
			return `${fold} is not inside its parent, ${other}`;
		case "SIBLING_OVERLAP": {
			const whose = p === -1 ? "another root, while it claims to be a root" : `another child of its parent fold ${p}`;
			return `${fold} lies inside ${other}, ${whose}: its parent must be the innermost fold containing it`;
		}
		case "DEPTH": {
			const why = p === -1 ? "a root" : `its parent fold ${p} has depth ${input.depth[p]}`;
			return `fold ${i} has depth ${input.depth[i]}, expected ${p === -1 ? 0 : input.depth[p] + 1} (${why})`;
		}
	}
}

export function latticeApi(core: CoreInstance): LatticeApi {
	const x = core.exports;
	return {
		validateLattice(input) {
			if (typeof input !== "object" || input === null) {
				throw new TypeError(
					`pi-fold core: validateLattice needs { start, end, parent, depth, leafCount }, got ${describe(input)}`,
				);
			}
			const n = columnLength(NAMES[0], input.start, "i32");
			for (let k = 1; k < FIELDS.length; k++) {
				const len = columnLength(NAMES[k], input[FIELDS[k]], "i32");
				if (len !== n) throw new RangeError(`pi-fold core: ${NAMES[k]} has ${len} items, ${NAMES[0]} has ${n}`);
			}
			const leafCount = input.leafCount;
			if (typeof leafCount !== "number" || !Number.isInteger(leafCount) || leafCount < 0 || leafCount > 0xffff_ffff) {
				throw new RangeError(`pi-fold core: lattice.leafCount must be an integer in [0, 2^32), got ${show(leafCount)}`);
			}
			const base = core.reserve(n * 16);
			const view = core.i32;
			for (let k = 0; k < FIELDS.length; k++) {
				writeColumn(NAMES[k], input[FIELDS[k]], n, "i32", view, (base >>> 2) + k * n);
			}
			const number = x.validateLattice(base, base + 4 * n, base + 8 * n, base + 12 * n, n, leafCount) >>> 0;
			if (number === 0) return OK;
			const code = CODE_NAMES[number] as keyof typeof LATTICE_CODES | undefined;
			if (code === undefined || code === "OK")
				throw new Error(`pi-fold core: validateLattice returned unknown code ${number}`);
			const index = x.latticeViolationIndex();
			const other = x.latticeViolationOther();
			return { ok: false, code, codeNumber: number, index, other, message: explain(input, code, index, other) };
		},
	};
}
