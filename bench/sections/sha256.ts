// Hashing: the core's Wasm batch and Node entry against node:crypto, hash-wasm and
// @chainsafe/as-sha256, on 10k x ~2 KB mixed strings, 10k x 64 B digest pairs, one 1 MB span.
import { createHash, hash, randomBytes } from "node:crypto";
import { digest as asDigest, digest64 as asDigest64 } from "@chainsafe/as-sha256";
import { createSHA256 } from "hash-wasm";
import type { PiFoldCore } from "../../bindings/index.ts";
import { mixedStrings } from "../lib/corpus.ts";
import { type GroupResult, ratio, runGroup, type Target, target } from "../lib/harness.ts";

export async function benchSha256(
	wasm: PiFoldCore,
	node: PiFoldCore,
): Promise<{ groups: GroupResult[]; targets: Target[] }> {
	const hw = await createSHA256();
	const out = new Uint8Array(10_000 * 32);
	/** The batch's contestants every input shape has: the core (both entries), node:crypto, hash-wasm. */
	const batchContestants = (spans: readonly (string | Uint8Array)[]) => [
		{ name: "core wasm hashSpansInto", fn: () => wasm.hashSpansInto(spans, out) },
		{ name: "core node entry hashSpansInto", fn: () => node.hashSpansInto(spans, out) },
		{
			name: "node:crypto createHash",
			fn: () => {
				for (const s of spans) createHash("sha256").update(s).digest();
			},
		},
		{
			name: "node:crypto hash()",
			fn: () => {
				for (const s of spans) hash("sha256", s, "buffer");
			},
		},
		{
			name: "hash-wasm",
			fn: () => {
				for (const s of spans) {
					hw.init();
					hw.update(s);
					hw.digest("binary");
				}
			},
		},
	];
	const enc = new TextEncoder();

	const strings = mixedStrings(10_000, 1536, 2560, 7);
	const bytes2k = strings.reduce((n, s) => n + Buffer.byteLength(s), 0);
	const g2k = await runGroup("hash 10k x ~2 KB mixed strings", bytes2k, [
		...batchContestants(strings),
		{
			name: "@chainsafe/as-sha256",
			fn: () => {
				for (const s of strings) asDigest(enc.encode(s));
			},
		},
	]);

	// Digest combining: 64-byte inputs (two child digests), the fold-identity shape.
	const pairs = randomBytes(10_000 * 64);
	const spans64 = Array.from({ length: 10_000 }, (_, i) => pairs.subarray(64 * i, 64 * i + 64));
	const g64 = await runGroup("hash 10k x 64 B (digest combining)", pairs.length, [
		...batchContestants(spans64),
		{
			name: "@chainsafe/as-sha256 digest64",
			fn: () => {
				for (const s of spans64) asDigest64(s);
			},
		},
	]);

	const big = randomBytes(1 << 20);
	const g1m = await runGroup("hash one 1 MB span", big.length, [
		{ name: "core wasm sha256", fn: () => wasm.sha256(big) },
		{ name: "node:crypto createHash", fn: () => createHash("sha256").update(big).digest() },
		{
			name: "hash-wasm",
			fn: () => {
				hw.init();
				hw.update(big);
				hw.digest("binary");
			},
		},
		{ name: "@chainsafe/as-sha256", fn: () => asDigest(big) },
	]);

	const targets = [
		target("wasm batch vs hash-wasm (10k x 2 KB)", ratio(g2k, "core wasm hashSpansInto", "hash-wasm"), 2.5),
		target(
			"wasm batch vs @chainsafe/as-sha256 (10k x 2 KB)",
			ratio(g2k, "core wasm hashSpansInto", "@chainsafe/as-sha256"),
			4,
		),
		target(
			"wasm digest combining vs node:crypto (10k x 64 B)",
			ratio(g64, "core wasm hashSpansInto", "node:crypto createHash"),
			3,
		),
		target(
			"node entry hashSpans vs node:crypto (10k x 2 KB)",
			ratio(g2k, "core node entry hashSpansInto", "node:crypto createHash"),
			1,
		),
	];
	return { groups: [g2k, g64, g1m], targets };
}
