// Host-side checks of a loaded pi-fold core, run unchanged in Node, in a Chromium page and in
// workerd. No imports and no host API beyond the ECMAScript globals (TextEncoder included), so a
// host can load this file as it is. Inputs are generated, never random, so every host sees the same
// bytes and the results can be compared with deep equality.

/** A xorshift32 generator: the same sequence in every JS engine. */
export function xorshift32(seed) {
	let x = seed >>> 0 || 0x9e3779b9;
	return () => {
		x ^= x << 13;
		x ^= x >>> 17;
		x ^= x << 5;
		x >>>= 0;
		return x;
	};
}

export function xorshiftBytes(n, seed) {
	const next = xorshift32(seed);
	const out = new Uint8Array(n);
	for (let i = 0; i < n; i++) out[i] = next() & 0xff;
	return out;
}

const byName = (cases, name) => cases.find(([n]) => n === name)[1];

/** One-shot SHA-256 inputs: [name, span]. The edges are the SHA-256 padding boundaries. */
export function sha256Cases() {
	const cases = [
		["empty-string", ""],
		["empty-bytes", new Uint8Array(0)],
		["abc", "abc"],
	];
	// 55 bytes is the most that fits one block with its padding; 56..63 spill the length into a second.
	for (const n of [55, 56, 63, 64, 65, 119, 120, 128]) {
		cases.push([`bytes-${n}`, xorshiftBytes(n, n)]);
		cases.push([`ascii-${n}`, "a".repeat(n)]);
	}
	cases.push(["xorshift-1MiB", xorshiftBytes(1 << 20, 0xc0ffee)]);
	cases.push(["astral", "fold 😀 𝄞 𐍈 ünïcödé 日本語"]);
	cases.push(["astral-long", "😀".repeat(10_000)]);
	// A lone surrogate has no UTF-8 form; TextEncoder (and node:crypto) encode it as U+FFFD.
	cases.push(["lone-high-surrogate", "a\uD800b"]);
	cases.push(["lone-low-surrogate", "\uDC00"]);
	cases.push(["trailing-high-surrogate", "x\uD83D"]);
	return cases;
}

/** Batches for hashSpans: none, one, and 1000 spans of mixed kinds and sizes (0 B to ~2 KB). */
export function spanBatches() {
	const next = xorshift32(1000);
	const mixed = [];
	for (let i = 0; i < 1000; i++) {
		const r = next();
		// Sizes straddle 512, where the Node entry switches from Wasm to node:crypto.
		const size = r % 7 === 0 ? 0 : (r >>> 3) % 2048;
		if (i % 3 === 0) mixed.push(xorshiftBytes(size, r));
		else if (i % 3 === 1) mixed.push(`span ${i} `.padEnd(size, "x"));
		else mixed.push(`${i} 😀 ü `.repeat(1 + (size >>> 4)));
	}
	return [
		["none", []],
		["one", ["abc"]],
		["mixed-1000", mixed],
	];
}

/** Folds: the children are spans, hashed first; a fold's identity is SHA-256 over their digests in order. */
export function foldCases() {
	const batch = byName(spanBatches(), "mixed-1000");
	return [
		["one-child", ["abc"]],
		["three-children", ["", "abc", "x\uD83D"]],
		["thousand-children", batch],
	];
}

/** Streaming inputs: [name, pieces]; a piece may split a surrogate pair, which encodes each half on its own. */
export function streamCases() {
	const big = xorshiftBytes(1 << 20, 0xc0ffee);
	const cuts = [0, 1, 64, 127, 191, 1000, 65_536, 65_537, big.length];
	const bigPieces = cuts.slice(1).map((end, i) => big.subarray(cuts[i], end));
	return [
		["no-pieces", []],
		["empty-pieces", ["", new Uint8Array(0), ""]],
		["1MiB-in-pieces", bigPieces],
		["mixed-pieces", ["ab", "c", xorshiftBytes(63, 9), "😀 ü", xorshiftBytes(129, 10), "end"]],
		["split-surrogate-pair", ["x\uD83D", "\uDE00y"]],
	];
}

/** Streams updated in turns (round robin), each expected to equal SHA-256 of its own pieces. */
export function interleavedStreams() {
	const pieces = byName(streamCases(), "mixed-pieces");
	return [
		["interleaved/a", pieces],
		["interleaved/b", pieces.flatMap((p) => ["b:", p])],
		["interleaved/c", ["c"]],
	];
}

/**
 * Lattices for validateLattice: folds over leaves [0, leafCount), in pre-order, each
 * [start, end (exclusive), parent (-1 at the top), depth]. "valid-*" must pass, "invalid-*" must not.
 */
