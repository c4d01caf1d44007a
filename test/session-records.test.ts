// Session records: the lattice of a branch is rebuilt from that branch's pi-fold entries, after
// reopening, /tree navigation and fork; bad or newer records are reported and skipped.
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { foldEverything } from "../harness/fold-fixture.ts";
import { removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { syntheticSession } from "../harness/synthetic-session.ts";
import { ancestorStores } from "../src/session/fork.ts";
import { JOURNAL_VERSION, parseJournalOp } from "../src/session/journal.ts";
import { type Rebuilt, type RecordSource, rebuildLattice } from "../src/session/rebuild.ts";
import { FoldStore } from "../src/store/index.ts";
import { RECORD_TYPE } from "../src/vocabulary.ts";

const core = nodeCore();
afterAll(removeTempDirs);

const storeOf = (sm: SessionManager) =>
	FoldStore.forSession({ sessionFile: sm.getSessionFile(), sessionId: sm.getSessionId() }, core);

function rebuild(sm: SessionManager, source?: FoldStore | RecordSource): Rebuilt {
	const r = rebuildLattice(
		sm.getBranch(),
		sm.buildContextEntries(),
		core,
		source instanceof FoldStore ? { store: source } : source,
	);
	if (!r.ok) throw new Error(r.reason);
	return r;
}

const shape = (r: Rebuilt) => r.lattice.folds().map((f) => [f.id, f.state, f.start, f.end, f.parent, f.brief]);

describe("rebuilding the lattice from a session branch", () => {
	it("reopening the file gives the same lattice, with every record checked against the store", () => {
		const dir = tempDir("records");
		const sm = syntheticSession(dir, 12);
		const folded = foldEverything(sm, core, 3);
		const before = folded.lattice.folds().map((f) => [f.id, f.state, f.start, f.end, f.parent, f.brief]);
		expect(before.length).toBeGreaterThan(12);

		const file = sm.getSessionFile();
		if (!file) throw new Error("session not persisted");
		const reopened = SessionManager.open(file, dir);
		const r = rebuild(reopened, storeOf(reopened));
		expect(r.problems).toEqual([]);
		expect(shape(r)).toEqual(before);
		expect([...r.records.keys()].sort()).toEqual([...folded.records.keys()].sort());
	});

	it("follows /tree navigation: before the records the branch is raw, back at the leaf it is folded again", () => {
		const dir = tempDir("records-tree");
		const sm = syntheticSession(dir, 6);
		const lastMessage = sm.getLeafId();
		if (!lastMessage) throw new Error("empty session");
		const folded = foldEverything(sm, core, 2);
		const leaf = sm.getLeafId();
		if (!leaf) throw new Error("no leaf");
		const folds = folded.lattice.folds().length;
		expect(folds).toBeGreaterThan(0);

		sm.branch(lastMessage);
		const raw = rebuild(sm, storeOf(sm));
		expect(raw.lattice.folds()).toEqual([]);
		expect(raw.lattice.window().every((w) => w.type === "raw")).toBe(true);

		sm.branch(leaf);
		const again = rebuild(sm, storeOf(sm));
		expect(again.lattice.folds()).toHaveLength(folds);
		expect(again.problems).toEqual([]);
	});

	it("a fork adopts its parent's folds into its own store, verified, and rebuilds the same lattice", () => {
		const dir = tempDir("records-fork");
		const sm = syntheticSession(dir, 5);
		const folded = foldEverything(sm, core, 2);
		const file = sm.getSessionFile();
		if (!file) throw new Error("session not persisted");
		const fork = SessionManager.forkFrom(file, dir, dir);
		expect(fork.getSessionId()).not.toBe(sm.getSessionId());
		const own = storeOf(fork);
		expect(own.records.list()).toEqual([]); // a new session id: a new, empty store

		const withoutParents = rebuild(fork, own);
		// Reported: as a problem, or as repaired when the session's own bytes could write the record again.
		expect([...withoutParents.problems, ...withoutParents.repaired].join("\n")).toMatch(
			/neither this session's store nor a parent's/,
		);

		const r = rebuild(fork, { store: own, ancestors: ancestorStores(fork.getHeader()?.parentSession, core).stores });
		expect(r.problems).toEqual([]);
		expect(shape(r)).toEqual(folded.lattice.folds().map((f) => [f.id, f.state, f.start, f.end, f.parent, f.brief]));
		for (const [id, record] of r.records) {
			expect(own.verifyFold(record, { id }).leaves.length).toBeGreaterThan(0); // now in the fork's own store
		}
	});

	it("reports and skips a record from a newer format, an unknown op and a malformed one, and keeps the rest", () => {
		const dir = tempDir("records-bad");
		const sm = syntheticSession(dir, 4);
		foldEverything(sm, core, 2);
		const good = rebuild(sm, storeOf(sm));
		sm.appendCustomEntry(RECORD_TYPE, { v: JOURNAL_VERSION + 1, op: "mark", future: true });
		sm.appendCustomEntry(RECORD_TYPE, { v: JOURNAL_VERSION, op: "teleport", id: "f0000000000" });
		sm.appendCustomEntry(RECORD_TYPE, { v: JOURNAL_VERSION, op: "expand", id: "../../etc/passwd" });
		sm.appendCustomEntry(RECORD_TYPE, "not an object");
		const r = rebuild(sm, storeOf(sm));
		expect(r.problems).toHaveLength(4);
		expect(r.problems[0]).toMatch(/a newer record format v=2/);
		expect(r.problems[1]).toMatch(/unknown record op "teleport"/);
		expect(r.problems[2]).toMatch(/expand record: id is not a fold id/);
		expect(r.problems[3]).toMatch(/record data is not an object/);
		expect(shape(r)).toEqual(shape(good));
	});

	it("reports a record the lattice refuses (an expand of a fold that does not exist) without applying it", () => {
		const dir = tempDir("records-refused");
		const sm = syntheticSession(dir, 3);
		foldEverything(sm, core, 2);
		const good = rebuild(sm);
		sm.appendCustomEntry(RECORD_TYPE, { v: 1, op: "expand", id: "f0123456789" });
		const r = rebuild(sm);
		expect(r.problems).toHaveLength(1);
		expect(r.problems[0]).toMatch(/f0123456789/);
		expect(shape(r)).toEqual(shape(good));
	});

	it("a commit whose record is missing from the store is reported, naming the fold", () => {
		const dir = tempDir("records-missing");
		const sm = syntheticSession(dir, 3);
		const folded = foldEverything(sm, core, 10);
		const other = FoldStore.temporary(core, `empty-${Date.now()}`); // a store without these records
		const r = rebuild(sm, other);
		const someFold = [...folded.records.keys()][0];
		const reported = [...r.problems, ...r.repaired];
		expect(reported.length).toBeGreaterThan(0);
		expect(reported.join("\n")).toContain(someFold);
	});
});

describe("record parsing", () => {
	it("accepts what the writer writes and refuses each malformed field by name", () => {
		const commit = { id: "f0123456789", record: "a".repeat(64), brief: "b", provenance: "deterministic" };
		expect(parseJournalOp({ v: 1, op: "commit", folds: [commit] }).ok).toBe(true);
		const cases: [unknown, RegExp][] = [
			[{ v: 1, op: "commit", folds: [] }, /folds is not a non-empty list/],
			[{ v: 1, op: "commit", folds: [{ ...commit, record: "../x" }] }, /folds\[0\]\.record is not a sha256 hex/],
			[{ v: 1, op: "commit", folds: [{ ...commit, provenance: "mine" }] }, /provenance is not one of/],
			[{ v: 1, op: "mark", id: "f0123456789", kind: "everything", from: "a", to: "b" }, /kind is not one of/],
			[{ v: 1, op: "pin", entryIds: [] }, /entryIds is not a non-empty list/],
			[{ v: 1, op: "consolidate", roots: ["f0123456789"], maxGap: 0, fold: commit }, /two or more fold ids/],
			[{ v: "1", op: "expand", id: "f0123456789" }, /an unknown record format v="1"/],
		];
		for (const [data, reason] of cases) {
			const parsed = parseJournalOp(data);
			expect(parsed.ok).toBe(false);
			if (!parsed.ok) expect(parsed.reason).toMatch(reason);
		}
	});
});
