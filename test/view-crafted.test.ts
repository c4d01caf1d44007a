// The view reads records from outside pi-fold's control: a crafted store must never hang or exhaust
// it. A record naming one child 64 times, four deep (16.7M leaves by path), and folds inside
// themselves (X > X, X > Y > X) are each shown once, damaged, with the reason; the walk sizes each
// fold once however many paths lead to it.
import { createHash } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import type { FoldRecord, HexHash } from "../src/fold-types.ts";
import { encodeRecord, FoldStore } from "../src/store/index.ts";
import { sessionView } from "../src/view/session-view.ts";
import { RECORD_TYPE } from "../src/vocabulary.ts";
import { identityOf } from "./fixtures/store-data.ts";

afterAll(removeTempDirs);
const core = nodeCore();
const SESSION_ID = "0198c5a2-7f3e-7c2d-9b1a-0000000000c1";

type Child = FoldRecord["children"][number];

/** A well-formed record; its identity the one its children give, or `identity` (a crafted one, never checked here). */
function record(
	children: Child[],
	identity = identityOf(children.map((c) => (c.type === "leaf" ? c.hash : c.identity))),
): FoldRecord {
	const id = `f${identity.slice(0, 10)}`;
	return {
		format: "pi-fold.fold",
		v: 1,
		id,
		identity,
		kind: "consolidation",
		brief: `fold ${id}`,
		provenance: "deterministic",
		children,
	};
}

/** A session whose one commit names `committed` (records put in its store by `craft`). */
function craftedSession(craft: (store: FoldStore) => { id: string; record: HexHash }): string {
	const dir = tempDir("view-crafted");
	const file = join(dir, `2026-01-01T00-00-00-000Z_${SESSION_ID}.jsonl`);
	const store = FoldStore.forSession({ sessionFile: file, sessionId: SESSION_ID }, core);
	const committed = craft(store);
	const usage = { input: 10, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 12 };
	const lines = [
		{ type: "session", version: 3, id: SESSION_ID, timestamp: "2026-01-01T00:00:00.000Z", cwd: dir },
		{ type: "message", id: "e1", parentId: null, timestamp: "t", message: { role: "user", content: "hi" } },
		{
			type: "message",
			id: "e2",
			parentId: "e1",
			timestamp: "t",
			message: { role: "assistant", content: [{ type: "text", text: "ok" }], usage },
		},
		{
			type: "custom",
			customType: RECORD_TYPE,
			id: "e3",
			parentId: "e2",
			timestamp: "t",
			data: { v: 1, op: "commit", folds: [{ ...committed, brief: "crafted", provenance: "deterministic" }] },
		},
	];
	writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
	return file;
}

function leafOf(store: FoldStore): Child {
	const [hash] = store.putLeaves(["a leaf"]);
	return { type: "leaf", entryId: "e1", hash, bytes: 6 };
}

/** A record written as an attacker would: straight into the loose layout, past the store's checks. */
function putCrafted(store: FoldStore, r: FoldRecord): HexHash {
	const bytes = encodeRecord(r);
	const hash = createHash("sha256").update(bytes).digest("hex");
	const dir = join(store.root, "records", hash.slice(0, 2));
	mkdirSync(dir, { recursive: true });
	writeFileSync(join(dir, hash), bytes);
	return hash;
}

const foldChild = (r: FoldRecord, hash: HexHash): Child => ({
	type: "fold",
	id: r.id,
	identity: r.identity,
	record: hash,
});

describe("pi-fold view of crafted records", () => {
	it("a fan-out of 64, four deep: each fold listed once, the top one damaged as over the leaf limit", () => {
		const ids: string[] = [];
		const file = craftedSession((store) => {
			let children = [leafOf(store)];
			let top: { id: string; record: HexHash } | undefined;
			for (let level = 0; level <= 4; level++) {
				const r = record(children);
				const hash = store.putRecord(r);
				ids.push(r.id);
				top = { id: r.id, record: hash };
				children = Array.from({ length: 64 }, () => foldChild(r, hash));
			}
			return top!;
		});
		const view = sessionView(file, core);
		expect(view.data.folds.map((f) => f.id).sort()).toEqual([...ids].sort());
		const top = view.data.folds.find((f) => f.id === ids[4]);
		expect(top?.state).toBe("damaged");
		expect(top?.note).toMatch(/expands to 16777216 leaves, over the limit of 1000000/);
		// One level down (64^3 leaves) is within the bound, and whole.
		const three = view.data.folds.find((f) => f.id === ids[3]);
		expect(three?.state).toBe("committed");
		expect(three?.entries).toBe(64 ** 3);
		expect(JSON.stringify(view.data).length).toBeLessThan(1_000_000);
	});

	it("a fold inside itself (X > X): listed once, damaged, naming the cycle", () => {
		const identity = `0123456789${"0".repeat(54)}`;
		const x = `f${identity.slice(0, 10)}`;
		const file = craftedSession((store) => {
			const inner = record([leafOf(store)], identity);
			const innerHash = putCrafted(store, inner);
			const outer = record([foldChild(inner, innerHash)], identity);
			return { id: x, record: putCrafted(store, outer) };
		});
		const { folds } = sessionView(file, core).data;
		expect(folds.map((f) => f.id)).toEqual([x]);
		expect(folds[0].state).toBe("damaged");
		expect(folds[0].note).toBe(`fold ${x} > ${x}: a fold inside itself`);
	});

	it("two folds inside each other (X > Y > X): both listed once, damaged", () => {
		const [ix, iy] = ["1", "2"].map((d) => d.repeat(64));
		const [x, y] = [`f${ix.slice(0, 10)}`, `f${iy.slice(0, 10)}`];
		const file = craftedSession((store) => {
			const x0 = record([leafOf(store)], ix);
			const x0Hash = putCrafted(store, x0);
			const yr = record([foldChild(x0, x0Hash)], iy);
			const yHash = putCrafted(store, yr);
			const xr = record([foldChild(yr, yHash)], ix);
			return { id: x, record: putCrafted(store, xr) };
		});
		const { folds } = sessionView(file, core).data;
		expect(folds.map((f) => f.id).sort()).toEqual([x, y]);
		expect(folds.every((f) => f.state === "damaged")).toBe(true);
		expect(folds.map((f) => f.note).join("\n")).toMatch(/a fold inside itself|inside a cycle of folds/);
	});
});