export function latticeCases() {
	const L = (leafCount, folds) => ({
		start: folds.map((f) => f[0]),
		end: folds.map((f) => f[1]),
		parent: folds.map((f) => f[2]),
		depth: folds.map((f) => f[3]),
		leafCount,
	});
	const table = {
		"valid-no-folds": [],
		"valid-one-fold": [[2, 5, -1, 0]],
		"valid-siblings": [
			[0, 2, -1, 0],
			[3, 5, -1, 0],
		],
		"valid-nested": [
			[0, 7, -1, 0],
			[0, 2, 0, 1],
			[3, 5, 0, 1],
			[3, 4, 2, 2],
		],
		"invalid-empty-span": [[5, 5, -1, 0]],
		"invalid-inverted": [[5, 2, -1, 0]],
		"invalid-out-of-range": [[3, 20, -1, 0]],
		"invalid-parent-index": [
			[0, 6, -1, 0],
			[1, 3, 7, 1],
		],
		"invalid-duplicate": [
			[0, 4, -1, 0],
			[0, 4, 0, 1],
		],
		"invalid-order": [
			[3, 5, -1, 0],
			[0, 2, -1, 0],
		],
		"invalid-partial-overlap": [
			[0, 4, -1, 0],
			[2, 6, -1, 0],
		],
		"invalid-outside-parent": [
			[0, 2, -1, 0],
			[3, 5, 0, 1],
		],
		"invalid-sibling-overlap": [
			[0, 6, -1, 0],
			[1, 5, 0, 1],
			[2, 3, 0, 1],
		],
		"invalid-depth": [
			[0, 6, -1, 0],
			[1, 3, 0, 2],
		],
	};
	const cases = Object.entries(table).map(([name, folds]) => [name, L(10, folds)]);
	// 6000 folds, more than one validation chunk in the core: pairs of a leaf fold inside a two-leaf root.
	const wide = [];
	for (let i = 0; i < 3000; i++) wide.push([2 * i, 2 * i + 2, -1, 0], [2 * i, 2 * i + 1, 2 * i, 1]);
	cases.push(["valid-6000-folds", L(6000, wide)]);
	const broken = wide.map((f) => [...f]);
	broken[4999][3] = 0; // a child claiming to be a root, deep in a later chunk
	cases.push(["invalid-6000-folds-bad-depth", L(6000, broken)]);
	cases.push(["invalid-lengths-differ", { start: [0, 3], end: [2], parent: [-1, -1], depth: [0, 0], leafCount: 10 }]);
	return cases;
}

export function tokenSpans() {
	return [
		["empty", ""],
		["hello", "hello world"],
		["code", "export function add(a: number, b: number): number {\n\treturn a + b;\n}\n"],
		["json", JSON.stringify({ role: "toolResult", content: [{ type: "text", text: "ok" }], n: 12345 })],
		["cjk", "日本語のテキストと中文文本"],
		["emoji", "😀 🎉 👍🏽 fold"],
		["lone-surrogate", "a\uD800b"],
		["long", "The quick brown fox jumps over the lazy dog. ".repeat(2_000)],
		["bytes", xorshiftBytes(300, 7)],
	];
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
function hex(bytes, start = 0, end = bytes.byteLength) {
	let s = "";
	for (let i = start; i < end; i++) s += HEX[bytes[i]];
	return s;
}

/** Packed 32-byte digests as hex strings; a short or ragged output shows up as a mismatch. */
export function digestList(packed) {
	const out = [];
	for (let i = 0; i < packed.byteLength; i += 32) out.push(hex(packed, i, Math.min(i + 32, packed.byteLength)));
	return out;
}

/** A thrown error as data, so hosts can be compared on their failures too. */
function attempt(fn) {
	try {
		return fn();
	} catch (err) {
		return { threw: err?.name ?? typeof err, message: err?.message ?? String(err) };
	}
}

function optional(core, name, cases, run) {
	if (typeof core[name] !== "function") return { missing: `core.${name} is not a function` };
	return Object.fromEntries(cases.map(([label, input]) => [label, attempt(() => run(input))]));
}

/**
 * Run every check against `core` (what loadCore returns). The result is plain JSON: the same in
 * every host, and equal to node:crypto for the sha256, hashSpans, foldIdentity and stream sections.
 */
export function runCoreChecks(core) {
	const sha256 = Object.fromEntries(sha256Cases().map(([name, input]) => [name, hex(core.sha256(input))]));
	const hashSpans = Object.fromEntries(spanBatches().map(([name, spans]) => [name, digestList(core.hashSpans(spans))]));
	const foldIdentity = {};
	for (const [name, spans] of foldCases()) {
		const packed = core.hashSpans(spans);
		const children = Array.from({ length: spans.length }, (_, i) => packed.slice(32 * i, 32 * i + 32));
		foldIdentity[`${name}/array`] = hex(core.foldIdentity(children));
		foldIdentity[`${name}/packed`] = hex(core.foldIdentity(packed));
	}
	const stream = {};
	for (const [name, pieces] of streamCases()) {
		const s = core.createSha256();
		for (const piece of pieces) s.update(piece);
		stream[name] = hex(s.digest());
	}
	// Streams taking turns on the one core context: each must save and restore its own state.
	const open = interleavedStreams().map(([name, pieces]) => ({ name, pieces, s: core.createSha256() }));
	for (let i = 0; open.some((o) => i < o.pieces.length); i++) {
		for (const o of open) if (i < o.pieces.length) o.s.update(o.pieces[i]);
	}
	for (const o of open) stream[o.name] = hex(o.s.digest());

	const result = {
		version: core.version,
		selfCheck: core.selfCheck(),
		sha256,
		hashSpans,
		foldIdentity,
		stream,
		// Misuse must fail the same way everywhere.
		errors: {
			"foldIdentity-no-children": attempt(() => core.foldIdentity([])),
			"foldIdentity-ragged": attempt(() => core.foldIdentity(new Uint8Array(33))),
			"sha256-number": attempt(() => core.sha256(42)),
			"hashSpans-bad-span": attempt(() => core.hashSpans(["ok", null])),
			"stream-after-digest": attempt(() => {
				const s = core.createSha256();
				s.digest();
				return s.update("late");
			}),
		},
		lattice: optional(core, "validateLattice", latticeCases(), (input) => core.validateLattice(input)),
		tokens: optional(core, "estimateTokens", tokenSpans(), (text) => core.estimateTokens(text)),
		tokensBatch: optional(core, "estimateTokensBatch", [["all", tokenSpans().map(([, text]) => text)]], (texts) =>
			Array.from(core.estimateTokensBatch(texts)),
		),
	};
	// Drop undefined fields and normalise numbers the way every transport (page.evaluate, Response.json) will.
	return JSON.parse(JSON.stringify(result));
}
