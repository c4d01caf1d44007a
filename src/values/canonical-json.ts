// Canonical JSON: object keys sorted, so the same data always gives the same text. Pi's messages
// do not keep a stable key order (a re-synthesized or replayed message can list its keys in
// another order than the same message had before), so digests over raw JSON.stringify would
// report rewrites that did not happen. Same value rules as JSON.stringify (it does the work:
// native escaping is the bulk of the cost, and a hand-written serializer measured about 30%
// slower on a 400 KB window).
// Objects whose keys are already in order, most of them, are passed through without a copy.

function sortKeys(_key: string, value: unknown): unknown {
	if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
	const keys = Object.keys(value);
	let sorted = true;
	for (let i = 1; i < keys.length; i++) {
		if (keys[i - 1] > keys[i]) {
			sorted = false;
			break;
		}
	}
	if (sorted) return value;
	// Integer-like keys still enumerate first in numeric order in the copy: the result depends on
	// the key set only, which is all a canonical form needs.
	const copy: Record<string, unknown> = {};
	for (const key of keys.sort()) copy[key] = (value as Record<string, unknown>)[key];
	return copy;
}

/**
 * The canonical JSON text of `value`. Throws TypeError on a cycle or a BigInt, as JSON.stringify
 * does; `undefined` at the top level gives "null" so every message has a text to digest.
 */
export function canonicalJson(value: unknown): string {
	return JSON.stringify(value, sortKeys) ?? "null";
}
