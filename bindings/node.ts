// Node-only entry: reads the shipped .wasm from disk, and routes large leaf spans to
// node:crypto. On CPUs with SHA extensions node:crypto beats any Wasm for spans of a
// kilobyte or more, while the Wasm batch wins on small spans where node:crypto's per-call
// cost dominates. Digests are identical either way (tests prove it); browsers and edge
// workers use the Wasm path for everything.
import { hash } from "node:crypto";
import { readFileSync } from "node:fs";
import { loadCore, type PiFoldCore, type Span } from "./index.ts";
import { DIGEST_BYTES } from "./sha256.ts";

export * from "./index.ts";

/** The core file shipped in the package. */
export const CORE_WASM_URL = new URL("../wasm/pi-fold-core.wasm", import.meta.url);

/** Spans at least this long (UTF-16 units or bytes) go to node:crypto in the Node entry. */
export const NODE_CRYPTO_MIN_SPAN = 512;

/** Read and instantiate the core from a file, synchronously. */
export function loadCoreFile(path: string | URL = CORE_WASM_URL): PiFoldCore {
	let bytes: Uint8Array;
	try {
		bytes = readFileSync(path);
	} catch (err) {
		throw new Error(`pi-fold core: cannot read ${String(path)}: ${(err as Error).message}`);
	}
	return withNodeCrypto(loadCore(bytes));
}

let shared: PiFoldCore | undefined;

/** The process-wide core, loaded on first use. */
export function nodeCore(): PiFoldCore {
	shared ??= loadCoreFile();
	return shared;
}

function spanSize(s: Span): number {
	return typeof s === "string" ? s.length : s.byteLength;
}

/** Route large spans of hashSpans to node:crypto; small ones stay in one Wasm batch. */
export function withNodeCrypto(core: PiFoldCore): PiFoldCore {
	const wasmInto = core.hashSpansInto;
	const small: Span[] = [];
	const smallIndex: number[] = [];
	let smallOut = new Uint8Array(0);
	const hashSpansInto = (spans: readonly Span[], out: Uint8Array, offset = 0): void => {
		if (
			!Array.isArray(spans) ||
			!(out instanceof Uint8Array) ||
			out.byteLength < offset + spans.length * DIGEST_BYTES
		) {
			wasmInto(spans, out, offset); // let the Wasm path produce the precise error
			return;
		}
		small.length = 0;
		smallIndex.length = 0;
		for (let i = 0; i < spans.length; i++) {
			const s = spans[i];
			if ((typeof s === "string" || s instanceof Uint8Array) && spanSize(s) >= NODE_CRYPTO_MIN_SPAN) {
				out.set(hash("sha256", s, "buffer"), offset + i * DIGEST_BYTES);
			} else {
				small.push(s);
				smallIndex.push(i);
			}
		}
		if (small.length === 0) return;
		if (small.length === spans.length) {
			wasmInto(spans, out, offset);
			return;
		}
		if (smallOut.byteLength < small.length * DIGEST_BYTES) smallOut = new Uint8Array(small.length * DIGEST_BYTES * 2);
		wasmInto(small, smallOut, 0);
		for (let j = 0; j < small.length; j++) {
			out.set(smallOut.subarray(j * DIGEST_BYTES, (j + 1) * DIGEST_BYTES), offset + smallIndex[j] * DIGEST_BYTES);
		}
		small.length = 0; // drop references to caller data
	};
	return {
		...core,
		hashSpansInto,
		hashSpans(spans) {
			const out = new Uint8Array(Array.isArray(spans) ? spans.length * DIGEST_BYTES : 0);
			hashSpansInto(spans, out);
			return out;
		},
	};
}
