// The pack files of one store (`<root>/packs/<64 hex>.pack`, pack-format.ts): an in-memory index
// from content hash to every copy in a pack, built by reading each pack's head once, and the one
// writer. A batch becomes one pack (or a few, past the size cap), published like any immutable file
// (atomic.ts: temp file, fsync, link without replacing, directory fsync), so it is durable, whole,
// and never changed once named. Nothing is deleted: a damaged pack is set aside under a quarantine
// name after its good entries and the right bytes are durable in a new pack.
import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, openSync, readdirSync, renameSync, statSync } from "node:fs";
import { join, sep } from "node:path";
import { DIGEST_BYTES, type PiFoldCore, toHex } from "../../bindings/index.ts";
import type { HexHash } from "../fold-types.ts";
import { type PublishItem, publishAll, publishAllAsync, syncDir } from "./atomic.ts";
import type { ContentKind, Quarantined } from "./content.ts";
import { fsCode, ioError, StoreError } from "./errors.ts";
import {
	encodePack,
	headBytes,
	PACK_HEADER_BYTES,
	PACK_MAX_ENTRIES,
	PACK_NAME,
	type PackItem,
	parseHeader,
	parseIndex,
} from "./pack-format.ts";
import { entriesOf, isFile, readExactly } from "./pack-io.ts";

/** A pack is cut at this many bytes of entries, so one batch never needs one huge buffer. */
const PACK_MAX_BYTES = 64 * 1024 * 1024;

/** A pack file as the index knows it. */
export interface PackFile {
	/** File name, `<64 hex>.pack`. */
	name: string;
	path: string;
	/** The pack's header and index (entries are parsed from it when needed, not kept), with the file size. */
	head?: { bytes: Uint8Array; count: number; size: number };
	/** Why it is damaged (its good entries are copied to a new pack at the next write), if it is. */
	damaged?: string;
}

/** One copy of an entry: where in which pack. */
export interface PackCopy {
	pack: PackFile;
	offset: number;
	length: number;
}

export class PackSet {
	readonly dir: string;
	readonly #core: PiFoldCore;
	readonly #packs = new Map<string, PackFile>();
	/** Copies by hash: one (the common case) or several. */
	readonly #index: Record<ContentKind, Map<HexHash, PackCopy | PackCopy[]>> = { object: new Map(), record: new Map() };
	/** The directory's mtime when it was last listed; undefined before the first listing. */
	#listedAt: number | undefined;
	/** Told of each pack set aside. */
	onQuarantine: ((q: Quarantined) => void) | undefined;
	readonly quarantined: Quarantined[] = [];
	/** Packs this store wrote and read the heads of, in this process; packs found unusable (newer, not a file). */
	readonly stats = { written: 0, bytesWritten: 0, scanned: 0, skipped: [] as string[] };

	constructor(dir: string, core: PiFoldCore) {
		this.dir = dir;
		this.#core = core;
	}

