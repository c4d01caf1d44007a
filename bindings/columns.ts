// Numeric columns (typed arrays or plain arrays) checked and copied into Wasm memory, for
// the lattice and selection bindings. Typed arrays of the matching type are copied as they
// are (their type already bounds every value); plain arrays are checked element by element
// while copying, and the first bad element gets a TypeError or RangeError naming it.
import { describe } from "./instance.ts";

export type ColumnKind = "i32" | "u32" | "u8";

const TYPED = { i32: Int32Array, u32: Uint32Array, u8: Uint8Array } as const;
const RANGE = { i32: [-0x8000_0000, 0x7fff_ffff], u32: [0, 0xffff_ffff], u8: [0, 0xff] } as const;
const ARTICLE = { i32: "an", u32: "a", u8: "a" } as const;

/** A value for an error message: numbers and strings as written, other things by kind. */
export function show(v: unknown): string {
	if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean" || v === undefined) return String(v);
	if (typeof v === "string") return JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}...` : v);
	return describe(v);
}

/** A column's length, or a TypeError naming it when it is neither the typed array nor an array. */
export function columnLength(what: string, values: unknown, kind: ColumnKind): number {
	if (Array.isArray(values) || values instanceof TYPED[kind]) return (values as ArrayLike<number>).length;
	throw new TypeError(
		`pi-fold core: ${what} must be ${ARTICLE[kind]} ${TYPED[kind].name} or an array of integers, got ${describe(values)}`,
	);
}

/** Throw the precise error for element `i` of a column, which failed the fast range test. */
function reject(what: string, i: number, v: unknown, kind: ColumnKind): never {
	if (typeof v !== "number" || !Number.isInteger(v)) {
		throw new TypeError(`pi-fold core: ${what}[${i}] must be an integer, got ${show(v)}`);
	}
	const [min, max] = RANGE[kind];
	throw new RangeError(`pi-fold core: ${what}[${i}] = ${v} is outside [${min}, ${max}]`);
}

/** Copy `count` values into `view` (a view of the matching type) at element `at`, checking plain arrays. */
export function writeColumn(
	what: string,
	values: ArrayLike<number>,
	count: number,
	kind: ColumnKind,
	view: Int32Array | Uint32Array | Uint8Array,
	at: number,
): void {
	if (values instanceof TYPED[kind]) {
		view.set(values, at);
		return;
	}
	// Check first (one loop per kind keeps each test a single comparison), then one native copy.
	if (kind === "i32") {
		for (let i = 0; i < count; i++) {
			const v = values[i];
			if ((v | 0) !== v) reject(what, i, v, kind);
		}
	} else if (kind === "u32") {
		for (let i = 0; i < count; i++) {
			const v = values[i];
			if (v >>> 0 !== v) reject(what, i, v, kind);
		}
	} else {
		for (let i = 0; i < count; i++) {
			const v = values[i];
			if ((v & 0xff) !== v) reject(what, i, v, kind);
		}
	}
	view.set(values, at);
}
