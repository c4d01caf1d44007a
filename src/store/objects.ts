// Content-addressed storage of one kind (leaf objects or fold records), verified on every read.
// Two layouts, read alike: loose files (loose.ts: one file per object, what stores were before
// packs) and entries of the store's pack files (packs.ts), where new writes go when the store has
// packs. A hash may have several copies (a pack and a loose file, two packs): a read takes the
// first that verifies.
import { closeSync } from "node:fs";
import { DIGEST_BYTES, type PiFoldCore, type Span, toHex } from "../../bindings/index.ts";
import type { HexHash } from "../fold-types.ts";
import { publishAll, publishAllAsync } from "./atomic.ts";
import {
	type ContentKind,
	type ContentStats,
	contextPrefix,
	type Quarantined,
	type ReadContext,
	type ReadRequest,
	type StagedWrite,
	sameBytes,
	spanBytes,
	verifyProblem,
} from "./content.ts";
import { StoreError, showValue } from "./errors.ts";
import { checkHash } from "./ids.ts";
import { LooseFiles } from "./loose.ts";
import type { PackItem } from "./pack-format.ts";
import { isFile } from "./pack-io.ts";
import type { PackCopy, PackFile, PackSet } from "./packs.ts";

export { isQuarantineName } from "./loose.ts";

/** Hash batches are cut at this many bytes so the Wasm scratch memory stays bounded. */
const HASH_BATCH_BYTES = 32 * 1024 * 1024;

/** The missing-copy refusal, before its words are known. */
const missing = { code: "MISSING" } as const;

