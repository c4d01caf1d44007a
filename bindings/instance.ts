// The loaded core and its scratch memory. Host-neutral: no Node API here.
// Every call lays its inputs and outputs out in the core's one scratch region
// (assembly/scratch.ts), reusing it, so steady-state calls allocate nothing in Wasm.

/** The raw exports of pi-fold-core.wasm (see assembly/index.ts). */
export interface CoreExports {
	memory: WebAssembly.Memory;
	scratch(bytes: number): number;
	coreVersion(): number;
	selfCheck(): number;
	sha256(ptr: number, len: number, out: number): void;
	foldIdentity(ptr: number, count: number, out: number): void;
	sha256Batch(data: number, offsets: number, count: number, out: number): void;
	streamInit(): void;
	streamUpdate(ptr: number, len: number): void;
	streamFinal(out: number): void;
	streamStatePtr(): number;
	[name: string]: unknown;
}

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

const align16 = (n: number) => (n + 15) & ~15;

export class CoreInstance {
	readonly exports: CoreExports;
	#bytes: Uint8Array;

	constructor(exports: CoreExports) {
		this.exports = exports;
		this.#bytes = new Uint8Array(exports.memory.buffer);
	}

	/** A byte view of Wasm memory; refreshed after memory.grow detached the old buffer. */
	get bytes(): Uint8Array {
		if (this.#bytes.buffer !== this.exports.memory.buffer) this.#bytes = new Uint8Array(this.exports.memory.buffer);
		return this.#bytes;
	}

	/** A u32 view of Wasm memory (little-endian, like Wasm). */
	u32(): Uint32Array {
		return new Uint32Array(this.exports.memory.buffer);
	}

	/** Ensure `bytes` of scratch and return its start address. */
	reserve(bytes: number): number {
		if (!Number.isSafeInteger(bytes) || bytes < 0 || bytes > 0xffff_0000) {
			throw new RangeError(`pi-fold core: cannot reserve ${bytes} bytes of scratch (limit 4 GiB)`);
		}
		const base = this.exports.scratch(bytes) >>> 0;
		if (base === 0) throw new RangeError(`pi-fold core: Wasm memory cannot grow to ${bytes} bytes of scratch`);
		return base;
	}

	/** Copy or UTF-8-encode one span to `at`, growing scratch as needed; returns bytes written. */
	writeSpan(span: Span, at: number, base: number): number {
		if (typeof span !== "string") {
			this.reserve(at - base + span.byteLength);
			this.bytes.set(span, at);
			return span.byteLength;
		}
		// UTF-8 never needs more than 3 bytes per UTF-16 code unit.
		this.reserve(at - base + span.length * 3);
		return encoder.encodeInto(span, this.bytes.subarray(at)).written;
	}

	/**
	 * Lay out `spans` for a batch call: [offsets | out | data]. Strings are encoded straight
	 * into Wasm memory with encodeInto; nothing is allocated per span.
	 */
	packSpans(spans: readonly Span[], outBytes: number): PackedSpans {
		const count = spans.length;
		const base = this.reserve(0);
		const offsets = base;
		const out = base + align16((count + 1) * 4);
		const data = out + align16(count * outBytes);
		let used = 0;
		let offsetView = this.u32();
		for (let i = 0; i < count; i++) {
			const span = spans[i];
			if (typeof span !== "string" && !(span instanceof Uint8Array)) {
				throw new TypeError(`pi-fold core: span ${i} is ${describe(span)}, expected a string or Uint8Array`);
			}
			const before = this.exports.memory.buffer;
			const written = this.writeSpan(span, data + used, base);
			if (this.exports.memory.buffer !== before) offsetView = this.u32();
			offsetView[(offsets >>> 2) + i] = used;
			used += written;
			if (used > 0xffff_0000) throw new RangeError("pi-fold core: a batch is limited to 4 GiB of span bytes");
		}
		this.reserve(data - base + used);
		this.u32()[(offsets >>> 2) + count] = used;
		return { offsets, out, data, count };
	}

	/** Write one span at the start of scratch, leaving `tailBytes` after it; returns [ptr, len]. */
	packOne(span: Span, tailBytes: number): [number, number] {
		if (typeof span !== "string" && !(span instanceof Uint8Array)) {
			throw new TypeError(`pi-fold core: expected a string or Uint8Array, got ${describe(span)}`);
		}
		const base = this.reserve(tailBytes);
		const len = this.writeSpan(span, base + tailBytes, base);
		return [base + tailBytes, len];
	}
}

export function describe(v: unknown): string {
	if (v === null) return "null";
	if (Array.isArray(v)) return "an array";
	return typeof v === "object" ? `an object (${Object.prototype.toString.call(v)})` : `a ${typeof v}`;
}
