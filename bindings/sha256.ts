// SHA-256 over the core: one-shot, streaming, the span batch and fold identities.
import { type CoreInstance, describe, type Span } from "./instance.ts";

export const DIGEST_BYTES = 32;

/** The core's SHA-256 exports (assembly/sha256.ts). */
export interface Sha256Exports {
	sha256(ptr: number, len: number, out: number): void;
	foldIdentity(ptr: number, count: number, out: number): void;
	sha256Batch(data: number, offsets: number, count: number, out: number): void;
	streamInit(): void;
	streamUpdate(ptr: number, len: number): void;
	streamFinal(out: number): void;
	streamStatePtr(): number;
	/** Size of the core's stream context: what a paused stream saves and restores. */
	STREAM_STATE_BYTES: WebAssembly.Global;
}

export interface Sha256Stream {
	update(data: Span): Sha256Stream;
	digest(): Uint8Array;
	digestInto(out: Uint8Array, offset?: number): void;
}

export interface Sha256Api {
	sha256(data: Span): Uint8Array;
	sha256Into(data: Span, out: Uint8Array, offset?: number): void;
	createSha256(): Sha256Stream;
	/** Digests of every span, packed: digest i is bytes [32i, 32i+32). */
	hashSpans(spans: readonly Span[]): Uint8Array;
	hashSpansInto(spans: readonly Span[], out: Uint8Array, offset?: number): void;
	/** SHA-256 over the ordered child digests: a fold's identity. */
	foldIdentity(children: Uint8Array | readonly Uint8Array[]): Uint8Array;
	foldIdentityInto(children: Uint8Array | readonly Uint8Array[], out: Uint8Array, offset?: number): void;
}

export function checkOut(out: Uint8Array, offset: number, bytes: number, what: string): void {
	if (!(out instanceof Uint8Array))
		throw new TypeError(`pi-fold core: ${what} needs a Uint8Array output, got ${describe(out)}`);
	if (!Number.isInteger(offset) || offset < 0 || offset + bytes > out.byteLength) {
		throw new RangeError(
			`pi-fold core: ${what} writes ${bytes} bytes at offset ${offset}, output holds ${out.byteLength}`,
		);
	}
}

export function sha256Api(core: CoreInstance): Sha256Api {
	const x = core.exports;
	const stateBytes = x.STREAM_STATE_BYTES.value >>> 0;
	let active: { save(): void } | undefined; // the stream whose state is in the core now

	function sha256Into(data: Span, out: Uint8Array, offset = 0): void {
		checkOut(out, offset, DIGEST_BYTES, "sha256Into");
		const [ptr, len] = core.packOne(data, DIGEST_BYTES);
		x.sha256(ptr, len, ptr - DIGEST_BYTES);
		out.set(core.u8.subarray(ptr - DIGEST_BYTES, ptr), offset);
	}

	function hashSpansInto(spans: readonly Span[], out: Uint8Array, offset = 0): void {
		if (!Array.isArray(spans))
			throw new TypeError(`pi-fold core: hashSpans needs an array of spans, got ${describe(spans)}`);
		checkOut(out, offset, spans.length * DIGEST_BYTES, "hashSpansInto");
		const p = core.packSpans(spans, DIGEST_BYTES);
		x.sha256Batch(p.data, p.offsets, p.count, p.out);
		out.set(core.u8.subarray(p.out, p.out + p.count * DIGEST_BYTES), offset);
	}

	function foldIdentityInto(children: Uint8Array | readonly Uint8Array[], out: Uint8Array, offset = 0): void {
		checkOut(out, offset, DIGEST_BYTES, "foldIdentityInto");
		let count: number;
		let ptr: number;
		if (children instanceof Uint8Array) {
			if (children.byteLength % DIGEST_BYTES !== 0) {
				throw new RangeError(
					`pi-fold core: foldIdentity takes whole 32-byte digests, got ${children.byteLength} bytes`,
				);
			}
			count = children.byteLength / DIGEST_BYTES;
			[ptr] = core.packOne(children, DIGEST_BYTES);
		} else if (Array.isArray(children)) {
			count = children.length;
			const base = core.reserve(DIGEST_BYTES * (count + 1));
			ptr = base + DIGEST_BYTES;
			const mem = core.u8;
			children.forEach((d, i) => {
				if (!(d instanceof Uint8Array) || d.byteLength !== DIGEST_BYTES) {
					throw new TypeError(`pi-fold core: foldIdentity child ${i} is not a 32-byte digest (${describe(d)})`);
				}
				mem.set(d, ptr + i * DIGEST_BYTES);
			});
		} else {
			throw new TypeError(`pi-fold core: foldIdentity needs digests, got ${describe(children)}`);
		}
		if (count === 0) throw new RangeError("pi-fold core: a fold has at least one child");
		x.foldIdentity(ptr, count, ptr - DIGEST_BYTES);
		out.set(core.u8.subarray(ptr - DIGEST_BYTES, ptr), offset);
	}

	// The core holds one stream context; a stream's state is swapped in only when another
	// stream used the core since, so a single stream never copies state.
	class Stream implements Sha256Stream {
		readonly #saved = new Uint8Array(stateBytes);
		#done = false;

		constructor() {
			active?.save();
			x.streamInit();
			active = this;
		}

		save(): void {
			const at = x.streamStatePtr();
			this.#saved.set(core.u8.subarray(at, at + stateBytes));
		}

		#activate(): void {
			if (this.#done) throw new Error("pi-fold core: this SHA-256 stream is finished; create a new one");
			if (active === this) return;
			active?.save();
			core.u8.set(this.#saved, x.streamStatePtr());
			active = this;
		}

		update(data: Span): this {
			this.#activate();
			const [ptr, len] = core.packOne(data, 0);
			x.streamUpdate(ptr, len);
			return this;
		}

		digest(): Uint8Array {
			const out = new Uint8Array(DIGEST_BYTES);
			this.digestInto(out);
			return out;
		}

		digestInto(out: Uint8Array, offset = 0): void {
			checkOut(out, offset, DIGEST_BYTES, "digestInto");
			this.#activate();
			const ptr = core.reserve(DIGEST_BYTES);
			x.streamFinal(ptr);
			out.set(core.u8.subarray(ptr, ptr + DIGEST_BYTES), offset);
			this.#done = true;
			active = undefined;
		}
	}

	const createSha256 = (): Sha256Stream => new Stream();

	return {
		sha256(data) {
			const out = new Uint8Array(DIGEST_BYTES);
			sha256Into(data, out);
			return out;
		},
		sha256Into,
		createSha256,
		hashSpans(spans) {
			const out = new Uint8Array(Array.isArray(spans) ? spans.length * DIGEST_BYTES : 0);
			hashSpansInto(spans, out);
			return out;
		},
		hashSpansInto,
		foldIdentity(children) {
			const out = new Uint8Array(DIGEST_BYTES);
			foldIdentityInto(children, out);
			return out;
		},
		foldIdentityInto,
	};
}
