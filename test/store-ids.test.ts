// The fold store refuses hostile ids before they touch a path, and lives where it should.
import { statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { checkFoldId, checkHash, checkSessionId, FoldStore, foldIdOf } from "../src/store/index.ts";
import { buildFold, sha256Hex, snapshot } from "./fixtures/store-data.ts";

import { core, freshStore, refusal, refusedUntouched, scratch } from "./helpers/store-test.ts";

describe("hostile ids", () => {
	const hostile: [string, unknown][] = [
		["parent path", "../x"],
		["absolute path", "/etc/passwd"],
		["dot-dot", ".."],
		["dot", "."],
		["slash", "a/b"],
		["backslash", "a\\b"],
		["NUL", "abc\0def"],
		["empty", ""],
		["huge", "a".repeat(1_000_000)],
		["not a string", 42],
		["undefined", undefined],
	];
	const hashLike: [string, unknown][] = [
		...hostile,
		["non-hex", "g".repeat(64)],
		["63 digits", "a".repeat(63)],
		["65 digits", "a".repeat(65)],
		["upper-case", "A".repeat(64)],
		["traversal of 64", `../${"a".repeat(61)}`],
	];

	it.each(hashLike)("refuse a hash that is %s, naming the field and the value, touching nothing", (_name, value) => {
		const { store } = freshStore();
		store.putLeaves(["something"]);
		const calls: [string, () => unknown][] = [
			["object hash", () => store.objects.read(value as string)],
			["object hash", () => store.objects.has(value as string)],
			["object hash", () => store.objects.pathOf(value as string)],
			["record hash", () => store.readRecord(value as string)],
			["record hash", () => store.verifyFold(value as string)],
			["identity", () => foldIdOf(value as string)],
		];
		for (const [field, call] of calls) {
			const err = refusedUntouched(store.root, call, "BAD_ID");
			expect(err.message.startsWith(`${field} must be a SHA-256 as exactly 64 lower-case hex digits, got `)).toBe(true);
			expect(err.message.length).toBeLessThan(200);
			if (typeof value === "string") expect(err.message).toContain(JSON.stringify(value.slice(0, 20)).slice(0, -1));
		}
	});

	it.each([...hostile, ["upper-case", "F0123456789"], ["short", "f012345678"], ["no f", "00123456789"]])(
		"refuse a fold id that is %s",
		(_name, value) => {
			const err = refusal(() => checkFoldId(value), "BAD_ID");
			expect(err.message).toMatch(/^fold id must be "f" followed by 10 lower-case hex digits, got /);
			const { store } = freshStore();
			const [leaf] = store.putLeaves(["x"]);
			const rec = buildFold(store, [{ entry: { id: "e1", json: "x" } }], "chapter");
			expect(leaf).toBe(rec.leaves[0].hash);
			// An absent expectation (undefined) means "no expectation", not a bad id.
			if (value !== undefined) {
				refusedUntouched(store.root, () => store.verifyFold(rec.recordHash, { id: value as string }), "BAD_ID");
			}
		},
	);

	it.each([...hostile, ["too long", "a".repeat(129)], ["leading dot", ".hidden"], ["space", "a b"]])(
		"refuse a session id that is %s and create nothing",
		(_name, value) => {
			const dir = join(scratch, `hostile-session-${Math.random().toString(16).slice(2)}`);
			const before = snapshot(scratch);
			const err = refusal(
				() => FoldStore.forSession({ sessionFile: join(dir, "s.jsonl"), sessionId: value as string }, core),
				"BAD_ID",
			);
			expect(err.message).toMatch(/^session id must be 1 to 128 characters/);
			expect(snapshot(scratch)).toEqual(before);
		},
	);

	it("accept the ids Pi produces", () => {
		expect(checkSessionId("0198c5a2-7f3e-7c2d-9b1a-3e4f5a6b7c8d")).toBe("0198c5a2-7f3e-7c2d-9b1a-3e4f5a6b7c8d");
		expect(checkSessionId("my.session_2")).toBe("my.session_2");
		expect(checkFoldId("f0123456789")).toBe("f0123456789");
		expect(checkHash(sha256Hex(""))).toBe(sha256Hex(""));
	});
});

describe("locations", () => {
	it("put sessions without a file in one temporary directory per process, created lazily", () => {
		const a = FoldStore.forSession({ sessionId: "no-file-a" }, core);
		const b = FoldStore.forSession({ sessionId: "no-file-b", sessionFile: undefined }, core);
		const t = FoldStore.temporary(core);
		expect(dirname(a.root)).toBe(dirname(b.root));
		expect(dirname(t.root)).toBe(dirname(a.root));
		expect(a.root.startsWith(tmpdir())).toBe(true);
		expect([a.root, b.root].map((r) => r.split("/").slice(-2).join("/"))).toEqual([
			"pi-fold/no-file-a",
			"pi-fold/no-file-b",
		]);
		expect(snapshot(a.root).size).toBe(0);
		const [hash] = a.putLeaves(["in memory session"]);
		expect(Buffer.from(a.objects.read(hash)).toString("utf8")).toBe("in memory session");
		expect(b.objects.has(hash)).toBe(false);
	});

	it("create no directory until the first write", () => {
		const { store } = freshStore();
		expect(() => statSync(store.root)).toThrow(/ENOENT/);
		expect(store.objects.list()).toEqual([]);
		refusal(() => store.objects.read(sha256Hex("x")), "MISSING");
		expect(() => statSync(store.root)).toThrow(/ENOENT/);
	});
});
