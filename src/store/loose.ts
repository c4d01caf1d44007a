// The loose layout of one kind of content: one file per object, named by the SHA-256 of its bytes
// and fanned out by the first two hex digits (`<dir>/ab/ab12...`), each published once (atomic.ts).
// Stores written before packs have only these; a store writing the loose layout still makes them.
import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { join, sep } from "node:path";
import type { Span } from "../../bindings/index.ts";
import type { HexHash } from "../fold-types.ts";
import { isHexHash } from "../fold-types.ts";
import { type PublishItem, type PublishOutcome, syncDir } from "./atomic.ts";
import {
	type ContentKind,
	type ContentStats,
	contextPrefix,
	type Quarantined,
	type ReadContext,
	sameBytes,
	spanBytes,
} from "./content.ts";
import { fsCode, ioError, StoreError, showValue } from "./errors.ts";
import { checkHash } from "./ids.ts";

const FANOUT = /^[0-9a-f]{2}$/;

/** The suffix of a quarantined file's name: `<hash>.damaged-<ms>-<pid>-<8 hex>`. */
const QUARANTINE_NAME = /^[0-9a-f]{64}\.damaged-\d+-\d+-[0-9a-f]{8}$/;

export function isQuarantineName(name: string): boolean {
	return QUARANTINE_NAME.test(name);
}

/** What the loose layer needs of the store it belongs to. */
interface LooseOwner {
	readonly stats: ContentStats;
	hashAll(spans: readonly Uint8Array[]): HexHash[];
	/** A damaged file was set aside. */
	report(q: Quarantined): void;
}

export class LooseFiles {
	readonly dir: string;
	readonly kind: ContentKind;
	readonly #owner: LooseOwner;
	readonly #field: string;

	constructor(dir: string, kind: ContentKind, owner: LooseOwner) {
		this.dir = dir;
		this.kind = kind;
		this.#owner = owner;
		this.#field = `${kind} hash`;
	}

	/** Where `hash` lives (validated first: a bad hash never reaches a path). */
	pathOf(hash: HexHash): string {
		checkHash(hash, this.#field);
		// Plain concatenation: `dir` is already resolved and the hash is 64 hex digits.
		return `${this.dir}${sep}${hash.slice(0, 2)}${sep}${hash}`;
	}

	/** What the final name holds: nothing, a regular file, or something else (never followed). */
	nameState(hash: HexHash): "absent" | "file" | "other" {
		const path = this.pathOf(hash);
		try {
			return lstatSync(path).isFile() ? "file" : "other";
		} catch (err) {
			if (fsCode(err) === "ENOENT") return "absent";
			throw ioError(`cannot stat ${this.kind}`, path, err);
		}
	}

	/** The size of the regular file under the final name; "other" for anything else there (never followed). */
	sizeOf(hash: HexHash): number | "other" | undefined {
		const path = this.pathOf(hash);
		try {
			const stat = lstatSync(path);
			return stat.isFile() ? stat.size : "other";
		} catch (err) {
			if (fsCode(err) === "ENOENT") return undefined;
			throw ioError(`cannot stat ${this.kind}`, path, err);
		}
	}

	/**
	 * Set a damaged final file aside: rename it to a quarantine name in the same directory (a
	 * rename moves a symlink itself, never its target), make that durable, and report it. Nothing
	 * is deleted; the caller publishes the right bytes (under the final name, or in a pack).
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
		this.#owner.report(q);
		return q;
	}

	/**
	 * Hash the spans and check the names already present (a damaged one is set aside); returns the
	 * hashes and what is left to publish, one file each.
	 */
	prepare(spans: readonly Span[]): { hashes: HexHash[]; items: PublishItem[] } {
		if (!Array.isArray(spans)) throw new TypeError(`pi-fold store: putMany needs an array, got ${showValue(spans)}`);
		const bytes = spans.map(spanBytes);
		const hashes = this.#owner.hashAll(bytes);
		const pending = new Map<HexHash, Uint8Array>();
		const seen = new Set<HexHash>();
		for (let i = 0; i < hashes.length; i++) {
			if (seen.has(hashes[i])) continue;
			seen.add(hashes[i]);
			const state = this.nameState(hashes[i]);
			if (state === "file") {
				const damage = this.damage(hashes[i], bytes[i]);
				if (damage === undefined) {
					this.#owner.stats.alreadyPresent++;
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
	settle(items: readonly PublishItem[], outcomes: readonly PublishOutcome[]): void {
		const stats = this.#owner.stats;
		outcomes.forEach((outcome, i) => {
			if (outcome === "exists") {
				this.#checkExisting(items[i].name, items[i].bytes);
				stats.raced++;
			} else {
				stats.written++;
				stats.bytesWritten += items[i].bytes.byteLength;
			}
		});
	}

	/** What is wrong with the existing final file, measured against the bytes it must hold; undefined if nothing. */
	damage(hash: HexHash, expected: Uint8Array): string | undefined {
		let found: Uint8Array;
		try {
			found = this.readRaw(hash, undefined);
		} catch (err) {
			if (err instanceof StoreError && err.code === "NOT_FILE") return "not a regular file";
			throw err;
		}
		if (sameBytes(expected, found)) return undefined;
		const [actual] = this.#owner.hashAll([found]);
		return found.byteLength < expected.byteLength
			? `truncated: ${found.byteLength} of ${expected.byteLength} bytes`
			: `corrupt: its bytes hash to ${actual}`;
	}

	#checkExisting(hash: HexHash, expected: Uint8Array): void {
		const found = this.readRaw(hash, undefined);
		if (sameBytes(expected, found)) return;
		const [actual] = this.#owner.hashAll([found]);
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
	 * The bytes under a final name, unverified. Only a regular file is read: a symlink is never
	 * followed and a FIFO or device is never waited on (the open does not block), both NOT_FILE.
	 */
	readRaw(hash: HexHash, ctx: ReadContext | undefined): Uint8Array {
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

	/** Every hash under a final name. Temp files and stray names are ignored. */
	list(): HexHash[] {
		const out: HexHash[] = [];
		for (const fan of this.#readDir(this.dir)) {
			if (!FANOUT.test(fan)) continue;
			for (const name of this.#readDir(join(this.dir, fan))) {
				if (isHexHash(name) && name.startsWith(fan)) out.push(name);
			}
		}
		return out;
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
