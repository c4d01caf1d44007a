// The pack layout of the fold store: a write batch becomes one read-only pack file named by the hash
// of its head, everything in it verified on every read; stores written in the loose layout stay
// readable (and writable) under it; damage in a pack is found, the pack's good entries and the right
// bytes are written to a new pack, and the damaged one is set aside under a quarantine name.
import {
	chmodSync,
	closeSync,
	lstatSync,
	openSync,
	readdirSync,
	renameSync,
	symlinkSync,
	truncateSync,
	writeFileSync,
	writeSync,
} from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FoldStore, isPackQuarantineName, type Quarantined, type StoreBatch } from "../src/store/index.ts";
import { buildFold, rng, sha256Hex, snapshot, syntheticEntry } from "./fixtures/store-data.ts";
import { packNames, readPackFile } from "./helpers/store-audit.ts";
import { core, freshStore, refusal, refusedUntouched } from "./helpers/store-test.ts";

const next = rng(20260101);
const entries = (n: number, size = 300) =>
	Array.from({ length: n }, (_, i) => syntheticEntry(next, i, size + Math.floor(next() * size)));

const packStore = () => freshStore(undefined, "packs").store;

/** Overwrite bytes of a read-only pack in place, as corruption would. */
function corruptPack(path: string, offset: number, data: string): void {
	chmodSync(path, 0o644);
	const fd = openSync(path, "r+");
	writeSync(fd, data, offset);
	closeSync(fd);
	chmodSync(path, 0o444);
}

/** The pack holding `hash` and where its bytes start in that file. */
function whereIs(store: FoldStore, hash: string): { path: string; offset: number } {
	for (const name of packNames(store).packs) {
		const path = join(store.root, "packs", name);
		const entry = readPackFile(path).find((e) => e.hash === hash);
		if (entry) return { path, offset: entry.offset };
	}
	throw new Error(`${hash} is in no pack`);
}

/** A batch in the shape buildFold writes to (its leaves, then its record). */
function asStore(batch: StoreBatch): FoldStore {
	return {
		putLeaves: (spans: string[]) => batch.putLeaves(spans),
		putRecord: (r: Parameters<StoreBatch["putRecords"]>[0][number]) => batch.putRecords([r])[0],
	} as unknown as FoldStore;
}