/** Of two failures for one read, the one to report: any other failure is worth more than MISSING. */
function worse(known: StoreError | undefined, next: StoreError): StoreError {
	if (known === undefined) return next;
	return known.code === "MISSING" && next.code !== "MISSING" ? next : known;
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
	readonly #loose: LooseFiles;
	/** Told of each damaged file this store set aside (the runtime reports it). */
	onQuarantine: ((q: Quarantined) => void) | undefined;
	/** Every damaged file this store set aside in this process. */
	readonly quarantined: Quarantined[] = [];
	/** The store's pack files: read besides the loose files, and where new writes go. */
	readonly packs: PackSet | undefined;

	constructor(dir: string, kind: ContentKind, core: PiFoldCore, packs?: PackSet) {
		this.dir = dir;
		this.kind = kind;
		this.#core = core;
		this.#field = `${kind} hash`;
		this.packs = packs;
		this.#loose = new LooseFiles(dir, kind, {
			stats: this.stats,
			hashAll: (spans) => this.hashAll(spans),
			report: (q) => {
				this.quarantined.push(q);
				this.onQuarantine?.(q);
			},
		});
	}

	/** Where `hash` lives as a loose file (validated first: a bad hash never reaches a path). */
	pathOf(hash: HexHash): string {
		return this.#loose.pathOf(hash);
	}

	/** Whether a pack or a regular file under the final name holds it. Existence only: read() is what verifies. */
	has(hash: HexHash): boolean {
		checkHash(hash, this.#field);
		return this.packs?.has(this.kind, hash) === true || this.#loose.nameState(hash) === "file";
	}

	/**
	 * A look, without reading any bytes, at whether each item is stored whole: a pack copy of the
	 * stated length in a pack still there and not known damaged, or a regular loose file of that
	 * size. Per item, undefined when it looks whole, else what is wrong. Cheap (an index lookup,
	 * one lstat per pack or loose file), so it catches what is gone, replaced or cut short, not a
	 * flipped byte: every read still verifies.
	 */
	looksWhole(items: readonly { hash: HexHash; bytes: number }[]): (string | undefined)[] {
		const packThere = new Map<PackFile, boolean>();
		const there = (pack: PackFile) => {
			const known = packThere.get(pack) ?? isFile(pack.path);
			packThere.set(pack, known);
			return known;
		};
		return items.map(({ hash, bytes }) => {
			checkHash(hash, this.#field);
			const copies = this.packs?.copies(this.kind, hash) ?? [];
			if (copies.some((c) => c.length === bytes && c.pack.damaged === undefined && there(c.pack))) return undefined;
			const loose = this.#loose.sizeOf(hash);
			if (loose === bytes) return undefined;
			if (loose === "other") return "not a regular file";
			if (loose !== undefined) return `${loose} bytes where ${bytes} are stated`;
			const damaged = copies.find((c) => c.pack.damaged !== undefined);
			if (damaged) return `in a damaged pack (${damaged.pack.damaged})`;
			return copies.length > 0 ? `of another length (${copies[0].length} bytes) or its pack is gone` : "missing";
		});
	}

	/** Set a damaged loose file aside under a quarantine name (see LooseFiles.quarantine). */
	quarantine(hash: HexHash, reason: string): Quarantined {
		return this.#loose.quarantine(hash, reason);
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
	 * Store many spans: one hashing batch, then what is not stored yet is written once (as one pack
	 * when the store has packs, else as loose files); every byte is durable when this returns. A
	 * copy already there is compared byte for byte with what we would have written; a damaged one
	 * is set aside (a loose file renamed, a pack once its good entries are copied) and written again.
	 */
	putMany(spans: readonly Span[]): HexHash[] {
		if (this.packs) {
			const staged = this.stage(spans);
			staged.done(this.packs.publish(staged.items));
			return staged.hashes;
		}
		const batch = this.#loose.prepare(spans);
		this.#loose.settle(batch.items, publishAll(batch.items));
		return batch.hashes;
	}

	/**
	 * putMany with the writes' fsyncs run concurrently off the main thread: the same checks,
	 * outcomes and errors, and every byte is durable when the promise resolves.
	 */
	async putManyAsync(spans: readonly Span[]): Promise<HexHash[]> {
		if (this.packs) {
			const staged = this.stage(spans);
			staged.done(await this.packs.publishAsync(staged.items));
			return staged.hashes;
		}
		const batch = this.#loose.prepare(spans);
		this.#loose.settle(batch.items, await publishAllAsync(batch.items));
		return batch.hashes;
	}

	/**
	 * For a store with packs: hash the spans and check the copies already there. Returns the hashes,
	 * the entries a new pack must hold, and what to do once that pack is durable (count the writes,
	 * set damaged loose copies aside). Writes nothing.
	 */
	stage(spans: readonly Span[]): StagedWrite {
		if (!Array.isArray(spans)) throw new TypeError(`pi-fold store: putMany needs an array, got ${showValue(spans)}`);
		const bytes = spans.map(spanBytes);
		const hashes = this.hashAll(bytes);
		const items: PackItem[] = [];
		const damagedLoose: { hash: HexHash; reason: string }[] = [];
		const seen = new Set<HexHash>();
		for (let i = 0; i < hashes.length; i++) {
			if (seen.has(hashes[i])) continue;
			seen.add(hashes[i]);
			const found = this.#presentCopy(hashes[i], bytes[i]);
			if (found.present) {
				this.stats.alreadyPresent++;
				continue;
			}
			if (found.looseDamage !== undefined) damagedLoose.push({ hash: hashes[i], reason: found.looseDamage });
			items.push({ kind: this.kind, hash: hashes[i], bytes: bytes[i] });
		}
		return {
			hashes,
			lengths: bytes.map((b) => b.byteLength),
			items,
			done: (found) => {
				for (const it of items) {
					if (found?.has(`${it.kind}:${it.hash}`)) {
						this.stats.raced++;
						continue;
					}
					this.stats.written++;
					this.stats.bytesWritten += it.bytes.byteLength;
				}
				// The right bytes are durable in a pack now: the damaged loose file goes aside.
				for (const d of damagedLoose) this.#loose.quarantine(d.hash, d.reason);
			},
		};
	}

	/** Whether a good copy of `hash` is stored (compared byte for byte); marks damaged pack copies; names a damaged loose file. */
	#presentCopy(hash: HexHash, expected: Uint8Array): { present: boolean; looseDamage?: string } {
		for (const copy of this.packs?.copies(this.kind, hash) ?? []) {
			let found: Uint8Array;
			try {
				found = this.packs!.read(copy);
			} catch {
				continue; // gone or unreadable: not a copy we can count on
			}
			if (sameBytes(expected, found)) return { present: true };
			this.packs!.markDamaged(
				copy.pack,
				found.byteLength < expected.byteLength
					? `${this.kind} ${hash} truncated: ${found.byteLength} of ${expected.byteLength} bytes`
					: `${this.kind} ${hash} corrupt`,
			);
		}
		const state = this.#loose.nameState(hash);
		if (state === "absent") return { present: false };
		if (state === "other") return { present: false, looseDamage: "not a regular file" };
		const damage = this.#loose.damage(hash, expected);
		return damage === undefined ? { present: true } : { present: false, looseDamage: damage };
	}

	/** Read one, verified against its hash (and against `ctx.bytes` when given). */
	read(hash: HexHash, ctx?: ReadContext): Uint8Array {
		return this.readMany([{ hash, ctx }])[0];
	}

	/**
	 * Read many, each once, hashed in one batch, each verified. A hash with several copies (packs,
	 * then the loose file) is served by the first that verifies; a pack copy that does not is
	 * marked damaged. The first failure (in request order: missing ones first, as they are found
	 * while reading) is thrown when no copy is left.
	 */
	readMany(requests: readonly ReadRequest[]): Uint8Array[] {
		for (const { hash } of requests) checkHash(hash, this.#field);
		const out: Uint8Array[] = new Array(requests.length);
		const sources = requests.map(({ hash }) => this.#sources(hash));
		const failed: (StoreError | undefined)[] = new Array(requests.length);
		const fds = new Map<PackFile, number>();
		let refreshed = false;
		try {
			for (let pending = requests.map((_, i) => i); pending.length > 0; ) {
				const tried: { i: number; bytes: Uint8Array; copy: PackCopy | undefined }[] = [];
				const next: number[] = [];
				for (const i of pending) {
					const { hash, ctx } = requests[i];
					let source = sources[i].shift();
					if (source === undefined && !refreshed && this.packs && (failed[i] ?? missing).code === "MISSING") {
						// Another writer may have published a pack since the index was read.
						refreshed = true;
						this.packs.refresh();
						sources[i] = this.#sources(hash).filter((c) => c !== "loose");
						source = sources[i].shift();
					}
					if (source === undefined) throw failed[i] ?? this.#missing(hash, ctx);
					try {
						const bytes = source === "loose" ? this.#loose.readRaw(hash, ctx) : this.packs!.read(source, fds);
						tried.push({ i, bytes, copy: source === "loose" ? undefined : source });
					} catch (err) {
						if (!(err instanceof StoreError)) throw err;
						failed[i] = worse(failed[i], this.#readFailure(err, hash, ctx, source));
						next.push(i);
					}
				}
				const digests = this.hashAll(tried.map((t) => t.bytes));
				tried.forEach(({ i, bytes, copy }, k) => {
					const { hash, ctx } = requests[i];
					const file = copy ? copy.pack.path : this.#loose.pathOf(hash);
					const problem = verifyProblem(this.kind, hash, bytes, digests[k], ctx, file);
					if (problem === undefined) {
						out[i] = bytes;
						return;
					}
					if (copy && problem.code !== "BAD_RECORD") this.packs!.markDamaged(copy.pack, problem.message);
					// The bytes are right and the record is wrong: no other copy can help.
					if (problem.code === "BAD_RECORD") sources[i] = [];
					failed[i] = worse(failed[i], problem);
					next.push(i);
				});
				pending = next;
			}
		} finally {
			for (const fd of fds.values()) closeSync(fd);
		}
		this.stats.read += out.length;
		for (const b of out) this.stats.bytesRead += b.byteLength;
		return out;
	}

	/**
	 * The bytes a read would serve, for a reader that verifies them itself (the viewer's page): the
	 * first copy that verifies, else the first copy found as it is; undefined when there is none.
	 * Nothing is marked, set aside or written: the store may belong to a session open in Pi.
	 */
	readAsFound(hash: HexHash): { bytes: Uint8Array; verified: boolean } | undefined {
		checkHash(hash, this.#field);
		let first: Uint8Array | undefined;
		for (const source of this.#sources(hash)) {
			let bytes: Uint8Array;
			try {
				bytes = source === "loose" ? this.#loose.readRaw(hash, undefined) : this.packs!.read(source);
			} catch (err) {
				if (err instanceof StoreError) continue;
				throw err;
			}
			if (this.hashAll([bytes])[0] === hash) return { bytes, verified: true };
			first ??= bytes;
		}
		return first === undefined ? undefined : { bytes: first, verified: false };
	}

	/** Where `hash` may be: its pack copies, then the loose file. */
	#sources(hash: HexHash): (PackCopy | "loose")[] {
		return [...(this.packs?.copies(this.kind, hash) ?? []), "loose"];
	}

	/** A copy that could not be read, said for the object it was read for. */
	#readFailure(err: StoreError, hash: HexHash, ctx: ReadContext | undefined, source: PackCopy | "loose"): StoreError {
		if (source !== "loose") {
			return new StoreError(err.code, `${contextPrefix(ctx)}${this.kind} ${hash}: ${err.message}`, {
				fold: ctx?.fold,
				entry: ctx?.entry,
				expected: hash,
				file: source.pack.path,
			});
		}
		return err.code === "MISSING" && this.packs ? this.#missing(hash, ctx) : err;
	}

	#missing(hash: HexHash, ctx: ReadContext | undefined): StoreError {
		const path = this.#loose.pathOf(hash);
		const where = this.packs ? `no pack in ${this.packs.dir} holds it, nor ${path}` : path;
		return new StoreError("MISSING", `${contextPrefix(ctx)}${this.kind} ${hash} is missing (${where})`, {
			fold: ctx?.fold,
			entry: ctx?.entry,
			expected: hash,
			file: path,
		});
	}

	/** Every hash stored (in a pack or under a final name), sorted. Temp files and stray names are ignored. */
	list(): HexHash[] {
		return [...new Set([...(this.packs?.list(this.kind) ?? []), ...this.#loose.list()])].sort();
	}
}
