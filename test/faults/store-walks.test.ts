// Paths and records that come from outside the session must never hang or exhaust the process: a
// crafted record that names one child many times, nested (well-formed, identities correct), and a
// session header whose parentSession names a FIFO. Each becomes a reported problem.
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { nodeCore } from "../../bindings/node.ts";
import { removeTempDirs, tempDir } from "../../harness/pi-harness.ts";
import type { FoldRecord, HexHash } from "../../src/fold-types.ts";
import { adoptFold } from "../../src/session/fork.ts";
import { FoldStore, STORE_DIR_NAME, StoreError } from "../../src/store/index.ts";
import { identityOf } from "../fixtures/store-data.ts";
import { type FoldedSession, foldedSession, invalidRequests, runWorkload } from "./fault-session.ts";

afterAll(removeTempDirs);
const core = nodeCore();

/** Records R0 (one leaf) and R(k) = `fanout` copies of R(k-1), each stored; returns their hashes. */
function craftedChain(store: FoldStore, depth: number, fanout: number): HexHash[] {
	const [leaf] = store.putLeaves(["a leaf"]);
	const leafChild = { type: "leaf" as const, entryId: "e1", hash: leaf, bytes: 6 };
	let child: FoldRecord["children"][number] = leafChild;
	let children: FoldRecord["children"] = [leafChild];
	const hashes: HexHash[] = [];
	for (let level = 0; level <= depth; level++) {
		const identity = identityOf(children.map((c) => (c.type === "leaf" ? c.hash : c.identity)));
		const record: FoldRecord = {
			format: "pi-fold.fold",
			v: 1,
			id: `f${identity.slice(0, 10)}`,
			identity,
			kind: level === 0 ? "tool-batch" : "consolidation",
			brief: `level ${level}`,
			provenance: "deterministic",
			children,
		};
		const hash = store.putRecord(record);
		hashes.push(hash);
		child = { type: "fold", id: record.id, identity, record: hash };
		children = Array.from({ length: fanout }, () => child);
	}
	return hashes;
}

describe("a crafted record naming one child many times", () => {
	it("verifies each distinct record once, and refuses a walk past the leaf limit with a clear reason", () => {
		const store = new FoldStore(tempDir("crafted"), core);
		const chain = craftedChain(store, 4, 64);
		// Depth 3: 64^3 = 262,144 leaves, within the limit: four records read, one object read.
		const recordsBefore = store.records.stats.read;
		const objectsBefore = store.objects.stats.read;
		const three = store.verifyFold(chain[3]);
		expect(three.leaves).toHaveLength(64 ** 3);
		expect(store.records.stats.read - recordsBefore).toBe(4);
		expect(store.objects.stats.read - objectsBefore).toBe(1);
		// Depth 4: 16.7M leaves, refused before anything is built.
		let err: unknown;
		try {
			store.verifyFold(chain[4]);
		} catch (e) {
			err = e;
		}
		expect(err).toBeInstanceOf(StoreError);
		expect((err as StoreError).code).toBe("BAD_RECORD");
		expect((err as Error).message).toMatch(/expands to 16777216 leaves, over the limit of 1000000; not verified/);
		// And a nesting deeper than the depth limit is refused by depth.
		expect(() => store.verifyFold(chain[4], {}, { maxDepth: 3, maxLeaves: 1e9 })).toThrow(
			/folds nest more than 3 deep/,
		);
	});

	it("adopting it from a parent's store is refused the same way", () => {
		const parent = new FoldStore(tempDir("parent"), core);
		const chain = craftedChain(parent, 4, 64);
		const own = new FoldStore(tempDir("own"), core);
		expect(() => adoptFold(own, [parent], chain[4])).toThrow(/over the limit of 1000000/);
		expect(own.records.list()).toEqual([]);
	});
});

/** A copy of a folded session file as a child session: new id, header naming `parent`. */
function childSessionOf(file: string, parent: string, rewrite?: (line: Record<string, unknown>) => void): string {
	const lines = readFileSync(file, "utf8").trimEnd().split("\n");
	const header = JSON.parse(lines[0]);
	header.id = "0198c5a2-7f3e-7c2d-9b1a-000000000001";
	header.parentSession = parent;
	const body = lines.slice(1).map((l) => {
		const entry = JSON.parse(l);
		rewrite?.(entry);
		return JSON.stringify(entry);
	});
	const dir = tempDir("child");
	const out = join(dir, `2026-01-01T00-00-00-000Z_${header.id}.jsonl`);
	writeFileSync(out, `${[JSON.stringify(header), ...body].join("\n")}\n`);
	return out;
}

/** A real folded session file (one prompt of the workload with a few commits). */
async function foldedFile(): Promise<string> {
	const s = await foldedSession();
	await runWorkload(s, 10, { seed: 2 });
	expect(s.rt().status().commits.length).toBeGreaterThan(0);
	const file = s.h.session.sessionManager.getSessionFile() as string;
	s.h.dispose();
	return file;
}

/** More work on the opened session: it commits again, and every request is provider-valid. */
async function keepsCommitting(s: FoldedSession): Promise<void> {
	const before = s.h.captured.length;
	const commits = s.rt().status().commits.length;
	await runWorkload(s, 8, { seed: 3, idPrefix: "r" });
	expect(invalidRequests(s.h, before)).toEqual([]);
	expect(s.rt().status().commits.length).toBeGreaterThan(commits);
}

describe("opening a session whose parentSession is hostile", () => {
	it("a parent store holding a crafted record: opening completes and reports the refusal", async () => {
		const file = await foldedFile();
		const parentDir = tempDir("parent-session");
		const parentId = "0198c5a2-7f3e-7c2d-9b1a-000000000002";
		const parentFile = join(parentDir, `2026-01-01T00-00-00-000Z_${parentId}.jsonl`);
		writeFileSync(
			parentFile,
			`${JSON.stringify({ type: "session", version: 3, id: parentId, timestamp: "2026-01-01T00:00:00.000Z", cwd: parentDir })}\n`,
		);
		const parentStore = new FoldStore(join(parentDir, STORE_DIR_NAME, parentId), core);
		mkdirSync(dirname(parentStore.root), { recursive: true });
		const chain = craftedChain(parentStore, 4, 64);
		// The child's first commit names the crafted record (in no store but the parent's).
		let rewritten = false;
		const child = childSessionOf(file, parentFile, (e) => {
			const data = e.data as { op?: string; folds?: { record: string }[] } | undefined;
			if (!rewritten && e.type === "custom" && data?.op === "commit" && data.folds) {
				data.folds[0].record = chain[4];
				rewritten = true;
			}
		});
		expect(rewritten).toBe(true);
		const s = await foldedSession({ session: { open: child } });
		try {
			const status = s.rt().status();
			expect(status.open).toBe(true);
			expect(status.problems.some((p) => p.includes("over the limit of 1000000"))).toBe(true);
			await keepsCommitting(s);
		} finally {
			s.h.dispose();
		}
	});

	it("a parentSession naming a FIFO: opening does not block, and the problem names the path", async () => {
		const file = await foldedFile();
		const fifo = join(tempDir("fifo"), "parent.jsonl");
		execFileSync("mkfifo", [fifo]);
		const child = childSessionOf(file, fifo);
		const s = await foldedSession({ session: { open: child } });
		try {
			const status = s.rt().status();
			expect(status.open).toBe(true);
			expect(status.problems).toContainEqual(expect.stringContaining(`${fifo} is not a regular file`));
			await keepsCommitting(s);
		} finally {
			s.h.dispose();
		}
	});
});