describe("pack layout", () => {
	it("writes a batch of leaves and nested records as one read-only pack, durable and readable at once", async () => {
		const store = packStore();
		const es = entries(6);
		const inner = buildFold(
			store,
			es.slice(0, 3).map((entry) => ({ entry })),
			"tool-batch",
		);
		const packsAfterInner = packNames(store).packs.length;
		expect(packsAfterInner).toBe(2); // buildFold: one putLeaves, one putRecord

		// One batch: three leaves and two records (one nested in the other) make one pack.
		const batch = store.batch();
		const hashes = batch.putLeaves(es.slice(3).map((e) => e.json));
		expect(store.objects.has(hashes[0])).toBe(false); // staged, not written
		const mid = buildFold(
			asStore(batch),
			es.slice(3).map((entry) => ({ entry })),
			"tool-batch",
		);
		const outer = buildFold(asStore(batch), [{ fold: inner }, { fold: mid }], "consolidation");
		expect(store.records.has(outer.recordHash)).toBe(false);
		await batch.commit();
		const { packs, others } = packNames(store);
		expect(packs.length).toBe(packsAfterInner + 1);
		expect(others).toEqual([]); // no temp file left
		expect(readdirSync(store.root).sort()).toEqual(["packs"]); // no loose directory
		for (const name of packs) expect(lstatSync(join(store.root, "packs", name)).mode & 0o777).toBe(0o444);
		const verified = store.verifyFold(outer.recordHash, { id: outer.id });
		expect(verified.leaves.map((l) => Buffer.from(l.bytes).toString())).toEqual(es.map((e) => e.json));
		expect(store.objects.list()).toEqual([...new Set([...inner.leaves, ...mid.leaves].map((l) => l.hash))].sort());
		expect(store.records.list()).toEqual([inner.recordHash, mid.recordHash, outer.recordHash].sort());
		expect(() => batch.putLeaves(["late"])).toThrow(/already committed/);
	});

	it("is idempotent: putting what is stored writes nothing; a record naming what is in neither store nor batch is refused", () => {
		const store = packStore();
		const es = entries(3);
		const fold = buildFold(
			store,
			es.map((entry) => ({ entry })),
			"tool-batch",
		);
		const before = snapshot(store.root);
		store.putLeaves(es.map((e) => e.json));
		expect(store.putRecord(fold.record)).toBe(fold.recordHash);
		expect(snapshot(store.root)).toEqual(before);
		expect(store.objects.stats.alreadyPresent).toBe(3);

		const other = packStore();
		const batch = other.batch();
		batch.putLeaves([es[0].json, es[1].json]); // not the third
		refusal(() => batch.putRecords([fold.record]), "MISSING");
		expect(snapshot(other.root).size).toBe(0);
		refusedUntouched(store.root, () => store.putRecord({ ...fold.record, identity: sha256Hex("x") }), "BAD_RECORD");
	});

	it("reads a store written in the loose layout, and writes new folds beside it in packs", () => {
		const { store: loose, sessionFile } = freshStore("0198c5a2-7f3e-7c2d-9b1a-000000000001", "loose");
		const es = entries(4);
		const old = buildFold(
			loose,
			es.slice(0, 2).map((entry) => ({ entry })),
			"tool-batch",
		);
		const reopened = FoldStore.forSession({ sessionFile, sessionId: "0198c5a2-7f3e-7c2d-9b1a-000000000001" }, core);
		expect(reopened.layout).toBe("packs");
		expect(reopened.records.has(old.recordHash)).toBe(true);
		const fresh = buildFold(reopened, [{ fold: old }, ...es.slice(2).map((entry) => ({ entry }))], "chapter");
		expect(reopened.verifyFold(fresh.recordHash).leaves.map((l) => l.entryId)).toEqual(es.map((e) => e.id));
		// The old fold stayed in its loose files; only the new one went to a pack.
		expect(readdirSync(reopened.root).sort()).toEqual(["objects", "packs", "records"]);
		expect(readPackFile(join(reopened.root, "packs", packNames(reopened).packs[0])).length).toBeGreaterThan(0);
		expect(reopened.records.list()).toEqual([old.recordHash, fresh.recordHash].sort());
	});

	it("finds a pack another writer published since its index was read", () => {
		const { store: a, sessionFile } = freshStore("0198c5a2-7f3e-7c2d-9b1a-000000000002", "packs");
		const b = FoldStore.forSession({ sessionFile, sessionId: "0198c5a2-7f3e-7c2d-9b1a-000000000002" }, core);
		expect(a.objects.has(sha256Hex("nothing"))).toBe(false); // a's index is read (empty)
		const [hash] = b.putLeaves(["written by b"]);
		expect(Buffer.from(a.objects.read(hash)).toString()).toBe("written by b");
		expect(a.objects.has(hash)).toBe(true);
	});

	it("a corrupt entry is refused on read; the next put writes it and the pack's good entries anew and sets the pack aside", () => {
		const store = packStore();
		const seen: Quarantined[] = [];
		store.onQuarantine((q) => void seen.push(q));
		const [good, bad] = store.putLeaves(["stays good", "will be damaged"]);
		const { path, offset } = whereIs(store, bad);
		corruptPack(path, offset, "W");
		const err = refusal(() => store.objects.read(bad, { entry: "e1" }), "MISMATCH");
		expect(err.message).toContain(`entry e1: object ${bad} is corrupt: expected sha256 ${bad}`);
		expect(err.file).toBe(path);
		const files = snapshot(join(store.root, "packs"));

		expect(store.putLeaves(["will be damaged"])).toEqual([bad]);
		expect(seen.map((q) => [q.kind, q.file])).toEqual([["pack", path]]);
		expect(isPackQuarantineName(seen[0].movedTo.split("/").at(-1) ?? "")).toBe(true);
		// Nothing deleted: the damaged pack is there under its quarantine name, bytes unchanged.
		expect(snapshot(join(store.root, "packs")).get(seen[0].movedTo.split("/").at(-1) ?? "")).toBe(
			files.get(path.split("/").at(-1) ?? ""),
		);
		for (const [hash, text] of [
			[good, "stays good"],
			[bad, "will be damaged"],
		]) {
			expect(Buffer.from(store.objects.read(hash)).toString()).toBe(text);
		}
		// A second store over the same directory reads the good copies only.
		const again = new FoldStore(store.root, core);
		expect(Buffer.from(again.objects.read(good)).toString()).toBe("stays good");
		expect(Buffer.from(again.objects.read(bad)).toString()).toBe("will be damaged");
	});

	it("a damaged pack whose repair holds exactly its entries is set aside once; the repair gets a name of its own", () => {
		const store = packStore();
		const seen: Quarantined[] = [];
		store.onQuarantine((q) => void seen.push(q));
		const [hash] = store.putLeaves(["alone in its pack"]);
		const { path, offset } = whereIs(store, hash);
		corruptPack(path, offset, "A");
		refusal(() => store.objects.read(hash), "MISMATCH");
		store.putLeaves(["alone in its pack"]);
		expect(seen.map((q) => q.file)).toEqual([path]);
		const { packs } = packNames(store);
		expect(packs).toHaveLength(1);
		expect(join(store.root, "packs", packs[0])).not.toBe(path);
		expect(Buffer.from(new FoldStore(store.root, core).objects.read(hash)).toString()).toBe("alone in its pack");
	});

	it("a truncated pack and a symlinked one are read around and set aside at the next write; a newer pack is left alone", () => {
		const store = packStore();
		const [a] = store.putLeaves(["in a pack that will be cut short"]);
		const [b] = store.putLeaves(["in a pack that becomes a symlink"]);
		const cut = whereIs(store, a).path;
		const linked = whereIs(store, b).path;
		chmodSync(cut, 0o644);
		truncateSync(cut, 40);
		renameSync(linked, `${linked}.moved`);
		symlinkSync(`${linked}.moved`, linked);
		const newer = join(store.root, "packs", `${"0".repeat(64)}.pack`);
		const header = Buffer.alloc(24);
		header.write("PIFOLDPK", 0, "latin1");
		header.writeUInt32LE(2, 8);
		header.writeUInt32LE(1, 12);
		writeFileSync(newer, header);

		const reader = new FoldStore(store.root, core);
		refusal(() => reader.objects.read(a), "MISSING");
		refusal(() => reader.objects.read(b), "MISSING");
		expect(reader.packs?.stats.skipped).toEqual([expect.stringContaining("pack version 2 is newer")]);
		const seen: Quarantined[] = [];
		reader.onQuarantine((q) => void seen.push(q));
		reader.putLeaves(["in a pack that will be cut short", "in a pack that becomes a symlink"]);
		expect(seen.map((q) => q.file).sort()).toEqual([cut, linked].sort());
		expect(lstatSync(seen.find((q) => q.file === linked)?.movedTo ?? "").isSymbolicLink()).toBe(true);
		expect(lstatSync(newer).isFile()).toBe(true); // never set aside
		expect(Buffer.from(reader.objects.read(a)).toString()).toBe("in a pack that will be cut short");
		expect(Buffer.from(reader.objects.read(b)).toString()).toBe("in a pack that becomes a symlink");
	});

	it("a damaged loose copy in a pack-layout store is written to a pack, then set aside", () => {
		const { store: loose, sessionFile } = freshStore("0198c5a2-7f3e-7c2d-9b1a-000000000003", "loose");
		const [hash] = loose.putLeaves(["loose bytes"]);
		chmodSync(loose.objects.pathOf(hash), 0o644);
		writeFileSync(loose.objects.pathOf(hash), "LOOSE bytes");
		const store = FoldStore.forSession({ sessionFile, sessionId: "0198c5a2-7f3e-7c2d-9b1a-000000000003" }, core);
		refusal(() => store.objects.read(hash), "MISMATCH");
		store.putLeaves(["loose bytes"]);
		expect(store.objects.quarantined.map((q) => [q.kind, q.reason])).toEqual([
			["object", expect.stringMatching(/^corrupt: its bytes hash to/)],
		]);
		expect(Buffer.from(store.objects.read(hash)).toString()).toBe("loose bytes");
		expect(packNames(store).packs).toHaveLength(1);
	});
});
