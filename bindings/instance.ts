// The loaded core and its scratch memory. Host-neutral: no Node API here.
// Every call lays its inputs and outputs out in the core's one scratch region
// (assembly/scratch.ts), reusing it, so steady-state calls allocate nothing in Wasm.
import type { LatticeExports } from "./lattice.ts";
import type { SelectExports } from "./select.ts";
import type { Sha256Exports } from "./sha256.ts";
import type { TokenExports } from "./tokens.ts";

/** Exports every part of the core shares (assembly/index.ts, assembly/scratch.ts). */
export interface BaseExports {
	memory: WebAssembly.Memory;
	scratch(bytes: number): number;
	coreVersion(): number;
	selfCheck(): number;
}

/** The raw exports of pi-fold-core.wasm: each binding module declares the slice it calls. */
export type CoreExports = BaseExports & Sha256Exports & TokenExports & LatticeExports & SelectExports;

/** A span of transcript text: a JS string (encoded as UTF-8) or raw bytes. */
export type Span = string | Uint8Array;

const encoder = new TextEncoder();

/** Where packSpans put things, as byte addresses in Wasm memory. */
export interface PackedSpans {
	/** count + 1 u32 offsets, relative to `data`. */
	offsets: number;
	/** count * outBytes bytes reserved for per-span results. */
	out: number;
	data: number;
	count: number;
}

export const align16 = (n: number) => (n + 15) & ~15;

export class CoreInstance {
	readonly exports: CoreExports;
	/** Start of the scratch region; fixed for the life of the instance. */
	readonly base: number;
	#buffer: ArrayBuffer;
	#u8: Uint8Array;
	#u32: Uint32Array;
	#i32: Int32Array;

	constructor(exports: CoreExports) {
		this.exports = exports;
		this.base = exports.scratch(0) >>> 0;
		this.#buffer = exports.memory.buffer;
		this.#u8 = new Uint8Array(this.#buffer);
		this.#u32 = new Uint32Array(this.#buffer);
		this.#i32 = new Int32Array(this.#buffer);
	}

	// memory.grow detaches the old buffer: views are renewed only when that happened.
	#fresh(): void {
		if (this.#buffer === this.exports.memory.buffer) return;
		this.#buffer = this.exports.memory.buffer;
		this.#u8 = new Uint8Array(this.#buffer);
		this.#u32 = new Uint32Array(this.#buffer);
		this.#i32 = new Int32Array(this.#buffer);
	}

	/** Byte view of Wasm memory. */
	get u8(): Uint8Array {
		this.#fresh();
		return this.#u8;
	}

	/** u32 view of Wasm memory (little-endian, like Wasm). */
	get u32(): Uint32Array {
		this.#fresh();
		return this.#u32;
	}

	/** i32 view of Wasm memory. */
	get i32(): Int32Array {
		this.#fresh();
		return this.#i32;
	}

	/** Ensure `bytes` of scratch and return its start address. */
	reserve(bytes: number): number {
		if (this.base + bytes <= this.#buffer.byteLength && this.#buffer === this.exports.memory.buffer) return this.base;
		if (!Number.isSafeInteger(bytes) || bytes < 0 || bytes > 0xffff_0000) {
			throw new RangeError(`pi-fold core: cannot reserve ${bytes} bytes of scratch (limit 4 GiB)`);
		}
		// Grow geometrically so a batch of many spans grows memory a few times, not per span.
		const want = Math.min(0xffff_0000, Math.max(bytes, 2 * (this.exports.memory.buffer.byteLength - this.base)));
		if (this.exports.scratch(want) >>> 0 === 0 && this.exports.scratch(bytes) >>> 0 === 0) {
			throw new RangeError(`pi-fold core: Wasm memory cannot grow to ${bytes} bytes of scratch`);
		}
		this.#fresh();
		return this.base;
	}

	/** Copy or UTF-8-encode one span to `at`, growing scratch as needed; returns bytes written. */
	writeSpan(span: Span, at: number): number {
		if (typeof span !== "string") {
			this.reserve(at - this.base + span.byteLength);
			this.#u8.set(span, at);
			return span.byteLength;
		}
		// UTF-8 never needs more than 3 bytes per UTF-16 code unit. encodeInto has no offset
		// parameter, so each string costs one view object; no buffer is allocated.
		this.reserve(at - this.base + span.length * 3);
		return encoder.encodeInto(span, this.#u8.subarray(at)).written;
	}

	/**
	 * Lay out `spans` for a batch call: [offsets | out | data]. Strings are encoded straight
	 * into Wasm memory with encodeInto.
	 */
	packSpans(spans: readonly Span[], outBytes: number): PackedSpans {
		const count = spans.length;
		const offsets = this.reserve(align16((count + 1) * 4) + align16(count * outBytes));
		const out = offsets + align16((count + 1) * 4);
		const data = out + align16(count * outBytes);
		const slot = offsets >>> 2;
		let used = 0;
		for (let i = 0; i < count; i++) {
			const span = spans[i];
			if (typeof span !== "string" && !(span instanceof Uint8Array)) {
				throw new TypeError(`pi-fold core: span ${i} is ${describe(span)}, expected a string or Uint8Array`);
			}
			const written = this.writeSpan(span, data + used);
			this.#u32[slot + i] = used;
			used += written;
			if (used > 0xffff_0000) throw new RangeError("pi-fold core: a batch is limited to 4 GiB of span bytes");
		}
		this.u32[slot + count] = used;
		return { offsets, out, data, count };
	}

	/** Write one span at the start of scratch, after `headBytes` for the result; returns [ptr, len]. */
	packOne(span: Span, headBytes: number): [number, number] {
		if (typeof span !== "string" && !(span instanceof Uint8Array)) {
			throw new TypeError(`pi-fold core: expected a string or Uint8Array, got ${describe(span)}`);
		}
		const at = this.reserve(headBytes) + headBytes;
		return [at, this.writeSpan(span, at)];
	}
}

export function describe(v: unknown): string {
	if (v === null) return "null";
	if (Array.isArray(v)) return "an array";
	return typeof v === "object" ? `an object (${Object.prototype.toString.call(v)})` : `a ${typeof v}`;
}
