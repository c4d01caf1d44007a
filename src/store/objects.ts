// A content-addressed directory: files named by the SHA-256 of their bytes, fanned out by the
// first two hex digits (`<dir>/ab/ab12...`), written once (atomic.ts) and verified on every read.
import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { join, sep } from "node:path";
import { DIGEST_BYTES, type PiFoldCore, type Span, toHex } from "../../bindings/index.ts";
import type { FoldId, HexHash } from "../fold-types.ts";
import { isHexHash } from "../fold-types.ts";
import { type PublishItem, type PublishOutcome, publishAll, publishAllAsync, syncDir } from "./atomic.ts";
import { fsCode, ioError, StoreError, showValue } from "./errors.ts";
import { checkHash } from "./ids.ts";

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

/** What this directory holds, for messages: "object 5e3a... is missing". */
export type ContentKind = "object" | "record";

/** Hash batches are cut at this many bytes so the Wasm scratch memory stays bounded. */
const HASH_BATCH_BYTES = 32 * 1024 * 1024;

const FANOUT = /^[0-9a-f]{2}$/;
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

function toBytes(span: Span, index: number): Uint8Array {
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

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
	return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/** A damaged file set aside: renamed beside its final name (never deleted), then rewritten. */
export interface Quarantined {
	kind: ContentKind;
	hash: HexHash;
	/** Where it was, and the name it now has. */
	file: string;
	movedTo: string;
	/** What was wrong with it. */
	reason: string;
}

/** The suffix of a quarantined file's name: `<hash>.damaged-<ms>-<pid>-<8 hex>`. */
const QUARANTINE_NAME = /^[0-9a-f]{64}\.damaged-\d+-\d+-[0-9a-f]{8}$/;

export function isQuarantineName(name: string): boolean {
	return QUARANTINE_NAME.test(name);
}

/** Counters since the store was opened in this process (for benchmarks and tests). */
export interface ContentStats {
	/** Files this process published (its link created the name). */
	written: number;
	bytesWritten: number;
	/** Puts whose name already existed before we wrote anything (compared byte for byte). */
	alreadyPresent: number;
	/** Puts that lost a race: another writer linked the name between our check and our link. */
	raced: number;
	/** Files read and verified. */
	read: number;
	bytesRead: number;
	/** Time spent hashing (ms) and the bytes hashed: what verification costs beyond I/O. */
	hashMs: number;
	bytesHashed: number;
}

export class ContentStore {
	readonly dir: string;
	readonly kind: ContentKind;
	readonly stats: ContentStats = {
		written: 0,
		bytesWritten: 0,
		alreadyPresent: 0,
		raced: 0,
		read: 0,
		bytesRead: 0,
		hashMs: 0,
		bytesHashed: 0,
	};
	readonly #core: PiFoldCore;

	readonly #field: string;
	/** Told of each damaged file this store set aside (the runtime reports it). */
	onQuarantine: ((q: Quarantined) => void) | undefined;
	/** Every damaged file this store set aside in this process. */
	readonly quarantined: Quarantined[] = [];

	constructor(dir: string, kind: ContentKind, core: PiFoldCore) {
		this.dir = dir;
		this.kind = kind;
		this.#core = core;
		this.#field = `${kind} hash`;
	}

	/** Where `hash` lives (validated first: a bad hash never reaches a path). */
	pathOf(hash: HexHash): string {
		checkHash(hash, this.#field);
		// Plain concatenation: `dir` is already resolved and the hash is 64 hex digits.
		return `${this.dir}${sep}${hash.slice(0, 2)}${sep}${hash}`;
	}

	/** Whether a regular file exists under the final name. Existence only: read() is what verifies. */
	has(hash: HexHash): boolean {
		return this.#nameState(hash) === "file";
	}

	/** What the final name holds: nothing, a regular file, or something else (never followed). */
	#nameState(hash: HexHash): "absent" | "file" | "other" {
		const path = this.pathOf(hash);
		try {
			return lstatSync(path).isFile() ? "file" : "other";
		} catch (err) {
			if (fsCode(err) === "ENOENT") return "absent";
			throw ioError(`cannot stat ${this.kind}`, path, err);
		}
	}

	/**
	 * Set a damaged final file aside: rename it to a quarantine name in the same directory (a
	 * rename moves a symlink itself, never its target), make that durable, and report it. Nothing
	 * is deleted; the caller then publishes the right bytes under the final name.
	 */
	quarantine(hash: HexHash, reason: string): Quarantined {
		const file = this.pathOf(hash);
		const movedTo = `${file}.damaged-${Date.now()}-${process.pid}-${randomBytes(4).toString("hex")}`;
		try {
			renameSync(file, movedTo);
			syncDir(join(this.dir, hash.slice(0, 2)));
		} catch (err) {
			throw ioError(`cannot set aside the damaged ${this.kind} (${reason})`, file, err, { expected: hash });
		}
		const q: Quarantined = { kind: this.kind, hash, file, movedTo, reason };
		this.quarantined.push(q);
		this.onQuarantine?.(q);
		return q;
	}

	/** SHA-256 of each span, hex, in batches (one core call per batch). */
	hashAll(spans: readonly Uint8Array[]): HexHash[] {
		const began = performance.now();
		const out: HexHash[] = [];
		for (let start = 0; start < spans.length; ) {
			let end = start;
			let size = 0;
			while (end < spans.length && (end === start || size + spans[end].byteLength <= HASH_BATCH_BYTES)) {
				size += spans[end].byteLength;
				end++;
			}
			const digests = this.#core.hashSpans(spans.slice(start, end));
			for (let i = 0; i < end - start; i++) out.push(toHex(digests, i * DIGEST_BYTES, (i + 1) * DIGEST_BYTES));
			this.stats.bytesHashed += size;
			start = end;
		}
		this.stats.hashMs += performance.now() - began;
		return out;
	}

	/** Store one span (a string is stored as its UTF-8 bytes); returns its hash. Idempotent. */
	put(span: Span): HexHash {
		return this.putMany([span])[0];
	}

	/**
	 * Store many spans: one hashing batch, then each new file written once; every file is durable
	 * when this returns. A name that already exists is compared byte for byte with what we would
	 * have written; if it differs, the existing file is corrupt and is refused, never replaced.
	 */
	putMany(spans: readonly Span[]): HexHash[] {
		const batch = this.#prepare(spans);
		this.#settle(batch.items, publishAll(batch.items));
		return batch.hashes;
	}

	/**
	 * putMany with the writes' fsyncs run concurrently off the main thread (publishAllAsync): the
	 * same checks, outcomes and errors, and every file is durable when the promise resolves.
	 */
	async putManyAsync(spans: readonly Span[]): Promise<HexHash[]> {
		const batch = this.#prepare(spans);
		this.#settle(batch.items, await publishAllAsync(batch.items));
		return batch.hashes;
	}

	/** Hash the spans and check the names already present; what is left is to be published. */
	#prepare(spans: readonly Span[]): { hashes: HexHash[]; items: PublishItem[] } {
		if (!Array.isArray(spans)) throw new TypeError(`pi-fold store: putMany needs an array, got ${showValue(spans)}`);
		const bytes = spans.map(toBytes);
		const hashes = this.hashAll(bytes);
		const pending = new Map<HexHash, Uint8Array>();
		const seen = new Set<HexHash>();
		for (let i = 0; i < hashes.length; i++) {
			if (seen.has(hashes[i])) continue;
			seen.add(hashes[i]);
			const state = this.#nameState(hashes[i]);
			if (state === "file") {
				const damage = this.#damage(hashes[i], bytes[i]);
				if (damage === undefined) {
					this.stats.alreadyPresent++;
					continue;
				}
				// The bytes in hand hash to the name: a damaged copy is set aside and written again.
				this.quarantine(hashes[i], damage);
			} else if (state === "other") this.quarantine(hashes[i], "not a regular file");
			pending.set(hashes[i], bytes[i]);
		}
		const items = [...pending].map(([hash, b]) => ({ dir: join(this.dir, hash.slice(0, 2)), name: hash, bytes: b }));
		return { hashes, items };
	}

	/** Count what was written; "exists": another writer published the name between our check and our link. */
	#settle(items: readonly PublishItem[], outcomes: readonly PublishOutcome[]): void {
		outcomes.forEach((outcome, i) => {
			if (outcome === "exists") {
				this.#checkExisting(items[i].name, items[i].bytes);
				this.stats.raced++;
			} else {
				this.stats.written++;
				this.stats.bytesWritten += items[i].bytes.byteLength;
			}
		});
	}

	/** What is wrong with the existing final file, measured against the bytes it must hold; undefined if nothing. */
	#damage(hash: HexHash, expected: Uint8Array): string | undefined {
		let found: Uint8Array;
		try {
			found = this.#readRaw(hash, undefined);
		} catch (err) {
			if (err instanceof StoreError && err.code === "NOT_FILE") return "not a regular file";
			throw err;
		}
		if (sameBytes(expected, found)) return undefined;
		const [actual] = this.hashAll([found]);
		return found.byteLength < expected.byteLength
			? `truncated: ${found.byteLength} of ${expected.byteLength} bytes`
			: `corrupt: its bytes hash to ${actual}`;
	}

	#checkExisting(hash: HexHash, expected: Uint8Array): void {
		const found = this.#readRaw(hash, undefined);
		if (sameBytes(expected, found)) return;
		const [actual] = this.hashAll([found]);
		const path = this.pathOf(hash);
		const short = found.byteLength < expected.byteLength;
		throw new StoreError(
			short ? "TRUNCATED" : "MISMATCH",
			`${this.kind} ${hash} already exists but is corrupt: expected sha256 ${hash}, found ${actual}` +
				`${short ? ` (${expected.byteLength} bytes expected, ${found.byteLength} found)` : ""}` +
				`; a stored file is never replaced, repair or move ${path} by hand`,
			{
				expected: hash,
				actual,
				expectedBytes: expected.byteLength,
				actualBytes: found.byteLength,
				file: path,
			},
		);
	}

	/**
	 * The bytes under a final name. Only a regular file is read: a symlink is never followed and a
	 * FIFO or device is never waited on (the open does not block), both refused as NOT_FILE.
	 */
	#readRaw(hash: HexHash, ctx: ReadContext | undefined): Uint8Array {
		const path = this.pathOf(hash);
		const fields = { fold: ctx?.fold, entry: ctx?.entry, expected: hash, file: path };
		const notFile = (what: string) =>
			new StoreError(
				"NOT_FILE",
				`${contextPrefix(ctx)}${this.kind} ${hash} is not a regular file (${what}): ${path}`,
				fields,
			);
		let fd: number;
		try {
			fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
		} catch (err) {
			if (fsCode(err) === "ENOENT") {
				throw new StoreError("MISSING", `${contextPrefix(ctx)}${this.kind} ${hash} is missing (${path})`, fields);
			}
			if (fsCode(err) === "ELOOP") throw notFile("a symlink");
			throw ioError(`${contextPrefix(ctx)}cannot read ${this.kind} ${hash} at`, path, err, fields);
		}
		try {
			const stat = fstatSync(fd);
			if (!stat.isFile()) throw notFile(stat.isDirectory() ? "a directory" : "a special file");
			return readFileSync(fd);
		} catch (err) {
			if (err instanceof StoreError) throw err;
			throw ioError(`${contextPrefix(ctx)}cannot read ${this.kind} ${hash} at`, path, err, fields);
		} finally {
			closeSync(fd);
		}
	}

	/** Read one file, verified against its name (and against `ctx.bytes` when given). */
	read(hash: HexHash, ctx?: ReadContext): Uint8Array {
		return this.readMany([{ hash, ctx }])[0];
	}

	/**
	 * Read many files, each once, hashed in one batch, each verified. The first failure (in
	 * request order: missing files first, as they are found while reading) is thrown.
	 */
	readMany(requests: readonly ReadRequest[]): Uint8Array[] {
		for (const { hash } of requests) checkHash(hash, this.#field);
		const found = requests.map(({ hash, ctx }) => this.#readRaw(hash, ctx));
		const digests = this.hashAll(found);
		for (let i = 0; i < requests.length; i++) this.#verify(requests[i].hash, found[i], digests[i], requests[i].ctx);
		this.stats.read += found.length;
		for (const b of found) this.stats.bytesRead += b.byteLength;
		return found;
	}

	#verify(hash: HexHash, bytes: Uint8Array, actual: HexHash, ctx: ReadContext | undefined): void {
		const want = ctx?.bytes;
		// The common case first: nothing to build for a good read.
		if (actual === hash && (want === undefined || want === bytes.byteLength)) return;
		const fields = {
			fold: ctx?.fold,
			entry: ctx?.entry,
			expected: hash,
			actual,
			expectedBytes: want,
			actualBytes: bytes.byteLength,
			file: join(this.dir, hash.slice(0, 2), hash),
		};
		const prefix = `${contextPrefix(ctx)}${this.kind} ${hash}`;
		if (actual === hash) {
			if (want === undefined || want === bytes.byteLength) return;
			// The bytes are right; the length the record states for them is not.
			throw new StoreError(
				"BAD_RECORD",
				`${prefix} verifies but the record says ${want} bytes and it has ${bytes.byteLength}`,
				fields,
			);
		}
		if (want !== undefined && bytes.byteLength < want) {
			throw new StoreError(
				"TRUNCATED",
				`${prefix} is truncated: expected ${want} bytes, found ${bytes.byteLength} (expected sha256 ${hash}, found ${actual})`,
				fields,
			);
		}
		const lengths =
			want !== undefined && want !== bytes.byteLength ? ` (${want} bytes expected, ${bytes.byteLength} found)` : "";
		throw new StoreError(
			"MISMATCH",
			`${prefix} is corrupt: expected sha256 ${hash}, found ${actual}${lengths}`,
			fields,
		);
	}

	/** Every hash stored under a final name, sorted. Temp files and stray names are ignored. */
	list(): HexHash[] {
		const out: HexHash[] = [];
		for (const fan of this.#readDir(this.dir)) {
			if (!FANOUT.test(fan)) continue;
			for (const name of this.#readDir(join(this.dir, fan))) {
				if (isHexHash(name) && name.startsWith(fan)) out.push(name);
			}
		}
		return out.sort();
	}

	#readDir(dir: string): string[] {
		try {
			return readdirSync(dir);
		} catch (err) {
			if (fsCode(err) === "ENOENT" || fsCode(err) === "ENOTDIR") return [];
			throw ioError(`cannot list ${this.kind}s in`, dir, err);
		}
	}
}
