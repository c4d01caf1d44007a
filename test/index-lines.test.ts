// Consolidation index lines: each child says what it holds (tools, principal arguments factored,
// numeric ranges, first and last notes), within the brief cap, byte for byte the same for the same
// input. Checked on synthetic spans, on the real 2.4 MB fixture folded by the real runtime
// (replayed), and on a session recorded live with the faux provider; plus the coverage measure.
import { createHash } from "node:crypto";
import { type SessionEntry, SessionManager } from "@earendil-works/pi-coding-agent";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { FIXTURE_MISSING, fixtureSession, skipFixture } from "../harness/fixture.ts";
import { makeSession, removeTempDirs } from "../harness/pi-harness.ts";
import { assistantMessage } from "../harness/synthetic-session.ts";
import { WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "../harness/workload.ts";
import { briefForFold, leavesCallsUnnamed } from "../src/briefs/briefs.ts";
import { principalKey } from "../src/briefs/call-args.ts";
import { factor } from "../src/briefs/factor.ts";
import { type IndexChild, indexLines, indexLinesNaming } from "../src/briefs/index-lines.ts";
import { rootExpanded } from "../src/briefs/path-root.ts";
import type { FoldId } from "../src/fold-types.ts";
import { registerPiFold } from "../src/index.ts";
import { BRIEF_MAX_CHARS, briefLength, FoldLattice } from "../src/lattice/index.ts";
import { consolidationGroups, makeParent } from "../src/policy/consolidate.ts";
import { FoldPolicy } from "../src/replay/arm-fold.ts";
import { replayFile } from "../src/replay/replay.ts";
import { braceReadings, indexCoverage } from "../src/report/index-coverage.ts";
import { contextEntriesOf } from "../src/session/context-entries.ts";
import type { Open } from "../src/session/open-session.ts";

const core = nodeCore();
afterAll(removeTempDirs);
if (skipFixture) console.log(`index lines: ${FIXTURE_MISSING}`);

/** Does some reading of `line` (as written, or one group resolved) hold `value`? */
const names = (line: string, value: string) =>
	line.includes(value) || braceReadings(line).some((r) => r.includes(value));

describe("factoring many values into brace groups", () => {
	it("shares prefixes, pulls out common endings, turns whole numbers into ranges", () => {
		expect(factor(["core/a.js", "core/b.js"])).toBe("core/{a,b}.js");
		expect(factor(["stage=1", "stage=2", "stage=3", "stage=7"])).toBe("stage={1..3,7}");
		expect(factor(["src/a.ts", "lib/b.ts"])).toBe("src/a.ts, lib/b.ts");
		// A value that is a prefix of another stays readable (an empty alternative).
		expect(names(factor(["core", "core/x.js"]), "core")).toBe(true);
		// A brace or comma of its own cannot sit in a group: listed apart, verbatim.
		expect(factor(["awk '{print $1}' f", "a,b"])).toBe("awk '{print $1}' f, a,b");
	});

	it("every value stays readable from the factored text, and the text is shorter than the list", () => {
		const part = fc.constantFrom("src", "lib", "core", "a", "b", "tools", "x.ts", "y.js", "grep -n", "| head");
		const value = fc.array(part, { minLength: 1, maxLength: 5 }).map((ps) => ps.join("/"));
		fc.assert(
			fc.property(fc.uniqueArray(value, { minLength: 1, maxLength: 30 }), (values) => {
				const text = factor(values);
				for (const v of values) expect(names(text, v)).toBe(true);
				expect(text.length).toBeLessThanOrEqual(values.join(", ").length);
				expect(factor(values)).toBe(text);
			}),
			{ numRuns: 200 },
		);
	});
});

/** A child of `n` calls of `tool` with numbered or path arguments. */
function child(id: string, calls: { name: string; input: unknown }[], notes: string[]): IndexChild {
	return {
		id: id as FoldId,
		kind: "tool-batch",
		entries: calls.length + 1,
		folds: 0,
		span: { calls: calls.map((c) => ({ ...c, result: { text: "ok", chars: 2, isError: false } })), notes },
	};
}

describe("index lines within a budget", () => {
	it("60 children in 2000 characters: each named, first and last kept, cap held, same bytes twice", () => {
		const kids = Array.from({ length: 60 }, (_, k) =>
			child(
				`f${k.toString(16).padStart(10, "0")}`,
				[{ name: "repo_stage", input: { stage: k } }],
				[`Stage ${k}: built`],
			),
		);
		const lines = indexLines(kids, 1900);
		const text = lines.join("\n");
		expect(briefLength(text)).toBeLessThanOrEqual(1900);
		expect(indexLines(kids, 1900)).toEqual(lines);
		const named = kids.filter((c) => text.includes(c.id));
		expect(named.length).toBeGreaterThan(30);
		expect(text).toContain(kids[0].id);
		expect(text).toContain(kids[59].id);
		if (named.length < kids.length) expect(text).toMatch(/\[… \d+ children omitted …\]/);
		// Each named child shows its own principal argument.
		for (const c of named) {
			const line = lines.find((l) => l.includes(c.id)) ?? "";
			expect(names(line, principalKey(c.span.calls[0].input))).toBe(true);
		}
	});

	it("counts the calls its lines leave without their argument, the omitted children's too", () => {
		// 40 children of 6 distinct long paths each: far more than 600 characters can name.
		const kids = Array.from({ length: 40 }, (_, k) =>
			child(
				`f${k.toString(16).padStart(10, "0")}`,
				Array.from({ length: 6 }, (_, j) => ({ name: "read", input: { path: `pkg/module-${k}/file-${j}.ts` } })),
				[`Stage ${k}: read`],
			),
		);
		const { lines, unnamed } = indexLinesNaming(kids, 600);
		const text = lines.join("\n");
		const calls = kids.flatMap((c) => c.span.calls.map((x) => ({ id: c.id, key: principalKey(x.input) })));
		const named = calls.filter((c) => lines.some((l) => l.includes(c.id) && names(l, c.key))).length;
		expect(unnamed).toBeGreaterThan(0);
		expect(named + unnamed).toBe(calls.length);
		expect(briefLength(text)).toBeLessThanOrEqual(600);
		expect(indexLinesNaming(kids, 100_000).unnamed).toBe(0);
	});

	it("a nested range: numbered arguments as ranges, factored paths, first and last notes", () => {
		const calls = [
			...Array.from({ length: 11 }, (_, k) => ({ name: "repo_stage", input: { stage: k + 1 } })),
			{ name: "read", input: { path: "src/renderers/Nodes.js" } },
			{ name: "read", input: { path: "src/renderers/Pipelines.js" } },
		];
		const c: IndexChild = {
			...child("f0000000001", calls, ["Stage 1: start", "Stage 6: middle", "Stage 11: done"]),
			kind: "consolidation",
			folds: 11,
		};
		const [line] = indexLines([c], 600);
		expect(line).toContain("repo_stage ×11 stage={1..11}");
		expect(line).toContain("read ×2 src/renderers/{Nodes,Pipelines}.js");
		expect(line).toContain('"Stage 1: start" … "Stage 11: done"');
		expect(line).not.toContain("middle");
	});
});

/** Batches of a read and a grep each, batch k in the directory `dir(k)`. */
function sessionWithBatches(batches: number, dir = (k: number) => `mod${k}`) {
	const sm = SessionManager.inMemory("/tmp");
	sm.appendMessage({ role: "user", content: "go", timestamp: 1 });
	const spans: [string, string][] = [];
	for (let k = 0; k < batches; k++) {
		const calls = [
			{ type: "toolCall", id: `a${k}`, name: "read", arguments: { path: `src/${dir(k)}/index.ts`, limit: 80 } },
			{ type: "toolCall", id: `b${k}`, name: "bash", arguments: { command: `grep -n "export" src/${dir(k)}.ts` } },
		];
		const a = sm.appendMessage(assistantMessage([{ type: "text", text: `Stage ${k}: reading mod${k}` }, ...calls]));
		sm.appendMessage(resultOf(`a${k}`, "read", `export const mod${k} = ${k};\n`.repeat(40)));
		const r = sm.appendMessage(resultOf(`b${k}`, "bash", `1:export const mod${k}`));
		spans.push([a, r]);
	}
	const context = contextEntriesOf(sm.buildContextEntries(), core);
	const made = FoldLattice.create(core, context.entries);
	if (!made.ok) throw new Error(made.reason);
	return { lattice: made.lattice, context, spans, byId: new Map(context.sources.map((s) => [s.id, s])) };
}

function resultOf(id: string, name: string, text: string) {
	return {
		role: "toolResult",
		toolCallId: id,
		toolName: name,
		content: [{ type: "text", text }],
		isError: false,
		timestamp: 1,
	} as never;
}

/** Mark, brief and commit every span (each a tool-batch root), as a commit does. */
function commitBatches(s: ReturnType<typeof sessionWithBatches>): FoldId[] {
	const { lattice, spans, byId } = s;
	const ids = spans.map(([a, r]) => {
		const m = lattice.mark(a, r, "tool-batch");
		if (!m.ok) throw new Error(m.reason);
		expect(lattice.setDeterministicBrief(m.id, briefForFold(lattice, m.id, byId) ?? "").ok).toBe(true);
		return m.id;
	});
	expect(lattice.commit(ids).ok).toBe(true);
	return ids;
}

/** Commit every span, then consolidate `groups` of adjacent roots, as a commit does. */
function consolidateIn(
	s: ReturnType<typeof sessionWithBatches>,
	groups: number[][],
): { ids: FoldId[]; made: FoldId[] } {
	const { lattice, byId } = s;
	const ids = commitBatches(s);
	const made: FoldId[] = [];
	for (const g of groups) {
		const roots = g.map((i) => (i < 0 ? made[-i - 1] : ids[i]));
		made.push(makeParent(lattice, roots, byId));
	}
	return { ids, made };
}

describe("consolidation briefs over real lattices", () => {
	it("a consolidation of consolidations names every batch's calls two levels in", () => {
		const s = sessionWithBatches(12);
		const { made } = consolidateIn(s, [
			[0, 1, 2, 3, 4, 5],
			[6, 7, 8, 9, 10, 11],
			[-1, -2],
		]);
		const top = s.lattice.get(made[2]);
		if (!top) throw new Error("no consolidation");
		expect(briefLength(top.brief)).toBeLessThanOrEqual(BRIEF_MAX_CHARS);
		expect(briefForFold(s.lattice, top.id, s.byId)).toBe(top.brief);
		for (let k = 0; k < 12; k++) {
			expect(names(top.brief, `src/mod${k}/index.ts`)).toBe(true);
			expect(names(top.brief, `grep -n "export" src/mod${k}.ts`)).toBe(true);
		}
		expect(top.brief).toContain('"Stage 0: reading mod0" … "Stage 5: reading mod5"');
		const cov = indexCoverage(s.lattice, s.context.sources);
		expect(cov).toMatchObject({ calls: 24, visible: 24, anyDepth: 24, briefs: 1 });
	});

	it("the coverage measure credits a line only for the child it speaks for", () => {
		const s = sessionWithBatches(2);
		const { made } = consolidateIn(s, [[0, 1]]);
		const lattice = s.lattice;
		const fold = lattice.get(made[0]);
		if (!fold) throw new Error("no consolidation");
		// A hand-written brief naming batch 1's calls on batch 0's line: batch 1's calls are not named.
		const [c0] = fold.children.flatMap((c) => (c.type === "fold" ? [c.id] : []));
		const other = lattice.clone();
		const swapped = `[pi-fold ${fold.id}] two batches\n- ${c0} batch: read src/mod1/index.ts; bash grep -n "export" src/mod1.ts`;
		const cov = indexCoverage(withBrief(other, fold.id, swapped), s.context.sources);
		expect(cov.visible).toBe(0);
		expect(cov.calls).toBe(4);
	});
});

describe("a consolidation takes no more calls than its brief can name", () => {
	// Directories no range or shared prefix shortens: each call costs its own characters.
	const hashed = (k: number) => createHash("sha256").update(String(k)).digest("hex").slice(0, 16);

	it("cuts the core's runs from the end until the parent's brief names every call", () => {
		// 20 consolidations of 6 batches each: the core then joins them in runs of 12 calls a root.
		const s = sessionWithBatches(120, hashed);
		const ids = commitBatches(s);
		for (let g = 0; g < 20; g++) makeParent(s.lattice, ids.slice(6 * g, 6 * g + 6), s.byId);
		const input = { core, consolidateAfter: 10 };
		const uncut = consolidationGroups(s.lattice, input);
		const cut = consolidationGroups(s.lattice, { ...input, entriesById: s.byId });
		expect(cut).toHaveLength(uncut.length);
		const briefOver = (roots: readonly FoldId[]) => {
			const trial = s.lattice.clone();
			const id = makeParent(trial, roots, s.byId);
			return { trial, id, brief: trial.get(id)?.brief ?? "" };
		};
		// The workload is one the cap must act on: some run of the core's, whole, leaves calls unnamed.
		expect(uncut.some((run) => leavesCallsUnnamed(briefOver(run).brief))).toBe(true);
		let cutShort = 0;
		cut.forEach((run, i) => {
			// A head of the core's run: it starts where the core chose, so the window is priced from there.
			expect(run).toEqual(uncut[i].slice(0, run.length));
			expect(run.length).toBeGreaterThanOrEqual(Math.min(2, uncut[i].length));
			if (run.length < uncut[i].length) {
				cutShort++;
				// The longest such head: one root more and the brief would leave calls unnamed.
				expect(leavesCallsUnnamed(briefOver(uncut[i].slice(0, run.length + 1)).brief)).toBe(true);
			}
			const { trial, id, brief } = briefOver(run);
			expect(leavesCallsUnnamed(brief)).toBe(false);
			// Read from outside, the parent names each of its calls.
			const cov = indexCoverage(trial, s.context.sources);
			const own = cov.perBrief.find((b) => b.fold === id);
			expect(own).toMatchObject({ calls: 12 * run.length, visible: 12 * run.length });
		});
		expect(cutShort).toBeGreaterThan(0);
	});

	it("says so when its index cannot name every call, and only then", () => {
		const s = sessionWithBatches(60, hashed);
		const ids = commitBatches(s);
		const few = s.lattice.clone();
		expect(leavesCallsUnnamed(few.get(makeParent(few, ids.slice(0, 3), s.byId))?.brief ?? "x")).toBe(false);
		const all = s.lattice.clone();
		const brief = all.get(makeParent(all, ids, s.byId))?.brief ?? "";
		expect(leavesCallsUnnamed(brief)).toBe(true);
		expect(indexCoverage(all, s.context.sources).visible).toBeLessThan(120);
	});
});

/** `lattice` with `id`'s brief replaced (through the lattice's own load path, as a rebuild would). */
function withBrief(lattice: FoldLattice, id: FoldId, brief: string): FoldLattice {
	const saved = lattice.save();
	const folds = saved.folds.map((f) => (f.id === id ? { ...f, brief } : f));
	const loaded = FoldLattice.load(core, lattice.entries, { ...saved, folds });
	if (!loaded.ok) throw new Error(loaded.reason);
	return loaded.lattice;
}

/** Structural checks on every consolidation in a lattice: cap, same bytes, each child named with an argument. */
function checkConsolidations(open: Pick<Open, "lattice" | "context">): number {
	const { lattice, context } = open;
	const byId = new Map<string, SessionEntry>(context.sources.map((s) => [s.id, s]));
	let checked = 0;
	for (const f of lattice.folds()) {
		if (f.kind !== "consolidation" || f.provenance !== "deterministic") continue;
		checked++;
		expect(briefLength(f.brief)).toBeLessThanOrEqual(BRIEF_MAX_CHARS);
		expect(briefForFold(lattice, f.id, byId)).toBe(f.brief);
		// A directory the brief declares once ($R) is read back where its lines write it.
		const lines = rootExpanded(f.brief.split("\n"));
		const omitted = /\[… \d+ children omitted …\]/.test(f.brief);
		for (const c of f.children) {
			if (c.type !== "fold") continue;
			const line = lines.find((l) => l.startsWith(`- ${c.id}`));
			if (!line) {
				expect(omitted).toBe(true);
				continue;
			}
			const keys = (lattice.leavesOf(c.id) ?? []).flatMap((leaf) => {
				const e = byId.get(leaf.entryId);
				if (e?.type !== "message" || e.message.role !== "assistant") return [];
				return e.message.content.flatMap((b) => (b.type === "toolCall" ? [principalKey(b.arguments)] : []));
			});
			if (keys.length > 0) expect(keys.some((k) => names(line, k))).toBe(true);
		}
	}
	return checked;
}

describe.skipIf(skipFixture)("index lines on the real fixture, folded by the runtime (replay)", () => {
	let open: Open | undefined;
	let coverage: Awaited<ReturnType<typeof replayFile>>["index"];
	beforeAll(async () => {
		const dispose = FoldPolicy.prototype.dispose;
		// Keep the runtime's final lattice before the policy drops its temp store.
		FoldPolicy.prototype.dispose = async function (this: FoldPolicy) {
			open = this.runtime.view as Open;
			return dispose.call(this);
		};
		try {
			coverage = (await replayFile(fixtureSession(), core)).index;
		} finally {
			FoldPolicy.prototype.dispose = dispose;
		}
	}, 60_000);

	it("every consolidation: within the cap, the same bytes again, each child named with a principal argument", () => {
		if (!open) throw new Error("no runtime view");
		expect(checkConsolidations(open)).toBeGreaterThan(3);
	});

	it("the replay reports the index coverage of its window", () => {
		if (!coverage) throw new Error("no coverage");
		expect(coverage.calls).toBeGreaterThan(100);
		expect(coverage.visible).toBeLessThanOrEqual(coverage.calls);
		expect(coverage.perBrief.reduce((n, b) => n + b.calls, 0)).toBe(coverage.calls);
		// Each fold's own brief names what the window's index lines cannot fit.
		expect(coverage.anyDepth).toBeGreaterThanOrEqual(coverage.visible);
		expect(coverage.anyDepth).toBeLessThanOrEqual(coverage.calls);
	});
});

describe("index lines on a session recorded live (faux provider, real tools)", () => {
	it("every consolidation the runtime made names its children and their arguments", async () => {
		let fold: ReturnType<typeof registerPiFold> | undefined;
		const h = await makeSession({
			cwd: WORKLOAD_ROOT,
			persist: true,
			contextWindow: 1_000_000,
			extensions: [
				(pi) => {
					fold = registerPiFold(pi, { providerInputBudget: 14_000, thresholds: { consolidateAfter: 3 } });
				},
			],
		});
		try {
			h.script(workloadSteps(40, { seed: 11 }));
			await h.session.prompt(WORKLOAD_PROMPT);
			const open = fold?.runtime.get()?.view;
			if (!open) throw new Error("no runtime view");
			expect(checkConsolidations(open)).toBeGreaterThan(0);
			// Nested: some consolidation holds another.
			const nested = open.lattice
				.folds()
				.some((f) => f.kind === "consolidation" && f.parent && open.lattice.get(f.parent)?.kind === "consolidation");
			expect(nested).toBe(true);
		} finally {
			h.dispose();
		}
	}, 60_000);
});
