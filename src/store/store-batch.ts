// A write batch of the fold store: leaves and records staged together and written at once, so a
// commit's folds cost one pack file (one fsync, one directory sync) however many objects they hold.
// A record staged after its leaves and child records is checked against the batch as if they were
// stored; nothing is visible to readers, nor durable, until commit() settles, and then all of it is.
// A store writing the loose layout gets the same calls: its files are written at commit, leaves
// before records, one file each.
import type { Span } from "../../bindings/index.ts";
import type { FoldRecord, HexHash } from "../fold-types.ts";
import { type StagedWrite, spanBytes } from "./content.ts";
import type { FoldStore, StagedLookup } from "./fold-store.ts";
import { decodeRecord } from "./records.ts";

export class StoreBatch implements StagedLookup {
	readonly #store: FoldStore;
	/** Leaves handed to the batch (written or already stored), by hash: their byte lengths. */
	readonly #leaves = new Map<HexHash, number>();
	/** Records handed to the batch, by hash: canonical bytes (decoded on demand). */
	readonly #records = new Map<HexHash, Uint8Array>();
	readonly #decoded = new Map<HexHash, FoldRecord>();
	/** Pack layout: the staged writes, in order. Loose layout: the spans to write at commit. */
	readonly #staged: StagedWrite[] = [];
	readonly #looseLeaves: Uint8Array[] = [];
	readonly #looseRecords: Uint8Array[] = [];
	#done = false;

	constructor(store: FoldStore) {
		this.#store = store;
	}

	/** Stage the exact bytes of session entries (strings as UTF-8); returns their hashes, in order. */
	putLeaves(spans: readonly Span[]): HexHash[] {
		this.#open();
		const objects = this.#store.objects;
		if (objects.packs) {
			const staged = objects.stage(spans);
			this.#staged.push(staged);
			// Every span is known now: those already stored were compared byte for byte with it.
			staged.hashes.forEach((h, i) => {
				this.#leaves.set(h, staged.lengths[i]);
			});
			return staged.hashes;
		}
		if (!Array.isArray(spans)) throw new TypeError("pi-fold store: putLeaves needs an array");
		const bytes = spans.map(spanBytes);
		const hashes = objects.hashAll(bytes);
		hashes.forEach((h, i) => {
			this.#leaves.set(h, bytes[i].byteLength);
		});
		this.#looseLeaves.push(...bytes);
		return hashes;
	}

	/**
	 * Stage fold records, each checked as putRecord checks it, with the leaves and records already in
	 * this batch counting as stored (so children are staged first). Returns their hashes, in order.
	 */
	putRecords(records: readonly FoldRecord[]): HexHash[] {
		this.#open();
		const bytes = records.map((r) => this.#store.checkRecord(r, this));
		const store = this.#store.records;
		let hashes: HexHash[];
		if (store.packs) {
			const staged = store.stage(bytes);
			this.#staged.push(staged);
			hashes = staged.hashes;
		} else {
			hashes = store.hashAll(bytes);
			this.#looseRecords.push(...bytes);
		}
		hashes.forEach((h, i) => {
			this.#records.set(h, bytes[i]);
		});
		return hashes;
	}

	leafLength(hash: HexHash): number | undefined {
		return this.#leaves.get(hash);
	}

	record(hash: HexHash): FoldRecord | undefined {
		const known = this.#decoded.get(hash);
		if (known) return known;
		const bytes = this.#records.get(hash);
		if (!bytes) return undefined;
		const record = decodeRecord(bytes, `record ${hash}`);
		this.#decoded.set(hash, record);
		return record;
	}

	/** Write everything staged; durable when it returns. A batch commits once. */
	commitSync(): void {
		this.#close();
		const { objects, records, packs } = this.#store;
		if (packs) {
			const found = packs.publish(this.#staged.flatMap((s) => s.items));
			for (const s of this.#staged) s.done(found);
			return;
		}
		if (this.#looseLeaves.length > 0) objects.putMany(this.#looseLeaves);
		if (this.#looseRecords.length > 0) records.putMany(this.#looseRecords);
	}

	/** commitSync with the fsyncs off the main thread; durable when it resolves. */
	async commit(): Promise<void> {
		this.#close();
		const { objects, records, packs } = this.#store;
		if (packs) {
			const found = await packs.publishAsync(this.#staged.flatMap((s) => s.items));
			for (const s of this.#staged) s.done(found);
			return;
		}
		if (this.#looseLeaves.length > 0) await objects.putManyAsync(this.#looseLeaves);
		if (this.#looseRecords.length > 0) await records.putManyAsync(this.#looseRecords);
	}

	#open(): void {
		if (this.#done) throw new Error("pi-fold store: this batch was already committed");
	}

	#close(): void {
		this.#open();
		this.#done = true;
	}
}
