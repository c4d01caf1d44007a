// Note labels ("Stage 7: …"): what counts as one, and every brief that cannot quote each note
// still writes each label word for word: a consolidation's index line (its child's middle notes),
// a chapter's omitted notes, and a nested consolidation's whole range of stages.
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { assistantMessage } from "../harness/synthetic-session.ts";
import { briefForFold } from "../src/briefs/briefs.ts";
import { type IndexChild, indexLines } from "../src/briefs/index-lines.ts";
import { labelsOf, labelsText, noteLabel, saysLabel } from "../src/briefs/note-labels.ts";
import type { FoldId } from "../src/fold-types.ts";
import { BRIEF_MAX_CHARS, briefLength, FoldLattice } from "../src/lattice/index.ts";
import { contextEntriesOf } from "../src/session/context-entries.ts";

const core = nodeCore();

describe("a note's label", () => {
	it("is a short, numbered lead before a colon or in brackets", () => {
		expect(noteLabel("Stage 7: looking at core/a.js and 2 more place(s).")).toBe("Stage 7");
		expect(noteLabel("[Step 3] running the tests")).toBe("Step 3");
		expect(noteLabel("## Task 12b: the parser")).toBe("Task 12b");
		expect(noteLabel("Now WP3: the store")).toBe("Now WP3");
	});

	it("is not prose, a path, a time or a lead without a number", () => {
		expect(noteLabel("Now let me check the tests: they fail")).toBeUndefined();
		expect(noteLabel("Summary: all done")).toBeUndefined();
		expect(noteLabel("WP1 complete. Now WP2: next")).toBeUndefined();
		expect(noteLabel("Let me look at the 3 files we changed today: a, b, c")).toBeUndefined();
		expect(noteLabel("The build at 10:30 failed")).toBeUndefined();
		expect(noteLabel("")).toBeUndefined();
	});

	it("labels are distinct and in order; said only as a whole; listed whole within the room", () => {
		expect(labelsOf(["Stage 2: a", "Stage 3: b", "Stage 2: again", "plain"])).toEqual(["Stage 2", "Stage 3"]);
		expect(saysLabel("notes Stage 12, Stage 3", "Stage 1")).toBe(false);
		expect(saysLabel("notes Stage 12, Stage 1", "Stage 1")).toBe(true);
		const labels = Array.from({ length: 20 }, (_, k) => `Stage ${k}`);
		expect(labelsText(labels, 1000)).toBe(labels.join(", "));
		const cut = labelsText(labels, 40);
		expect(cut.length).toBeLessThanOrEqual(40);
		expect(cut).toMatch(/^Stage 0, Stage 1, .*, …$/);
		expect(labelsText(labels, 5)).toBe("");
	});
});

/** A child of `stages` stages, each a note and one read. */
function stagesChild(id: string, from: number, stages: number, kind: IndexChild["kind"]): IndexChild {
	const ks = Array.from({ length: stages }, (_, j) => from + j);
	return {
		id: id as FoldId,
		kind,
		entries: 2 * stages,
		folds: kind === "consolidation" ? stages : 0,
		span: {
			calls: ks.map((k) => ({
				name: "read",
				input: { path: `src/mod${k}.ts` },
				result: { text: "ok", chars: 2, isError: false },
			})),
			notes: ks.map((k) => `Stage ${k}: reading src/mod${k}.ts and nothing else this time.`),
		},
	};
}

describe("index lines say every label", () => {
	it("a nested consolidation's line names each stage it holds, not only its first and last", () => {
		const kids = [stagesChild("f0000000001", 0, 12, "consolidation"), stagesChild("f0000000002", 12, 12, "chapter")];
		const lines = indexLines(kids, 1500);
		expect(briefLength(lines.join("\n"))).toBeLessThanOrEqual(1500);
		for (let k = 0; k < 24; k++) {
			const line = lines.find((l) => l.includes(k < 12 ? "f0000000001" : "f0000000002")) ?? "";
			expect(saysLabel(line, `Stage ${k}`), `Stage ${k}`).toBe(true);
		}
		// A label the quoted notes already say is not written twice.
		for (const line of lines) {
			const said = [...line.matchAll(/Stage \d+\b/g)].map((m) => m[0]);
			expect(new Set(said).size).toBe(said.length);
		}
	});
});

describe("a chapter's brief says the labels of the notes it leaves out", () => {
	it("120 stages in one chapter: the notes it cannot quote are named by label", () => {
		const sm = SessionManager.inMemory("/tmp");
		const from = sm.appendMessage({ role: "user", content: "Survey the modules stage by stage.", timestamp: 1 });
		let to = from;
		for (let k = 0; k < 120; k++) {
			const long = "and the notes go on for a while about what the module does ".repeat(3);
			to = sm.appendMessage(assistantMessage([{ type: "text", text: `Stage ${k}: read mod${k}, ${long}` }]));
		}
		const { entries, sources } = contextEntriesOf(sm.buildContextEntries(), core);
		const made = FoldLattice.create(core, entries);
		if (!made.ok) throw new Error(made.reason);
		const { lattice } = made;
		const mark = lattice.mark(from, to, "chapter");
		if (!mark.ok) throw new Error(mark.reason);
		const byId = new Map(sources.map((s) => [s.id, s]));
		const brief = briefForFold(lattice, mark.id, byId) ?? "";
		expect(briefLength(brief)).toBeLessThanOrEqual(BRIEF_MAX_CHARS);
		expect(brief).toMatch(/\[… \d+ notes omitted: Stage \d+/);
		for (let k = 0; k < 120; k++) expect(saysLabel(brief, `Stage ${k}`), `Stage ${k}`).toBe(true);
	});
});
