// SHA-256 in the Wasm core: FIPS 180-4 known answers, and differential tests against
// node:crypto and hash-wasm over the shapes that break hash implementations.
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import fc from "fast-check";
import { sha256 as hashWasmSha256 } from "hash-wasm";
import { describe, expect, it } from "vitest";
import { loadCore, type Span, toHex } from "../bindings/index.ts";
import { CORE_WASM_URL, loadCoreFile } from "../bindings/node.ts";
import { GENERATED_PATH, generate } from "../scripts/gen-sha256-rounds.ts";

// The pure Wasm path (what browsers and workers run) and the Node entry (routes large spans to node:crypto).
const wasm = loadCore(readFileSync(CORE_WASM_URL));
const node = loadCoreFile();
const encoder = new TextEncoder();

const bytesOf = (s: Span) => (typeof s === "string" ? encoder.encode(s) : s);
const nodeHex = (s: Span) => createHash("sha256").update(bytesOf(s)).digest("hex");
const digests = (packed: Uint8Array) =>
	Array.from({ length: packed.byteLength / 32 }, (_, i) => toHex(packed, 32 * i, 32 * i + 32));

// FIPS 180-4 / NIST CSRC example vectors.
const KNOWN: [string, string][] = [
	["", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
	["abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
	[
		"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
		"248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
	],
	[
		"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
		"cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1",
	],
	["a".repeat(1_000_000), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"],
];

describe("known answers", () => {
	it("one-shot, streamed in pieces, and batched all give the NIST digests", () => {
		for (const [msg, want] of KNOWN) {
			expect(toHex(wasm.sha256(msg))).toBe(want);
			const stream = wasm.createSha256();
			for (let i = 0; i < msg.length; i += 997) stream.update(msg.slice(i, i + 997));
			expect(toHex(stream.digest())).toBe(want);
		}
		expect(digests(wasm.hashSpans(KNOWN.map(([m]) => m)))).toEqual(KNOWN.map(([, d]) => d));
		expect(digests(node.hashSpans(KNOWN.map(([m]) => m)))).toEqual(KNOWN.map(([, d]) => d));
	});

	it("the unrolled rounds in assembly/sha256.gen.ts are what the generator writes now", () => {
		expect(readFileSync(GENERATED_PATH, "utf8")).toBe(generate());
	});

	it("the module's own self-check passes and reports its version", () => {
		expect(wasm.selfCheck()).toEqual({ ok: true, failed: [] });
		expect(wasm.version).toMatch(/^\d+\.\d+\.\d+$/);
	});
});

describe("differential against node:crypto and hash-wasm", () => {
	it("agrees on every padding edge around one and two blocks", async () => {
		for (let n = 0; n <= 200; n++) {
			const input = randomBytes(n);
			const want = nodeHex(input);
			expect(toHex(wasm.sha256(input)), `length ${n}`).toBe(want);
			expect(await hashWasmSha256(input)).toBe(want);
		}
	});

	it("agrees on random inputs, one-shot and streamed at random cut points", async () => {
		await fc.assert(
			fc.asyncProperty(
				fc.uint8Array({ maxLength: 5000 }),
				fc.array(fc.nat(5000), { maxLength: 6 }),
				async (input, cuts) => {
					const want = nodeHex(input);
					expect(toHex(wasm.sha256(input))).toBe(want);
					expect(await hashWasmSha256(input)).toBe(want);
					const points = [...new Set(cuts.map((c) => c % (input.length + 1)))].sort((a, b) => a - b);
					const stream = wasm.createSha256();
					let at = 0;
					for (const p of [...points, input.length]) {
						stream.update(input.subarray(at, p));
						at = p;
					}
					expect(toHex(stream.digest())).toBe(want);
				},
			),
			{ numRuns: 300 },
		);
	});

	it("agrees on multi-megabyte inputs, one-shot and streamed", () => {
		const big = randomBytes(5 * 1024 * 1024 + 13);
		const want = nodeHex(big);
		expect(toHex(wasm.sha256(big))).toBe(want);
		const stream = wasm.createSha256();
		for (let i = 0; i < big.length; i += 1 << 20) stream.update(big.subarray(i, i + (1 << 20)));
		expect(toHex(stream.digest())).toBe(want);
	});

	it("batches of 0, 1 and 1000 mixed spans match per-span node:crypto on both entries", () => {
		const spans: Span[] = Array.from({ length: 1000 }, (_, i) =>
			i % 3 === 0 ? randomBytes((i * 37) % 3000) : "x€😀".repeat((i * 13) % 700),
		);
		for (const batch of [[], spans.slice(0, 1), spans]) {
			const want = batch.map(nodeHex);
			expect(digests(wasm.hashSpans(batch))).toEqual(want);
			expect(digests(node.hashSpans(batch))).toEqual(want);
		}
	});

	it("random batches agree whatever the lane scheduling sees", () => {
		fc.assert(
			fc.property(
				fc.array(fc.oneof(fc.string({ maxLength: 300 }), fc.uint8Array({ maxLength: 1500 })), { maxLength: 40 }),
				(batch) => {
					expect(digests(wasm.hashSpans(batch))).toEqual(batch.map(nodeHex));
				},
			),
			{ numRuns: 200 },
		);
	});

	it("writes into caller buffers at an offset and leaves the rest alone", () => {
		const out = new Uint8Array(32 * 3 + 8).fill(7);
		wasm.hashSpansInto(["a", "b"], out, 8);
		expect(Array.from(out.subarray(0, 8))).toEqual(Array(8).fill(7));
		expect(digests(out.subarray(8, 72))).toEqual(["a", "b"].map(nodeHex));
		expect(Array.from(out.subarray(72))).toEqual(Array(32).fill(7));
		wasm.sha256Into("abc", out, 64);
		expect(toHex(out, 64, 96)).toBe(KNOWN[1][1]);
	});

	it("stays correct after the batch grew Wasm memory (views are refreshed)", () => {
		const before = wasm.instance.exports.memory.buffer.byteLength;
		const huge = [randomBytes(40 * 1024 * 1024)];
		expect(digests(wasm.hashSpans(huge))).toEqual(huge.map(nodeHex));
		expect(wasm.instance.exports.memory.buffer.byteLength).toBeGreaterThan(before);
		expect(toHex(wasm.sha256("abc"))).toBe(KNOWN[1][1]);
	});
});

describe("strings are hashed as their UTF-8 encoding", () => {
	it("astral characters encode as 4 bytes (😀 = f0 9f 98 80)", () => {
		expect(toHex(wasm.sha256("😀"))).toBe(nodeHex(new Uint8Array([0xf0, 0x9f, 0x98, 0x80])));
	});

	it("a lone surrogate encodes as U+FFFD (ef bf bd), as TextEncoder and node:crypto do", () => {
		const replacement = nodeHex(new Uint8Array([0xef, 0xbf, 0xbd]));
		for (const lone of ["\ud800", "\udfff"]) {
			expect(toHex(wasm.sha256(lone))).toBe(replacement);
			expect(digests(node.hashSpans([lone.repeat(600)]))).toEqual([
				createHash("sha256").update(lone.repeat(600), "utf8").digest("hex"),
			]);
			expect(digests(wasm.hashSpans([lone.repeat(600)]))).toEqual(digests(node.hashSpans([lone.repeat(600)])));
		}
	});

	it("random strings give the same digest as node:crypto's UTF-8", () => {
		fc.assert(
			fc.property(fc.string({ unit: "binary", maxLength: 400 }), (s) => {
				expect(toHex(wasm.sha256(s))).toBe(createHash("sha256").update(s, "utf8").digest("hex"));
			}),
			{ numRuns: 300 },
		);
	});
});

describe("fold identity", () => {
	it("is SHA-256 over the ordered child digests, packed or as a list", () => {
		const children = ["leaf a", "leaf b", "leaf c"].map((s) => wasm.sha256(s));
		const concat = new Uint8Array(96);
		for (const [i, d] of children.entries()) concat.set(d, 32 * i);
		const want = nodeHex(concat);
		expect(toHex(wasm.foldIdentity(children))).toBe(want);
		expect(toHex(wasm.foldIdentity(concat))).toBe(want);
		expect(toHex(wasm.foldIdentity([children[1], children[0], children[2]]))).not.toBe(want);
	});

	it("composes: a nested fold's identity is built from its children's identities", () => {
		const leaves = ["e1", "e2", "e3", "e4"].map((s) => wasm.sha256(s));
		const inner = wasm.foldIdentity(leaves.slice(1, 3));
		const outer = wasm.foldIdentity([leaves[0], inner, leaves[3]]);
		const manual = new Uint8Array(96);
		manual.set(leaves[0], 0);
		manual.set(inner, 32);
		manual.set(leaves[3], 64);
		expect(toHex(outer)).toBe(nodeHex(manual));
	});
});

describe("streams", () => {
	it("interleaved streams do not disturb each other or one-shot calls", () => {
		const a = wasm.createSha256();
		const b = wasm.createSha256();
		a.update("hello ");
		b.update("goodbye ");
		expect(toHex(wasm.sha256("abc"))).toBe(KNOWN[1][1]);
		a.update("world");
		b.update("moon");
		expect(toHex(b.digest())).toBe(nodeHex("goodbye moon"));
		expect(toHex(a.digest())).toBe(nodeHex("hello world"));
	});

	it("a finished stream refuses more input", () => {
		const s = wasm.createSha256().update("x");
		s.digest();
		expect(() => s.update("y")).toThrow(/finished/);
	});
});

describe("bad input is refused with a specific error and writes nothing", () => {
	it("rejects non-span values, short outputs and malformed children", () => {
		const out = new Uint8Array(40).fill(9);
		expect(() => wasm.sha256(42 as unknown as string)).toThrow(TypeError);
		expect(() => wasm.hashSpans("abc" as unknown as string[])).toThrow(/array of spans/);
		expect(() => wasm.hashSpans(["ok", {} as unknown as string])).toThrow(/span 1 is an object/);
		expect(() => wasm.hashSpansInto(["a", "b"], out)).toThrow(/writes 64 bytes at offset 0, output holds 40/);
		expect(() => wasm.sha256Into("a", out, 20)).toThrow(RangeError);
		expect(() => wasm.foldIdentity(new Uint8Array(33))).toThrow(/whole 32-byte digests/);
		expect(() => wasm.foldIdentity([])).toThrow(/at least one child/);
		expect(() => wasm.foldIdentity([new Uint8Array(31)])).toThrow(/child 0 is not a 32-byte digest/);
		expect(Array.from(out)).toEqual(Array(40).fill(9));
	});
});
