// What is on disk in a store, and the crash-safety audit of it. Loose layout: every final name is
// an expected object that verifies, read-only, under its fan-out directory; everything else is a
// temp file headed for an expected object. Pack layout: every pack is read-only, named by the hash
// of its head, and holds only expected objects that verify; everything else is a temp file headed
// for a pack. Packs are parsed here independently of the store's own reader (node:crypto hashes).
import { chmodSync, closeSync, lstatSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { nodeCore } from "../../bindings/node.ts";
import { FoldStore, finalNameOfTemp, isHexHash, isTempName } from "../../src/store/index.ts";
import { sha256Hex } from "../fixtures/store-data.ts";

/** Every name under the objects fan-out dirs, split into final names and the rest. */
export function storeNames(store: FoldStore): { finals: string[]; temps: string[]; fans: string[] } {
	const finals: string[] = [];
	const temps: string[] = [];
	let fans: string[] = [];
	try {
		fans = readdirSync(store.objects.dir);
	} catch {
		return { finals, temps, fans };
	}
	for (const fan of fans) {
		for (const name of readdirSync(join(store.objects.dir, fan))) (isHexHash(name) ? finals : temps).push(name);
	}
	return { finals, temps, fans };
}

/** One pack file read with no help from the store: its entries (kind code, hash, bytes). */
export function readPackFile(path: string): { kind: number; hash: string; offset: number; bytes: Buffer }[] {
	const file = readFileSync(path);
	expect(file.subarray(0, 8).toString("latin1"), `${path}: magic`).toBe("PIFOLDPK");
	expect(file.readUInt32LE(8), `${path}: version`).toBe(1);
	const count = file.readUInt32LE(12);
	const head = file.subarray(0, 24 + 48 * count);
	expect(`${sha256Hex(head)}.pack`, `${path}: named by the hash of its head`).toBe(path.split("/").at(-1));
	return Array.from({ length: count }, (_, i) => {
		const at = 24 + 48 * i;
		const length = file.readUInt32LE(at + 4);
		const offset = Number(file.readBigUInt64LE(at + 8));
		return {
			kind: file[at],
			hash: file.subarray(at + 16, at + 48).toString("hex"),
			offset,
			bytes: file.subarray(offset, offset + length),
		};
	});
}

/** The pack files and the other names in a store's packs directory. */
export function packNames(store: FoldStore): { packs: string[]; others: string[] } {
	const dir = join(store.root, "packs");
	let names: string[] = [];
	try {
		names = readdirSync(dir);
	} catch {
		return { packs: [], others: [] };
	}
	const packs = names.filter((n) => /^[0-9a-f]{64}\.pack$/.test(n));
	return { packs, others: names.filter((n) => !packs.includes(n)) };
}

export function auditStore(store: FoldStore, expected: ReadonlySet<string>): { finals: string[]; temps: string[] } {
	if (store.layout === "packs") return auditPacks(store, expected);
	const { finals, temps, fans } = storeNames(store);
	for (const fan of fans) expect(fan).toMatch(/^[0-9a-f]{2}$/);
	for (const name of finals) {
		expect(expected.has(name), `unexpected final ${name}`).toBe(true);
		expect(sha256Hex(store.objects.read(name))).toBe(name); // read() verifies too
		expect(lstatSync(store.objects.pathOf(name)).mode & 0o777).toBe(0o444);
	}
	for (const name of temps) {
		expect(isTempName(name), `stray file ${name}`).toBe(true);
		expect(expected.has(finalNameOfTemp(name) ?? ""), `temp ${name} for an unknown object`).toBe(true);
	}
	return { finals, temps };
}

/** The pack layout's audit; `finals` are the objects the packs hold, `temps` the leftover temp files. */
function auditPacks(store: FoldStore, expected: ReadonlySet<string>): { finals: string[]; temps: string[] } {
	const { packs, others } = packNames(store);
	const finals = new Set<string>();
	for (const name of packs) {
		const path = join(store.root, "packs", name);
		expect(lstatSync(path).mode & 0o777, `${name} is read-only`).toBe(0o444);
		for (const e of readPackFile(path)) {
			expect(e.kind, `${name}: an object entry`).toBe(0);
			expect(expected.has(e.hash), `unexpected object ${e.hash} in ${name}`).toBe(true);
			expect(sha256Hex(e.bytes), `${name}: ${e.hash} verifies`).toBe(e.hash);
			finals.add(e.hash);
		}
	}
	for (const name of others) {
		expect(isTempName(name), `stray file ${name}`).toBe(true);
		expect(finalNameOfTemp(name), `temp ${name} for a pack`).toMatch(/^[0-9a-f]{64}\.pack$/);
	}
	expect(storeNames(store).finals, "a pack store writes no loose file").toEqual([]);
	for (const h of finals) expect(sha256Hex(store.objects.read(h))).toBe(h); // the store's reader agrees
	return { finals: [...finals], temps: others };
}

/** The pack file holding `hash` (an object or a record), read independently of the store. */
export function packHolding(store: FoldStore, hash: string): string {
	for (const name of packNames(store).packs) {
		const path = join(store.root, "packs", name);
		if (readPackFile(path).some((e) => e.hash === hash)) return path;
	}
	throw new Error(`${hash} is in no pack of ${store.root}`);
}

/**
 * Rewrite a pack-layout store as the loose layout stores had before packs (one file per object),
 * as a session written by an earlier pi-fold would have left it; the packs directory goes.
 */
export function toLooseLayout(root: string): void {
	const dir = join(root, "packs");
	const loose = new FoldStore(root, nodeCore(), { layout: "loose" });
	for (const name of readdirSync(dir).filter((n) => /^[0-9a-f]{64}\.pack$/.test(n))) {
		const entries = readPackFile(join(dir, name));
		loose.objects.putMany(entries.filter((e) => e.kind === 0).map((e) => new Uint8Array(e.bytes)));
		loose.records.putMany(entries.filter((e) => e.kind === 1).map((e) => new Uint8Array(e.bytes)));
	}
	rmSync(dir, { recursive: true, force: true });
}

/** Flip the last byte of an object or record inside its pack, in place (the pack's other entries stay intact). */
export function flipInPack(store: FoldStore, hash: string): string {
	const path = packHolding(store, hash);
	const entry = readPackFile(path).find((e) => e.hash === hash);
	if (!entry) throw new Error(`${hash} is not in ${path}`);
	chmodSync(path, 0o644);
	const fd = openSync(path, "r+");
	writeSync(fd, Buffer.from([entry.bytes[entry.bytes.length - 1] ^ 0xff]), 0, 1, entry.offset + entry.bytes.length - 1);
	closeSync(fd);
	chmodSync(path, 0o444);
	return path;
}
