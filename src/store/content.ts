// What the store's content layers share: read contexts and their messages, the counters, span
// bytes, quarantine records, and the check of bytes read against the hash that names them.
import type { Span } from "../../bindings/index.ts";
import type { FoldId, HexHash } from "../fold-types.ts";
import { StoreError, showValue } from "./errors.ts";
import type { PackItem } from "./pack-format.ts";

/** On whose behalf a read happens (for error messages), and the length the caller expects. */
export interface ReadContext {
	/** The fold the read serves (the innermost one for nested folds). */
	fold?: FoldId;
	/** Outermost to innermost fold ids, for messages about nested folds; ends with `fold`. */
	trail?: readonly FoldId[];
	/** The session entry a leaf object holds. */
	entry?: string;
	/** Expected length in bytes (a leaf's `bytes`), so truncation is named as such. */
	bytes?: number;
}

export interface ReadRequest {
	hash: HexHash;
	ctx?: ReadContext;
}

/** What a store of content holds, for messages: "object 5e3a... is missing". */
export type ContentKind = "object" | "record";

/** Counters since the store was opened in this process (for benchmarks and tests). */
export interface ContentStats {
	/** Objects this process published (its write created them). */
	written: number;
	bytesWritten: number;
	/** Puts whose object was already stored before we wrote anything (compared byte for byte). */
	alreadyPresent: number;
	/** Puts that lost a race: another writer published the same between our check and our write. */
	raced: number;
	/** Objects read and verified. */
	read: number;
	bytesRead: number;
	/** Time spent hashing (ms) and the bytes hashed: what verification costs beyond I/O. */
	hashMs: number;
	bytesHashed: number;
}

/** A damaged file set aside: renamed beside its final name (never deleted), then rewritten. */
export interface Quarantined {
	/** What the file held: one object or record (a loose file), or a pack of them. */
	kind: ContentKind | "pack";
	hash: HexHash;
	/** Where it was, and the name it now has. */
	file: string;
	movedTo: string;
	/** What was wrong with it. */
	reason: string;
}

/** A staged write of a store with packs (ContentStore.stage). */
export interface StagedWrite {
	hashes: HexHash[];
	/** The byte length of each span, in order. */
	lengths: number[];
	/** The entries a new pack must hold: those with no good copy yet. */
	items: PackItem[];
	/**
	 * Call once the items are durable: counts the writes (those in `found`, `<kind>:<hash>`, another
	 * writer published first) and sets damaged loose copies aside.
	 */
	done(found?: ReadonlySet<string>): void;
}

const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

/** The message prefix naming the fold(s) and entry a read was for. */
export function contextPrefix(ctx: ReadContext | undefined): string {
	if (!ctx) return "";
	let out = "";
	if (ctx.trail && ctx.trail.length > 0) out += `fold ${ctx.trail.join(" > ")}: `;
	else if (ctx.fold) out += `fold ${ctx.fold}: `;
	if (ctx.entry !== undefined) out += `entry ${ctx.entry}: `;
	return out;
}

/** A span's bytes (a string as UTF-8), refusing what the store cannot hold exactly. */
export function spanBytes(span: Span, index: number): Uint8Array {
	if (span instanceof Uint8Array) return span;
	if (typeof span === "string") {
		// UTF-8 cannot carry a lone surrogate; encoding would silently store U+FFFD instead.
		if (LONE_SURROGATE.test(span)) {
			throw new TypeError(`pi-fold store: span ${index} is not well-formed Unicode (lone surrogate); not stored`);
		}
		return Buffer.from(span, "utf8");
	}
	throw new TypeError(`pi-fold store: span ${index} is ${showValue(span)}, expected a string or Uint8Array`);
}

export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
	return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/**
 * What is wrong with bytes read as `hash` (their digest is `actual`), as the refusal to throw, or
 * undefined when they verify (and have `ctx.bytes` bytes, when the caller states a length).
 */
export function verifyProblem(
	kind: ContentKind,
	hash: HexHash,
	bytes: Uint8Array,
	actual: HexHash,
	ctx: ReadContext | undefined,
	file: string,
): StoreError | undefined {
	const want = ctx?.bytes;
	// The common case first: nothing to build for a good read.
	if (actual === hash && (want === undefined || want === bytes.byteLength)) return undefined;
	const fields = {
		fold: ctx?.fold,
		entry: ctx?.entry,
		expected: hash,
		actual,
		expectedBytes: want,
		actualBytes: bytes.byteLength,
		file,
	};
	const prefix = `${contextPrefix(ctx)}${kind} ${hash}`;
	if (actual === hash) {
		// The bytes are right; the length the record states for them is not.
		return new StoreError(
			"BAD_RECORD",
			`${prefix} verifies but the record says ${want} bytes and it has ${bytes.byteLength}`,
			fields,
		);
	}
	if (want !== undefined && bytes.byteLength < want) {
		return new StoreError(
			"TRUNCATED",
			`${prefix} is truncated: expected ${want} bytes, found ${bytes.byteLength} (expected sha256 ${hash}, found ${actual})`,
			fields,
		);
	}
	const lengths =
		want !== undefined && want !== bytes.byteLength ? ` (${want} bytes expected, ${bytes.byteLength} found)` : "";
	return new StoreError("MISMATCH", `${prefix} is corrupt: expected sha256 ${hash}, found ${actual}${lengths}`, fields);
}
