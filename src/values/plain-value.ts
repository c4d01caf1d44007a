// JSON-plain values (plain objects, arrays, primitives): a private structural copy, and a
// comparison of a live value with such a copy. The per-request memos (the rewrite recorder's
// digests, the occupancy meter's billed texts) reuse what they computed for a message only when
// the message is still the same plain value as the copy kept of it then: a result that is a
// function of the value is then the same, whatever object Pi hands over and whatever happened
// to it in between (comparing object identity would prove nothing: an object can be edited in place).

/** What plainCopy answers for a value it will not copy (not JSON-plain, or nested too deeply). */
export const NOT_PLAIN: unique symbol = Symbol("not plain");

/** Deeper than this is refused (a cycle is refused this way too). */
const MAX_DEPTH = 256;

function isPlainObject(x: object): boolean {
	const proto = Object.getPrototypeOf(x);
	return proto === Object.prototype || proto === null;
}

/**
 * A copy of `value` that shares nothing mutable with it: plain objects (null-prototype in the
 * copy, so an own "__proto__" key stays a key) and arrays are copied, primitives kept (strings are
 * immutable, so sharing them costs nothing and keeps later comparisons to a pointer check when
 * the live value still holds the same strings). NOT_PLAIN for anything else: a function, a
 * symbol, a BigInt, a class instance, a Date, a typed array, or a cycle. Own enumerable string
 * keys only, as JSON and samePlainValue read them.
 */
export function plainCopy(value: unknown): unknown {
	return copyAt(value, 0);
}

function copyAt(value: unknown, depth: number): unknown {
	if (value === null) return null;
	const type = typeof value;
	if (type === "string" || type === "number" || type === "boolean" || type === "undefined") return value;
	if (type !== "object" || depth >= MAX_DEPTH) return NOT_PLAIN;
	if (Array.isArray(value)) {
		const out: unknown[] = []; // pushed, not preallocated: a packed array reads faster than a holey one
		for (let i = 0; i < value.length; i++) {
			const c = copyAt(value[i], depth + 1);
			if (c === NOT_PLAIN) return NOT_PLAIN;
			out.push(c);
		}
		return out;
	}
	if (!isPlainObject(value as object)) return NOT_PLAIN;
	const out: Record<string, unknown> = {};
	for (const key of Object.keys(value as object)) {
		const c = copyAt((value as Record<string, unknown>)[key], depth + 1);
		if (c === NOT_PLAIN) return NOT_PLAIN;
		if (key === "__proto__")
			Object.defineProperty(out, key, { value: c, enumerable: true, writable: true, configurable: true });
		else out[key] = c;
	}
	return out;
}

/**
 * Whether `a` and `b` are the same JSON-plain value: plain objects with the same own enumerable
 * keys and equal values, arrays of equal items, identical primitives. Anything else (a Date, a Map,
 * a function, a class instance, NaN) answers false, so the caller falls back to computing afresh.
 * Equal here implies equal canonical JSON, since canonical JSON is a function of exactly that
 * value (keys sorted). With `ordered`, the keys must also come in the same order: then equal also
 * implies the same result for any reading that iterates keys (Object.values, JSON.stringify).
 */
export function samePlainValue(a: unknown, b: unknown, ordered = false): boolean {
	// The ordered walk reads keys with for-in, which also yields inherited enumerable keys: only
	// when Object.prototype has none (nothing polluted it) is that the own keys, in Object.keys order.
	if (ordered && prototypeClean()) return sameInOrder(a, b);
	return sameAt(a, b, ordered);
}

const EMPTY = {};

/** Whether plain objects inherit no enumerable key (for-in over them yields own keys only). */
function prototypeClean(): boolean {
	for (const _ in EMPTY) return false;
	return true;
}

function sameAt(a: unknown, b: unknown, ordered: boolean): boolean {
	if (a === b) return true;
	if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
	if (Array.isArray(a)) {
		if (!Array.isArray(b) || a.length !== b.length) return false;
		for (let i = 0; i < a.length; i++) if (!sameAt(a[i], b[i], ordered)) return false;
		return true;
	}
	if (Array.isArray(b) || !isPlainObject(a) || !isPlainObject(b)) return false;
	const keys = Object.keys(a);
	const other = Object.keys(b);
	if (keys.length !== other.length) return false;
	for (let i = 0; i < keys.length; i++) {
		const k = keys[i];
		// Keys usually come in the same order: a key in its place is one of b's own without a lookup.
		if (other[i] !== k && (ordered || !Object.hasOwn(b, k))) return false;
		if (!sameAt((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], ordered)) return false;
	}
	return true;
}

/**
 * samePlainValue with `ordered`, walking `a`'s keys with for-in instead of making a key list of
 * them (the rewrite recorder compares a whole window this way on every request).
 */
function sameInOrder(a: unknown, b: unknown): boolean {
	if (a === b) return true;
	if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
	if (Array.isArray(a)) {
		if (!Array.isArray(b) || a.length !== b.length) return false;
		for (let i = 0; i < a.length; i++) if (!sameInOrder(a[i], b[i])) return false;
		return true;
	}
	if (Array.isArray(b) || !isPlainObject(a) || !isPlainObject(b)) return false;
	const keys = Object.keys(b);
	let i = 0;
	for (const k in a) {
		if (k !== keys[i] || !sameInOrder((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
			return false;
		i++;
	}
	return i === keys.length;
}
