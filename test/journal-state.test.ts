// The one reduction of pi-fold's records that the readers without Pi share (peek, unfold, view):
// each rule against the runtime's own rebuild of the same records, on a real folded session.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTempDirs, type TestSession } from "../harness/pi-harness.ts";
import { WORKLOAD_PROMPT, workloadSteps } from "../harness/workload.ts";
import type { PiFold } from "../src/index.ts";
import type { JournalOp } from "../src/session/journal.ts";
import { parseJournalOp } from "../src/session/journal.ts";
import { reduceJournal } from "../src/session/journal-state.ts";
import { RECORD_TYPE } from "../src/vocabulary.ts";
import { behindPiFold } from "./helpers/behind-pi-fold.ts";

afterAll(removeTempDirs);

const committed = (id: string, record: string) => ({
	id,
	record,
	brief: `[pi-fold ${id}]`,
	provenance: "deterministic",
});

describe("reduceJournal, rule by rule", () => {
	it("a mark is pending with its span; a brief writes onto it; a commit makes it committed with its record", () => {
		const ops: JournalOp[] = [
			{ v: 1, op: "mark", id: "fa", kind: "tool-batch", from: "e1", to: "e2" },
			{ v: 1, op: "brief", id: "fa", text: "the agent's words" },
		];
		const pending = reduceJournal(ops).folds.get("fa");
		expect(pending).toMatchObject({
			state: "pending",
			brief: "the agent's words",
			from: "e1",
			to: "e2",
			kind: "tool-batch",
		});
		const after = reduceJournal([...ops, { v: 1, op: "commit", folds: [committed("fa", "r1") as never] }]);
		expect(after.folds.get("fa")).toMatchObject({ state: "committed", record: "r1", commit: 0, from: "e1" });
		expect(after.committed).toEqual(["fa"]);
	});

	it("an unmark withdraws a pending mark, never a committed fold; its span stays among the marks", () => {
		const s = reduceJournal([
			{ v: 1, op: "mark", id: "fa", kind: "tool-batch", from: "e1", to: "e2" },
			{ v: 1, op: "unmark", id: "fa" },
			{ v: 1, op: "mark", id: "fb", kind: "tool-batch", from: "e3", to: "e4" },
			{ v: 1, op: "commit", folds: [committed("fb", "r2") as never] },
			{ v: 1, op: "unmark", id: "fb" },
		]);
		expect(s.folds.has("fa")).toBe(false);
		expect(s.folds.get("fb")?.state).toBe("committed");
		expect(s.marks.map((m) => m.id)).toEqual(["fa", "fb"]);
	});

	it("a consolidation is a committed fold of the commit before it; expand and refold toggle standing folds only", () => {
		const s = reduceJournal([
			{ v: 1, op: "mark", id: "fa", kind: "tool-batch", from: "e1", to: "e2" },
			{ v: 1, op: "commit", folds: [committed("fa", "r1") as never] },
			{ v: 1, op: "consolidate", roots: ["fa"], maxGap: 0, fold: committed("fp", "r3") as never },
			{ v: 1, op: "expand", id: "fp" },
			{ v: 1, op: "mark", id: "fc", kind: "tool-batch", from: "e5", to: "e6" },
			{ v: 1, op: "expand", id: "fc" },
		]);
		expect(s.folds.get("fp")).toMatchObject({ state: "expanded", record: "r3", commit: 0 });
		expect(s.folds.get("fc")?.state).toBe("pending");
		expect(s.committed).toEqual(["fa", "fp"]);
		const refolded = reduceJournal([
			{ v: 1, op: "commit", folds: [committed("fa", "r1") as never] },
			{ v: 1, op: "expand", id: "fa" },
			{ v: 1, op: "refold", id: "fa" },
		]);
		expect(refolded.folds.get("fa")?.state).toBe("committed");
	});

	it("pins and unpins hold their entries; the last word wins", () => {
		const s = reduceJournal([
			{ v: 1, op: "pin", entryIds: ["e1", "e2"] },
			{ v: 1, op: "unpin", entryIds: ["e1"] },
			{ v: 1, op: "pin", entryIds: ["e3"] },
		]);
		expect([...s.pinned]).toEqual(["e2", "e3"]);
	});
});

describe("reduceJournal over a real folded session", () => {
	let h: TestSession;
	let fold: PiFold | undefined;

	beforeAll(async () => {
		const made = await behindPiFold(() => []);
		h = made.h;
		fold = made.fold();
		h.script(workloadSteps(32, { seed: 7, readLines: { min: 400, max: 2000 }, windowLimit: 32_000 }));
		await h.session.prompt(WORKLOAD_PROMPT);
	}, 300_000);
	afterAll(() => h?.dispose());

	it("names exactly the folds the runtime's rebuild holds, each in the same state, with the same record", () => {
		const rt = fold?.runtime.get();
		const open = rt?.view;
		if (!open) throw new Error("no runtime");
		const ops = h.session.sessionManager.getBranch().flatMap((e) => {
			if (e.type !== "custom" || e.customType !== RECORD_TYPE) return [];
			const parsed = parseJournalOp(e.data);
			return parsed.ok ? [parsed.op] : [];
		});
		const s = reduceJournal(ops);
		expect(s.committed.length).toBeGreaterThan(0);
		const held = open.lattice.folds();
		expect([...s.folds.keys()].sort()).toEqual(held.map((f) => f.id).sort());
		for (const f of held) {
			const mine = s.folds.get(f.id);
			expect(mine?.state, f.id).toBe(f.state === "pending" ? "pending" : f.state);
			if (f.state !== "pending") expect(mine?.record, f.id).toBe(open.records.get(f.id));
		}
	});
});
