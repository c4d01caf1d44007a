// The private copies and value comparisons the per-request memos rest on (src/values/plain-value.ts),
// and the rewrite recorder built on them: incremental digests equal digesting every message afresh,
// request after request, whatever changed where (a seeded property run).
import { describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import {
	digestIncrementally,
	digestMessages,
	firstChangedIndex,
	firstChangedRecorded,
	type Recorded,
} from "../src/meter/recorder.ts";
import { NOT_PLAIN, plainCopy, samePlainValue } from "../src/values/plain-value.ts";
import { seededInts } from "./helpers/seeded-ints.ts";

const core = nodeCore();

describe("plainCopy", () => {
	it("copies plain objects and arrays deeply: a later edit of the original never shows in the copy", () => {
		const original = { role: "toolResult", content: [{ type: "text", text: "abc" }], details: { n: 1, list: [1, 2] } };
		const copy = plainCopy(original) as typeof original;
		expect(copy).toEqual(original);
		expect(samePlainValue(original, copy)).toBe(true);
		original.content[0].text = "abd";
		original.details.list.push(3);
		expect(copy.content[0].text).toBe("abc");
		expect(copy.details.list).toEqual([1, 2]);
		expect(samePlainValue(original, copy)).toBe(false);
	});

	it("keeps an own __proto__ key as a key (JSON.parse makes one), and null-prototype objects", () => {
		const parsed = JSON.parse('{"role":"user","__proto__":{"polluted":true}}');
		const copy = plainCopy(parsed) as Record<string, unknown>;
		expect(Object.keys(copy)).toEqual(["role", "__proto__"]);
		expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
		expect(({} as Record<string, unknown>).polluted).toBeUndefined();
		expect(samePlainValue(parsed, copy)).toBe(true);
		const bare = Object.assign(Object.create(null), { a: 1 });
		expect(samePlainValue(bare, plainCopy(bare))).toBe(true);
	});

	it.each([
		["a function", { f: () => 1 }],
		["a symbol", { s: Symbol("x") }],
		["a BigInt", { b: 1n }],
		["a Date", { d: new Date(0) }],
		["a Map", { m: new Map() }],
		["a typed array", { t: new Uint8Array(2) }],
		["a class instance", { c: new (class Point {})() }],
	])("refuses %s (NOT_PLAIN)", (_what, value) => {
		expect(plainCopy(value)).toBe(NOT_PLAIN);
		expect(plainCopy([1, value])).toBe(NOT_PLAIN);
	});

	it("refuses a cycle instead of recursing forever", () => {
		const a: Record<string, unknown> = { x: 1 };
		a.self = a;
		expect(plainCopy(a)).toBe(NOT_PLAIN);
	});
});

describe("samePlainValue", () => {
	it("compares by value; key order matters only when asked", () => {
		expect(samePlainValue({ a: 1, b: [1, { c: "x" }] }, { b: [1, { c: "x" }], a: 1 })).toBe(true);
		expect(samePlainValue({ a: 1, b: 2 }, { b: 2, a: 1 }, true)).toBe(false);
		expect(samePlainValue({ a: 1, b: 2 }, { a: 1, b: 2 }, true)).toBe(true);
		expect(samePlainValue({ a: undefined }, {})).toBe(false);
		expect(samePlainValue({ a: undefined, b: 1 }, { c: undefined, b: 1 })).toBe(false); // same count, other keys
		expect(samePlainValue({ a: 1 }, { a: 1, b: 1 })).toBe(false);
		expect(samePlainValue([1, 2], [1, 2, 3])).toBe(false);
		expect(samePlainValue([1], { 0: 1 })).toBe(false);
		expect(samePlainValue(Number.NaN, Number.NaN)).toBe(false); // re-read rather than assume
		expect(samePlainValue({ d: new Date(0) }, { d: new Date(0) })).toBe(false);
	});

	it("in order, answers the same for every pair as the unordered comparison of the same keys in order", () => {
		const cases: [unknown, unknown][] = [
			[{ a: undefined }, {}],
			[{}, { a: undefined }],
			[
				{ a: undefined, b: 1 },
				{ c: undefined, b: 1 },
			],
			[
				{ a: 1, b: { c: [1, "x"] } },
				{ a: 1, b: { c: [1, "x"] } },
			],
			[
				{ a: 1, b: { c: [1, "x"] } },
				{ a: 1, b: { c: [1, "y"] } },
			],
			[{ a: [1] }, { a: { 0: 1 } }],
			[Object.assign(Object.create(null), { a: 1 }), { a: 1 }],
		];
		for (const [a, b] of cases) expect(samePlainValue(a, b, true)).toBe(samePlainValue(a, b) && samePlainValue(b, a));
	});

	it("in order, an inherited enumerable key (a polluted prototype) is not one of the object's own", () => {
		const proto = Object.prototype as Record<string, unknown>;
		proto.polluted = 1;
		try {
			expect(samePlainValue({ a: 1 }, { a: 1, polluted: 1 }, true)).toBe(false);
			expect(samePlainValue({ a: 1, polluted: 1 }, { a: 1 }, true)).toBe(false);
			expect(samePlainValue({ a: 1 }, { a: 1 }, true)).toBe(true);
		} finally {
			delete proto.polluted;
		}
	});
});

describe("incremental digests (the recorder's prefix comparison on plain copies)", () => {
	const message = (r: (k: number) => number, i: number): unknown => {
		switch (r(5)) {
			case 0:
				return { role: "user", content: `task ${i}`, timestamp: i };
			case 1:
				return {
					role: "assistant",
					content: [{ type: "toolCall", id: `c${i}`, name: "read", arguments: { path: `f${i}`, deep: { n: [i] } } }],
					timestamp: i,
				};
			case 2:
				return JSON.parse(`{"role":"custom","__proto__":{"n":${i}},"content":"x"}`);
			case 3:
				return {
					role: "toolResult",
					content: [{ type: "text", text: "y".repeat(r(5000)) }],
					details: { at: new Date(i) },
				};
			default:
				return { role: "toolResult", content: [{ type: "text", text: `r${i}`.repeat(r(200)) }], isError: false };
		}
	};
	/** A fresh clone (as Pi hands them over), sometimes changed: one character deep, key order, a key more. */
	const resend = (r: (k: number) => number, m: unknown): unknown => {
		const c = JSON.parse(JSON.stringify(m)) as Record<string, unknown>;
		if ((m as { details?: { at?: unknown } }).details?.at instanceof Date) c.details = { at: new Date(0) };
		const change = r(8);
		if (change === 0) return Object.fromEntries(Object.entries(c).reverse()); // same digest
		if (change === 1) c.extra = undefined; // no JSON change: same digest, compared by value differs
		if (change === 2 && Array.isArray(c.content)) {
			const block = c.content[0] as Record<string, unknown>;
			if (typeof block.text === "string" && block.text.length > 0) block.text = `${block.text.slice(1)}!`;
			if (typeof block.arguments === "object") (block.arguments as { deep: { n: number[] } }).deep.n.push(0);
		}
		return c;
	};

	it.each([1, 2, 3, 4, 5, 6])("classify and digest as digesting every message afresh would (seed %i)", (seed) => {
		const r = seededInts(seed);
		let session: unknown[] = [];
		let previous: { recorded: Recorded; digests: Uint8Array } | undefined;
		for (let step = 0; step < 50; step++) {
			const act = r(8);
			if (act < 5) for (let k = 1 + r(3); k > 0; k--) session.push(message(r, step * 10 + k));
			else if (act === 5 && session.length > 0) session[r(session.length)] = message(r, step);
			else if (act === 6) session = session.slice(0, r(session.length + 1));
			const request = session.map((m) => resend(r, m));
			const recorded = digestIncrementally(core, request, previous?.recorded);
			const digests = digestMessages(core, request); // the reference: everything, now
			if (previous) {
				// Digests deferred so far are taken only where the comparison needs them.
				expect(firstChangedRecorded(core, previous.recorded, recorded)).toBe(
					firstChangedIndex(previous.digests, digests),
				);
			}
			// Now and then status asks for all of them: the deferred ones, taken from the copies.
			if (r(4) === 0) expect(Buffer.from(recorded.digests(core)).equals(Buffer.from(digests))).toBe(true);
			previous = { recorded, digests };
		}
	});
});
