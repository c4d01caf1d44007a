// The fold store: layout, write-once objects, records, verification of
// nested folds, and refusals of bad records and hostile ids that leave the disk untouched.
import { execFileSync } from "node:child_process";
import {
	linkSync,
	lstatSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	statSync,
	symlinkSync,
	unlinkSync,
	writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { Packr } from "msgpackr";
import { describe, expect, it } from "vitest";
import type { FoldRecord } from "../src/fold-types.ts";
import { publishOnce } from "../src/store/atomic.ts";
import {
	decodeRecord,
	encodeRecord,
	foldIdOf,
	isTempName,
	type StoreErrorCode,
	validateRecord,
} from "../src/store/index.ts";
import { isQuarantineName } from "../src/store/objects.ts";
import { buildFold, identityOf, overwrite, rng, sha256Hex, snapshot, syntheticEntry } from "./fixtures/store-data.ts";

import { freshStore, refusal, refusedUntouched } from "./helpers/store-test.ts";

const next = rng(20250101);
const entries = (n: number, size = 300) =>
	Array.from({ length: n }, (_, i) => syntheticEntry(next, i, size + Math.floor(next() * size)));

function sampleRecord(): FoldRecord {
	const leafHash = sha256Hex("leaf");
	const child = identityOf([sha256Hex("inner")]);
	const identity = identityOf([leafHash, child]);
	return {
		format: "pi-fold.fold",
		v: 1,
		id: foldIdOf(identity),
		identity,
		kind: "consolidation",
		brief: "two children",
		provenance: "supplied",
		children: [
			{ type: "leaf", entryId: "a1b2c3d4", hash: leafHash, bytes: 4 },
			{ type: "fold", id: foldIdOf(child), identity: child, record: sha256Hex("record") },
		],
	};
}

/**
 * A minimal msgpack reader for the plain subset (maps, arrays, strings, ints, floats, nil, bools).
 * Any extension type (msgpackr records, bundles, timestamps) makes it throw: proof that records
 * are readable by a decoder that is not msgpackr.
 */
function plainMsgpack(bytes: Uint8Array): unknown {
	const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
	const text = new TextDecoder("utf-8", { fatal: true });
	let at = 0;
	/** Advance past `n` bytes; returns where they start. */
	const take = (n: number) => {
		const start = at;
		at += n;
		return start;
	};
	const str = (n: number) => {
		const start = take(n);
		return text.decode(bytes.subarray(start, start + n));
	};
	const map = (n: number) => {
		const o: Record<string, unknown> = {};
		for (let i = 0; i < n; i++) {
			const k = read();
			if (typeof k !== "string") throw new Error("non-string key");
			o[k] = read();
		}
		return o;
	};
	const arr = (n: number) => Array.from({ length: n }, () => read());
	const u8 = () => view.getUint8(take(1));
	const u16 = () => view.getUint16(take(2));
	const u32 = () => view.getUint32(take(4));
	const read = (): unknown => {
		const b = u8();
		if (b <= 0x7f) return b;
		if (b >= 0xe0) return b - 0x100;
		if (b >= 0xa0 && b <= 0xbf) return str(b & 0x1f);
		if (b >= 0x80 && b <= 0x8f) return map(b & 0x0f);
		if (b >= 0x90 && b <= 0x9f) return arr(b & 0x0f);
		switch (b) {
			case 0xc0:
				return null;
			case 0xc2:
				return false;
			case 0xc3:
				return true;
			case 0xcc:
				return u8();
			case 0xcd:
				return u16();
			case 0xce:
				return u32();
			case 0xcb:
				return view.getFloat64(take(8));
			case 0xd9:
				return str(u8());
			case 0xda:
				return str(u16());
			case 0xdb:
				return str(u32());
			case 0xdc:
				return arr(u16());
			case 0xdd:
				return arr(u32());
			case 0xde:
				return map(u16());
			case 0xdf:
				return map(u32());
			default:
				throw new Error(`type byte 0x${b.toString(16)} at ${at - 1} is not plain msgpack`);
		}
	};
	const value = read();
	if (at !== bytes.byteLength) throw new Error(`${bytes.byteLength - at} trailing bytes`);
	return value;
}

describe("objects", () => {
	it("round-trips strings and bytes under objects/<2 hex>/<hash>, read-only, next to the session file", () => {
		const { store, sessionFile } = freshStore();
		expect(store.root).toBe(join(dirname(sessionFile), "pi-fold", "0198c5a2-7f3e-7c2d-9b1a-3e4f5a6b7c8d"));
		const spans = [
			"plain ascii",
			"ünïcödé 日本語 🙂",
			"",
			new Uint8Array([0, 255, 1, 254]),
			"x".repeat(70_000),
			new Uint8Array(3 << 20).fill(7),
		];
		const hashes = store.putLeaves(spans);
		expect(hashes).toEqual(spans.map((s) => sha256Hex(s)));
		spans.forEach((span, i) => {
			const path = join(store.root, "objects", hashes[i].slice(0, 2), hashes[i]);
			const want = typeof span === "string" ? Buffer.from(span, "utf8") : Buffer.from(span);
			expect(readFileSync(path).equals(want)).toBe(true);
			expect(statSync(path).mode & 0o777).toBe(0o444);
			expect(Buffer.from(store.objects.read(hashes[i])).equals(want)).toBe(true);
			expect(store.objects.has(hashes[i])).toBe(true);
		});
		expect(store.objects.list()).toEqual([...new Set(hashes)].sort());
		expect(store.records.list()).toEqual([]);
	});

	it("is idempotent: a second put leaves the file untouched; duplicates in a batch are written once", () => {
		const { store } = freshStore();
		const [hash] = store.putLeaves(["same bytes"]);
		store.putLeaves(["other"]); // the store exists now; the snapshot covers every file
		const before = snapshot(store.root);
		expect(store.putLeaves(["same bytes", "same bytes", "other"])).toEqual([hash, hash, sha256Hex("other")]);
		expect(store.objects.put(new TextEncoder().encode("same bytes"))).toBe(hash);
		expect(snapshot(store.root)).toEqual(before);
		const { store: other } = freshStore();
		expect(other.putLeaves(["a", "b", "a", "a"])).toEqual(["a", "b", "a", "a"].map((s) => sha256Hex(s)));
		expect(other.objects.list()).toHaveLength(2);
	});

	it("publishing onto an existing name reports it and replaces nothing; no temp file stays", () => {
		const { store } = freshStore();
		const [hash] = store.putLeaves(["published first"]);
		const dir = join(store.objects.dir, hash.slice(0, 2));
		const before = snapshot(store.root, false);
		expect(publishOnce(dir, hash, new TextEncoder().encode("published first"))).toBe("exists");
		expect(snapshot(store.root, false)).toEqual(before);
	});

	it("sets a damaged existing file aside (renamed beside it, never deleted) and writes the right bytes", () => {
		const { store } = freshStore();
		const [hash] = store.putLeaves(["the real bytes"]);
		const dir = join(store.objects.dir, hash.slice(0, 2));
		const path = join(dir, hash);
		const seen: string[] = [];
		store.objects.onQuarantine = (q) => void seen.push(q.reason);
		const cases: [string, () => void, RegExp][] = [
			["corrupt", () => overwrite(path, "the REAL bytes"), /^corrupt: its bytes hash to [0-9a-f]{64}$/],
			["truncated", () => overwrite(path, "the real"), /^truncated: 8 of 14 bytes$/],
			[
				"a symlink",
				() => {
					unlinkSync(path);
					symlinkSync("/dev/zero", path);
				},
				/^not a regular file$/,
			],
			[
				"a directory",
				() => {
					unlinkSync(path);
					mkdirSync(path);
				},
				/^not a regular file$/,
			],
		];
		for (const [what, damage, reason] of cases) {
			damage();
			const kept = readdirSync(dir).length;
			expect(store.putLeaves(["the real bytes"]), what).toEqual([hash]);
			expect(readFileSync(path, "utf8"), what).toBe("the real bytes");
			expect(lstatSync(path).mode & 0o777, what).toBe(0o444);
			expect(seen.at(-1), what).toMatch(reason);
			// The damaged file is still there, under its quarantine name; nothing else appeared.
			const names = readdirSync(dir);
			expect(names.length, what).toBe(kept + 1);
			expect(names.filter((n) => isQuarantineName(n)).length).toBe(seen.length);
		}
		expect(store.objects.list()).toEqual([hash]);
		expect(store.objects.quarantined.map((q) => q.hash)).toEqual([hash, hash, hash, hash]);
	});

	it("never follows a symlink or waits on a FIFO under a final name when reading", () => {
		const { store } = freshStore();
		const [hash] = store.putLeaves(["linked"]);
		const path = join(store.objects.dir, hash.slice(0, 2), hash);
		unlinkSync(path);
		symlinkSync("/dev/zero", path);
		expect(refusal(() => store.objects.read(hash), "NOT_FILE").message).toContain("is not a regular file (a symlink)");
		unlinkSync(path);
		execFileSync("mkfifo", [path]);
		expect(refusal(() => store.objects.read(hash), "NOT_FILE").message).toContain("(a special file)");
	});

	it("refuses input that is neither text nor bytes, or text UTF-8 cannot carry", () => {
		const { store } = freshStore();
		expect(() => store.putLeaves([42 as unknown as string])).toThrow(/span 0 is number 42/);
		expect(() => store.putLeaves(["ok", "lone \uD800 surrogate"])).toThrow(/span 1 is not well-formed Unicode/);
		expect(snapshot(store.root).size).toBe(0);
	});

	it("names missing, truncated and corrupt objects with the fold, the entry and both hashes", () => {
		const { store } = freshStore();
		const [hash] = store.putLeaves(["0123456789"]);
		const path = join(store.objects.dir, hash.slice(0, 2), hash);
		const ctx = { fold: "f0123456789", entry: "8c1f2e3d", bytes: 10 };
		overwrite(path, "01234");
		let err = refusal(() => store.objects.read(hash, ctx), "TRUNCATED");
		expect(err.message).toBe(
			`fold f0123456789: entry 8c1f2e3d: object ${hash} is truncated: expected 10 bytes, found 5 (expected sha256 ${hash}, found ${sha256Hex("01234")})`,
		);
		expect([err.fold, err.entry, err.expected, err.actual]).toEqual([
			"f0123456789",
			"8c1f2e3d",
			hash,
			sha256Hex("01234"),
		]);
		overwrite(path, "0123456780");
		err = refusal(() => store.objects.read(hash, ctx), "MISMATCH");
		expect(err.message).toBe(
			`fold f0123456789: entry 8c1f2e3d: object ${hash} is corrupt: expected sha256 ${hash}, found ${sha256Hex("0123456780")}`,
		);
		overwrite(path, "0123456789");
		err = refusal(() => store.objects.read(hash, { ...ctx, bytes: 11 }), "BAD_RECORD");
		expect(err.message).toContain("the record says 11 bytes and it has 10");
		const absent = sha256Hex("never stored");
		err = refusal(() => store.objects.read(absent, ctx), "MISSING");
		expect(err.message).toContain(`fold f0123456789: entry 8c1f2e3d: object ${absent} is missing`);
		expect(store.objects.has(absent)).toBe(false);
	});

	it("lists only final names: temp files and strays are ignored", () => {
		const { store } = freshStore();
		const [hash] = store.putLeaves(["kept"]);
		const dir = join(store.objects.dir, hash.slice(0, 2));
		const temp = `.${hash}.4242.0123456789abcdef.tmp`;
		expect(isTempName(temp)).toBe(true);
		expect(isTempName(hash)).toBe(false);
		linkSync(join(dir, hash), join(dir, temp));
		writeFileSync(join(dir, "notes.txt"), "stray");
		expect(store.objects.list()).toEqual([hash]);
	});
});

describe("records", () => {
	it("encode deterministically (key order does not matter) as plain msgpack any decoder reads", () => {
		const rec = sampleRecord();
		const shuffled = JSON.parse(JSON.stringify(rec), (_k, v) =>
			v && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v,
		);
		expect(Object.keys(shuffled)[0]).toBe("children");
		const bytes = encodeRecord(rec);
		expect(Buffer.from(encodeRecord(shuffled)).equals(Buffer.from(bytes))).toBe(true);
		expect(plainMsgpack(bytes)).toEqual(rec);
		expect(decodeRecord(bytes)).toEqual(rec);
	});

	it("round-trip through the store under records/<2 hex>/<hash of the bytes>", () => {
		const { store } = freshStore();
		const fold = buildFold(
			store,
			entries(3).map((entry) => ({ entry })),
			"tool-batch",
		);
		const path = join(store.records.dir, fold.recordHash.slice(0, 2), fold.recordHash);
		expect(sha256Hex(readFileSync(path))).toBe(fold.recordHash);
		expect(statSync(path).mode & 0o777).toBe(0o444);
		expect(store.readRecord(fold.recordHash)).toEqual(fold.record);
		expect(store.putRecord(fold.record)).toBe(fold.recordHash); // idempotent
		expect(store.records.list()).toEqual([fold.recordHash]);
	});

	const mutations: [string, (r: Record<string, unknown>) => unknown, StoreErrorCode, RegExp][] = [
		["not an object", () => [1, 2], "BAD_RECORD", /expected a fold record object, got an array of 2/],
		["unknown format", (r) => ({ ...r, format: "pi-fold.other" }), "BAD_RECORD", /unknown format "pi-fold.other"/],
		["newer version", (r) => ({ ...r, v: 2, extra: true }), "BAD_RECORD", /version v=2 is newer .* upgrade pi-fold/],
		["version 0", (r) => ({ ...r, v: 0 }), "BAD_RECORD", /version must be 1, got number 0/],
		["version as text", (r) => ({ ...r, v: "1" }), "BAD_RECORD", /version must be 1, got "1"/],
		["extra field", (r) => ({ ...r, note: 1 }), "BAD_RECORD", /unknown field\(s\) "note"/],
		["missing field", ({ brief: _b, ...r }) => r, "BAD_RECORD", /lacks field\(s\) brief/],
		["bad id", (r) => ({ ...r, id: "f../../etc" }), "BAD_ID", /id must be "f" followed by 10/],
		[
			"id of another identity",
			(r) => ({ ...r, id: "f0000000000" }),
			"BAD_RECORD",
			/id f0000000000 does not match identity/,
		],
		[
			"upper-case identity",
			(r) => ({ ...r, identity: String(r.identity).toUpperCase() }),
			"BAD_ID",
			/identity must be a SHA-256/,
		],
		["kind", (r) => ({ ...r, kind: "summary" }), "BAD_RECORD", /kind must be one of .*got "summary"/],
		["provenance", (r) => ({ ...r, provenance: "model" }), "BAD_RECORD", /provenance must be one of/],
		["brief type", (r) => ({ ...r, brief: 7 }), "BAD_RECORD", /brief must be a string, got number 7/],
		[
			"brief length",
			(r) => ({ ...r, brief: "b".repeat(4001) }),
			"BAD_RECORD",
			/brief has 4001 characters, at most 4000/,
		],
		["children not array", (r) => ({ ...r, children: {} }), "BAD_RECORD", /children must be an array/],
		["no children", (r) => ({ ...r, children: [] }), "BAD_RECORD", /children is empty/],
	];
	const childMutations: [string, (c: Record<string, unknown>) => unknown, StoreErrorCode, RegExp][] = [
		[
			"child type",
			(c) => ({ ...c, type: "blob" }),
			"BAD_RECORD",
			/children\[0\].type must be "leaf" or "fold", got "blob"/,
		],
		["child not object", () => "leaf", "BAD_RECORD", /children\[0\] must be an object/],
		["leaf bytes negative", (c) => ({ ...c, bytes: -1 }), "BAD_RECORD", /children\[0\].bytes must be a whole number/],
		["leaf bytes fraction", (c) => ({ ...c, bytes: 1.5 }), "BAD_RECORD", /children\[0\].bytes must be a whole number/],
		["leaf bytes text", (c) => ({ ...c, bytes: "4" }), "BAD_RECORD", /children\[0\].bytes must be a whole number/],
		["leaf hash", (c) => ({ ...c, hash: "../../etc/passwd" }), "BAD_ID", /children\[0\].hash must be a SHA-256/],
		["leaf entry id", (c) => ({ ...c, entryId: "../x" }), "BAD_ID", /children\[0\].entryId must be/],
		["leaf extra", (c) => ({ ...c, record: "x" }), "BAD_RECORD", /children\[0\] has unknown field\(s\) "record"/],
	];

	it.each([
		...mutations,
		...childMutations.map(
			([n, f, c, m]) =>
				[
					n,
					(r: Record<string, unknown>) => ({ ...r, children: [f((r.children as Record<string, unknown>[])[0])] }),
					c,
					m,
				] as const,
		),
	])("refuse %s, when validated, encoded, decoded or stored", (_name, mutate, code, message) => {
		const bad = mutate(sampleRecord() as unknown as Record<string, unknown>);
		expect(refusal(() => validateRecord(bad), code).message).toMatch(message);
		expect(refusal(() => encodeRecord(bad as FoldRecord), code).message).toMatch(message);
		const raw = new Packr({ useRecords: false, variableMapSize: true }).pack(bad);
		expect(refusal(() => decodeRecord(raw, "record x"), code).message).toMatch(/^record x: /);
		const { store } = freshStore();
		store.putLeaves(["seed"]);
		refusedUntouched(store.root, () => store.putRecord(bad as FoldRecord), code);
		// The same bytes written by something else: reading them back is refused the same way.
		const hash = store.records.put(raw);
		const err = refusal(() => store.readRecord(hash), code);
		expect(err.message).toContain(`record ${hash}: `);
		expect(err.message).toMatch(message);
		refusal(() => store.verifyFold(hash), code);
	});

	it("refuse a brief msgpack cannot carry (a lone surrogate would be stored as U+FFFD)", () => {
		const bad = { ...sampleRecord(), brief: "a\uDC00" };
		expect(refusal(() => encodeRecord(bad), "BAD_RECORD").message).toMatch(/brief is not well-formed Unicode/);
		const { store } = freshStore();
		store.putLeaves(["seed"]);
		refusedUntouched(store.root, () => store.putRecord(bad), "BAD_RECORD");
	});

	it("refuse bytes that are not one plain msgpack value", () => {
		const good = encodeRecord(sampleRecord());
		expect(refusal(() => decodeRecord(new Uint8Array([0xd4, 0x01, 0x00]), "record r"), "BAD_RECORD").message).toMatch(
			/^record r: not a msgpack value \(Unknown extension 1\)/,
		);
		// msgpackr's own extensions decode to class instances: refused as not a record.
		expect(refusal(() => decodeRecord(new Uint8Array([0xc1]), "record r"), "BAD_RECORD").message).toBe(
			"record r: expected a fold record object, got an object (C1Type)",
		);
		const trailing = new Uint8Array([...good, 0x00]);
		expect(refusal(() => decodeRecord(trailing), "BAD_RECORD").message).toMatch(/not a msgpack value/);
		expect(refusal(() => decodeRecord(good.subarray(0, good.length - 3)), "BAD_RECORD").message).toMatch(
			/not a msgpack value/,
		);
	});
});

describe("folds", () => {
	it("verify nested folds from the store alone and return every leaf in order, byte for byte", () => {
		const { store } = freshStore();
		const e = entries(9);
		const a = buildFold(
			store,
			e.slice(0, 3).map((entry) => ({ entry })),
			"tool-batch",
		);
		const b = buildFold(
			store,
			e.slice(4, 6).map((entry) => ({ entry })),
			"chapter",
		);
		const c = buildFold(store, [{ fold: a }, { entry: e[3] }, { fold: b }], "consolidation");
		const top = buildFold(store, [{ fold: c }, ...e.slice(6).map((entry) => ({ entry }))], "consolidation");
		expect(c.identity).toBe(identityOf([a.identity, sha256Hex(e[3].json), b.identity]));
		for (const fold of [a, b, c, top]) {
			const v = store.verifyFold(fold.recordHash, { id: fold.id, identity: fold.identity });
			expect(v.record).toEqual(fold.record);
			expect(v.recordHash).toBe(fold.recordHash);
			expect(v.leaves.map((l) => [l.entryId, l.hash, l.fold])).toEqual(
				fold.leaves.map((l) => [l.entryId, l.hash, l.fold]),
			);
			expect(v.leaves.map((l) => Buffer.from(l.bytes).toString("utf8"))).toEqual(fold.leaves.map((l) => l.json));
		}
		expect(store.verifyFold(top.recordHash).leaves.map((l) => l.entryId)).toEqual(e.map((x) => x.id));
	});

	it("verify deep nesting without a depth limit", () => {
		const { store } = freshStore();
		const e = entries(60, 40);
		let fold = buildFold(store, [{ entry: e[0] }], "tool-batch");
		for (let i = 1; i < e.length; i++) fold = buildFold(store, [{ fold }, { entry: e[i] }], "consolidation");
		const v = store.verifyFold(fold.recordHash);
		expect(v.leaves.map((l) => l.entryId)).toEqual(e.map((x) => x.id));
		expect(v.leaves[0].fold).not.toBe(fold.id);
	});

	it("refuse a record whose objects or child folds are not all present and verified; nothing is written", () => {
		const { store } = freshStore();
		const e = entries(4);
		const a = buildFold(
			store,
			e.slice(0, 2).map((entry) => ({ entry })),
			"tool-batch",
		);
		const ghost = syntheticEntry(next, 99, 100);
		const ghostHash = sha256Hex(ghost.json);
		const leaf = (x: { id: string; json: string }, hash = sha256Hex(x.json), bytes = Buffer.byteLength(x.json)) =>
			({ type: "leaf", entryId: x.id, hash, bytes }) as const;
		const recordOver = (children: FoldRecord["children"], identity?: string): FoldRecord => {
			const id = identity ?? identityOf(children.map((c) => (c.type === "leaf" ? c.hash : c.identity)));
			return { ...a.record, kind: "consolidation", id: foldIdOf(id), identity: id, children };
		};
		store.putLeaves([e[2].json]);
		const missing = refusedUntouched(
			store.root,
			() => store.putRecord(recordOver([leaf(e[2]), leaf(ghost)])),
			"MISSING",
		);
		expect(missing.message).toContain(`entry ${ghost.id}: object ${ghostHash} is missing`);
		expect(missing.entry).toBe(ghost.id);
		const wrongLength = recordOver([leaf(e[2], undefined, Buffer.byteLength(e[2].json) + 1)]);
		refusedUntouched(store.root, () => store.putRecord(wrongLength), "BAD_RECORD");
		const liar = recordOver([leaf(e[2])], sha256Hex("not the children"));
		expect(refusedUntouched(store.root, () => store.putRecord(liar), "MISMATCH").message).toContain(
			"does not match its children",
		);
		const absentChild = { type: "fold", id: a.id, identity: a.identity, record: sha256Hex("no such record") } as const;
		refusedUntouched(store.root, () => store.putRecord(recordOver([absentChild, leaf(e[2])])), "MISSING");
		// A child pointing at a real record of a different fold.
		const b = buildFold(store, [{ entry: e[3] }], "chapter");
		const swapped = { type: "fold", id: a.id, identity: a.identity, record: b.recordHash } as const;
		const err = refusedUntouched(store.root, () => store.putRecord(recordOver([swapped])), "MISMATCH");
		expect(err.message).toContain(`record ${b.recordHash} is fold ${b.id}`);
	});

	it("refuse a stored record whose identity does not verify, or that is not the fold the session names", () => {
		const { store } = freshStore();
		const e = entries(2);
		const a = buildFold(
			store,
			e.map((entry) => ({ entry })),
			"chapter",
		);
		const wrong = sha256Hex("wrong identity");
		// Written around putRecord, as a buggy or hostile writer would.
		const forged = store.records.put(encodeRecord({ ...a.record, identity: wrong, id: foldIdOf(wrong) }));
		const err = refusal(() => store.verifyFold(forged), "MISMATCH");
		expect(err.message).toBe(
			`fold ${foldIdOf(wrong)}: identity does not verify: the record states ${wrong}, its children hash to ${a.identity}`,
		);
		expect(refusal(() => store.verifyFold(a.recordHash, { id: "f0000000000" }), "MISMATCH").message).toContain(
			`record ${a.recordHash} is fold ${a.id}, expected f0000000000`,
		);
		refusal(() => store.verifyFold(a.recordHash, { identity: wrong }), "MISMATCH");
		const absent = sha256Hex("absent");
		expect(refusal(() => store.verifyFold(absent, { id: a.id }), "MISSING").message).toContain(
			`fold ${a.id}: record ${absent} is missing`,
		);
	});
});