	/** Every copy of `hash` of this kind, listing the directory first if it never was. */
	copies(kind: ContentKind, hash: HexHash): readonly PackCopy[] {
		if (this.#listedAt === undefined) this.refresh();
		const found = this.#index[kind].get(hash);
		return found === undefined ? [] : Array.isArray(found) ? found : [found];
	}

	/**
	 * Whether a pack still holds `hash`: a copy in the index whose pack file is there (one lstat, as
	 * a loose file costs); on a miss, the directory again (if it changed, or a pack went away).
	 * Existence only: reads verify.
	 */
	has(kind: ContentKind, hash: HexHash): boolean {
		const copies = this.copies(kind, hash);
		if (copies.some((c) => isFile(c.pack.path))) return true;
		if (!this.refresh(copies.length > 0)) return false;
		return this.copies(kind, hash).some((c) => isFile(c.pack.path));
	}

	/** Every hash of this kind in a pack, after listing the directory again. */
	list(kind: ContentKind): HexHash[] {
		this.refresh(true);
		return [...this.#index[kind].keys()];
	}

	/**
	 * Read the directory and index the packs not seen yet; drop packs that are gone (another writer
	 * set them aside). Without `force`, only when the directory changed since it was last listed.
	 * Returns whether it listed.
	 */
	refresh(force = true): boolean {
		let mtime: number;
		try {
			mtime = statSync(this.dir).mtimeMs;
		} catch (err) {
			if (fsCode(err) !== "ENOENT" && fsCode(err) !== "ENOTDIR") throw ioError("cannot stat", this.dir, err);
			this.#listedAt = -1;
			return false;
		}
		if (!force && mtime === this.#listedAt) return false;
		this.#listedAt = mtime;
		let names: string[];
		try {
			names = readdirSync(this.dir);
		} catch (err) {
			throw ioError("cannot list packs in", this.dir, err);
		}
		const present = new Set(names);
		for (const name of [...this.#packs.keys()]) if (!present.has(name)) this.#forget(name);
		for (const name of names) {
			if (PACK_NAME.test(name) && !this.#packs.has(name)) this.#scan(name);
		}
		return true;
	}

	/** Read one pack's head and index its entries (a pack that cannot be read is skipped or marked damaged). */
	#scan(name: string): void {
		const path = `${this.dir}${sep}${name}`;
		let fd: number;
		try {
			fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
		} catch (err) {
			if (fsCode(err) === "ENOENT") return;
			if (fsCode(err) !== "ELOOP") throw ioError("cannot read pack", path, err);
			this.#add({ name, path, damaged: "a symlink" });
			return;
		}
		try {
			const stat = fstatSync(fd);
			if (!stat.isFile()) {
				this.#add({ name, path, damaged: "not a regular file" });
				return;
			}
			const header = readExactly(fd, 0, PACK_HEADER_BYTES, path, true);
			const parsed = parseHeader(header, stat.size);
			if (!parsed.ok) {
				// A pack of a newer pi-fold is kept in view (never read, never set aside) so it is noted once.
				if (parsed.newer) this.stats.skipped.push(`${name}: ${parsed.reason}`);
				this.#add({ name, path, ...(parsed.newer ? {} : { damaged: parsed.reason }) });
				return;
			}
			const head = readExactly(fd, 0, headBytes(parsed.count), path);
			const { bad } = parseIndex(head, parsed.count, stat.size);
			const named = this.#hashOf(head);
			const damaged =
				`${named}.pack` !== name
					? `its head hashes to ${named}, not its name`
					: bad > 0
						? `${bad} index entries point outside the file`
						: undefined;
			this.stats.scanned++;
			const bytes = head; // read into a buffer of its own: the index keeps only this
			this.#add({ name, path, head: { bytes, count: parsed.count, size: stat.size }, ...(damaged ? { damaged } : {}) });
		} finally {
			closeSync(fd);
		}
	}

	#add(pack: PackFile): void {
		this.#packs.set(pack.name, pack);
		for (const e of entriesOf(pack)) {
			const copy: PackCopy = { pack, offset: e.offset, length: e.length };
			const known = this.#index[e.kind].get(e.hash);
			this.#index[e.kind].set(e.hash, known === undefined ? copy : [...(Array.isArray(known) ? known : [known]), copy]);
		}
	}

	#forget(name: string): void {
		const pack = this.#packs.get(name);
		if (!pack) return;
		this.#packs.delete(name);
		for (const e of entriesOf(pack)) {
			const kept = this.copies(e.kind, e.hash).filter((c) => c.pack !== pack);
			if (kept.length === 0) this.#index[e.kind].delete(e.hash);
			else this.#index[e.kind].set(e.hash, kept.length === 1 ? kept[0] : kept);
		}
	}

	/** A copy's bytes as found (not verified: the caller hashes them); a vanished pack is MISSING. */
	read(copy: PackCopy, fds?: Map<PackFile, number>): Uint8Array {
		const { pack } = copy;
		let fd = fds?.get(pack);
		const own = fd === undefined;
		if (fd === undefined) {
			try {
				fd = openSync(pack.path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
			} catch (err) {
				if (fsCode(err) === "ENOENT") {
					throw new StoreError("MISSING", `pack ${pack.name} is gone (${pack.path})`, { file: pack.path });
				}
				if (fsCode(err) === "ELOOP") {
					throw new StoreError("NOT_FILE", `pack ${pack.path} is not a regular file (a symlink)`, { file: pack.path });
				}
				throw ioError("cannot read pack", pack.path, err);
			}
			if (fds) fds.set(pack, fd);
		}
		try {
			return readExactly(fd, copy.offset, copy.length, pack.path, true);
		} finally {
			if (own && !fds) closeSync(fd);
		}
	}

	/** Mark a pack damaged (a copy in it failed verification): its good entries move at the next write. */
	markDamaged(pack: PackFile, reason: string): void {
		pack.damaged ??= reason;
	}

	/**
	 * Publish `items` as new packs (with the good entries of damaged packs), durable on return.
	 * Returns the items another writer had already published in the very same pack (as
	 * `<kind>:<hash>`): this call found them there rather than writing them.
	 */
	publish(items: readonly PackItem[]): Set<string> {
		const plan = this.#plan(items);
		for (let files = plan.files, final = false; files.length > 0; final = true) {
			files = this.#settle(plan, files, publishAll(files), final);
		}
		return this.#finish(plan);
	}

	/** publish, with the fsyncs off the main thread. */
	async publishAsync(items: readonly PackItem[]): Promise<Set<string>> {
		const plan = this.#plan(items);
		for (let files = plan.files, final = false; files.length > 0; final = true) {
			files = this.#settle(plan, files, await publishAllAsync(files), final);
		}
		return this.#finish(plan);
	}

	/** The pack files to write for `items`, the salvage of damaged packs included. */
	#plan(items: readonly PackItem[]): PackPlan {
		if (this.#listedAt === undefined) this.refresh();
		const all = [...items];
		const salvaged = [...this.#packs.values()].filter((p) => p.damaged !== undefined);
		const seen = new Set(all.map((it) => `${it.kind}:${it.hash}`));
		for (const pack of salvaged) all.push(...this.#goodEntries(pack, seen));
		const files: PublishItem[] = [];
		const heads = new Map<string, NonNullable<PackFile["head"]>>();
		for (let start = 0; start < all.length; ) {
			let end = start;
			let bytes = 0;
			while (end < all.length && end - start < PACK_MAX_ENTRIES) {
				if (end > start && bytes + all[end].bytes.byteLength > PACK_MAX_BYTES) break;
				bytes += all[end++].bytes.byteLength;
			}
			const chunk = all.slice(start, end);
			let { file, head } = encodePack(chunk);
			let name = `${this.#hashOf(head)}.pack`;
			// The name of a damaged pack stays taken until it is set aside, after this write.
			for (let salt = 1; this.#packs.get(name)?.damaged !== undefined; salt++) {
				({ file, head } = encodePack(chunk, salt));
				name = `${this.#hashOf(head)}.pack`;
			}
			files.push({ dir: this.dir, name, bytes: file });
			heads.set(name, { bytes: head.slice(), count: chunk.length, size: file.byteLength });
			start = end;
		}
		return { files, heads, salvaged, found: new Set() };
	}

	/** A damaged pack's entries that still verify, except those already in the batch. */
	#goodEntries(pack: PackFile, seen: Set<string>): PackItem[] {
		const fds = new Map<PackFile, number>();
		try {
			const wanted = entriesOf(pack).filter((e) => !seen.has(`${e.kind}:${e.hash}`));
			const found = wanted.map((e) => {
				try {
					return this.read({ pack, offset: e.offset, length: e.length }, fds);
				} catch {
					return undefined;
				}
			});
			const digests = this.#core.hashSpans(found.map((b) => b ?? new Uint8Array(0)));
			const out: PackItem[] = [];
			wanted.forEach((e, i) => {
				const bytes = found[i];
				if (bytes && toHex(digests, i * DIGEST_BYTES, (i + 1) * DIGEST_BYTES) === e.hash) {
					seen.add(`${e.kind}:${e.hash}`);
					out.push({ kind: e.kind, hash: e.hash, bytes });
				}
			});
			return out;
		} finally {
			for (const fd of fds.values()) closeSync(fd);
		}
	}

	/**
	 * After a write: index the new packs. A name that already existed is this very pack (the name
	 * commits to the index) unless that file is damaged: then it is set aside and returned, to be
	 * written again (once: `final` refuses a second time).
	 */
	#settle(plan: PackPlan, files: readonly PublishItem[], outcomes: readonly string[], final: boolean): PublishItem[] {
		const again: PublishItem[] = [];
		files.forEach((file, i) => {
			const path = join(this.dir, file.name);
			if (outcomes[i] === "exists") {
				if (!this.#packs.has(file.name)) this.#scan(file.name);
				const found = this.#packs.get(file.name);
				if (found && found.damaged === undefined && this.#matches(found, file.bytes)) {
					for (const e of entriesOf({ name: file.name, path, head: plan.heads.get(file.name) })) {
						plan.found.add(`${e.kind}:${e.hash}`);
					}
					return;
				}
				if (final) {
					throw new StoreError("IO", `pack ${path} exists but does not hold the pack written; not replaced`, {
						file: path,
					});
				}
				const damaged = found ?? { name: file.name, path };
				this.#setAside(damaged, found?.damaged ?? "damaged");
				plan.salvaged = plan.salvaged.filter((p) => p !== damaged);
				again.push(file);
				return;
			}
			this.#forget(file.name);
			this.stats.written++;
			this.stats.bytesWritten += file.bytes.byteLength;
			this.#add({ name: file.name, path, head: plan.heads.get(file.name) });
		});
		return again;
	}

	/** Set the salvaged packs aside, now that their good entries are durable elsewhere. */
	#finish(plan: PackPlan): Set<string> {
		for (const pack of plan.salvaged) this.#setAside(pack, pack.damaged ?? "damaged");
		if (plan.files.length > 0) this.#listedAt = this.#mtime();
		return plan.found;
	}

	/** Whether the pack on disk holds exactly `file`'s bytes. */
	#matches(pack: PackFile, file: Uint8Array): boolean {
		try {
			const bytes = this.read({ pack, offset: 0, length: file.byteLength });
			return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).equals(file);
		} catch {
			return false;
		}
	}

	/** Rename a damaged pack to a quarantine name beside it (never deleted), durably, and report it. */
	#setAside(pack: PackFile, reason: string): void {
		const movedTo = `${pack.path}.damaged-${Date.now()}-${process.pid}-${randomBytes(4).toString("hex")}`;
		if (this.#packs.get(pack.name) === pack) this.#forget(pack.name);
		try {
			renameSync(pack.path, movedTo);
			syncDir(this.dir);
		} catch (err) {
			if (fsCode(err) === "ENOENT") return; // another writer set it aside already
			throw ioError(`cannot set aside the damaged pack (${reason})`, pack.path, err);
		}
		const q: Quarantined = { kind: "pack", hash: pack.name.slice(0, 64), file: pack.path, movedTo, reason };
		this.quarantined.push(q);
		this.onQuarantine?.(q);
	}

	#mtime(): number | undefined {
		try {
			return statSync(this.dir).mtimeMs;
		} catch {
			return undefined;
		}
	}

	#hashOf(bytes: Uint8Array): HexHash {
		return toHex(this.#core.hashSpans([bytes]));
	}
}

interface PackPlan {
	files: PublishItem[];
	/** The head (header and index) of each pack file, by name. */
	heads: Map<string, NonNullable<PackFile["head"]>>;
	salvaged: PackFile[];
	/** Items found already published in an identical pack. */
	found: Set<string>;
}
