// The agent's verbs on a real session: after a workload that committed folds, a scripted faux agent
// calls status (tree), peek, expand, refold, brief, pin, unpin, reboundary and unmark through
// pi_fold_context. The captured requests show what each did to the window; the session file and
// the store show it is durable and exact.
import { fauxAssistantMessage, fauxText, fauxToolCall, type ToolResultMessage } from "@earendil-works/pi-ai";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { type PiFold, registerPiFold } from "../src/index.ts";
import type { FoldRuntime } from "../src/runtime/runtime.ts";
import { rebuildLattice } from "../src/session/rebuild.ts";
import type { FoldToolDetails } from "../src/tool/result.ts";
import { makeSession, removeTempDirs, type TestSession, textOf, toolResultFor } from "./helpers/pi-harness.ts";
import { canonical, isAppendOf, pairingProblems } from "./helpers/requests.ts";
import { WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "./helpers/workload.ts";

const core = nodeCore();
const BUDGET = 14_000;

interface Run {
	h: TestSession;
	rt: FoldRuntime;
	fold: PiFold;
}

async function workloadRun(): Promise<Run> {
	let fold: PiFold | undefined;
	const h = await makeSession({
		cwd: WORKLOAD_ROOT,
		persist: true,
		contextWindow: 1_000_000,
		extensions: [
			(pi) => {
				fold = registerPiFold(pi, { providerInputBudget: BUDGET, thresholds: { consolidateAfter: 3 } });
			},
		],
	});
	h.script(workloadSteps(14, { seed: 5 }));
	await h.session.prompt(WORKLOAD_PROMPT);
	const rt = fold?.runtime.get();
	if (!fold || !rt) throw new Error("no runtime");
	return { h, rt, fold };
}

/** A faux step calling the tool with args computed from the request so far. */
function call(id: string, args: (messages: readonly unknown[]) => Parameters<typeof fauxToolCall>[1]) {
	return (context: { messages: readonly unknown[] }) =>
		fauxAssistantMessage(fauxToolCall("pi_fold_context", args(context.messages), { id }), { stopReason: "toolUse" });
}

function recorded(h: TestSession, id: string): ToolResultMessage & { details: FoldToolDetails } {
	const r = toolResultFor(h.session.messages, id);
	if (!r) throw new Error(`no result for ${id}`);
	return r as ToolResultMessage & { details: FoldToolDetails };
}

describe("pi_fold_context actions on a real session", () => {
	let run: Run;
	let committedId = "";
	let beforeActions = 0;
	beforeAll(async () => {
		run = await workloadRun();
		const { h, rt } = run;
		const lattice = rt.lattice;
		if (!lattice) throw new Error("no lattice");
		const root =
			lattice.visibleRoots().find((id) => lattice.get(id)?.kind === "consolidation") ?? lattice.visibleRoots()[0];
		committedId = root;
		beforeActions = h.captured.length;
		h.script([
			call("c-status", () => ({ action: "status", detail: "tree" })),
			call("c-peek", () => ({ action: "peek", id: committedId, bytes: 4000 })),
			call("c-expand", () => ({ action: "expand", id: committedId })),
			call("c-refold", () => ({ action: "refold", id: committedId })),
			fauxAssistantMessage(fauxText("inspected")),
		]);
		await h.session.prompt("Inspect your folds.");
	}, 240_000);
	afterAll(() => {
		run?.h.dispose();
		removeTempDirs();
	});

	it("commits happened and the tool answered every call", () => {
		expect(run.rt.commits.length).toBeGreaterThan(0);
		for (const id of ["c-status", "c-peek", "c-expand", "c-refold"]) {
			const r = recorded(run.h, id);
			expect(r.isError, `${id}: ${textOf(r)}`).toBe(false);
			expect(textOf(r)).toMatch(/-- window: ~\d+ of \d+ tokens/);
		}
	});

	it("status tree lists every fold with depth and parent", () => {
		const r = recorded(run.h, "c-status");
		const details = r.details as Extract<FoldToolDetails, { action: "status" }>;
		// Marks cut after the status call come later; everything listed is in transcript order.
		const order = new Map((run.rt.lattice?.folds() ?? []).map((f, i) => [f.id, i]));
		const listed = details.tree?.map((f) => order.get(f.id) ?? -1) ?? [];
		expect(listed.length).toBeGreaterThan(0);
		expect(listed).not.toContain(-1);
		expect([...listed].sort((a, b) => a - b)).toEqual(listed);
		for (const f of details.tree ?? []) {
			expect(textOf(r)).toContain(f.id);
			const live = run.rt.lattice?.get(f.id);
			expect(f.parent).toBe(f.state === "pending" ? f.parent : (live?.parent ?? null));
			expect(f.depth).toBeGreaterThanOrEqual(0);
		}
	});

	it("peek returns the exact text of the fold's entries, verified from the store, without a rewrite", () => {
		const r = recorded(run.h, "c-peek");
		expect(textOf(r)).toContain("verified by SHA-256 (from the fold store)");
		const lattice = run.rt.lattice;
		const first = lattice?.leavesOf(committedId)?.[0];
		expect(first).toBeDefined();
		expect(textOf(r)).toContain(`## entry ${first?.entryId}`);
		// The request after the peek extends the one before it.
		const reqs = run.h.captured.slice(beforeActions).map((c) => c.context.messages);
		expect(isAppendOf(reqs[1], reqs[2])).toBe(true);
	});

	it("expand restores the fold's children in the next request, refold collapses it again", () => {
		const reqs = run.h.captured.slice(beforeActions).map((c) => c.context.messages);
		// reqs[3] answers after the expand's turn: the children are back; reqs[4] after the refold.
		expect(isAppendOf(reqs[2], reqs[3])).toBe(false);
		expect(isAppendOf(reqs[3], reqs[4])).toBe(false);
		for (const r of reqs) expect(pairingProblems(r)).toEqual([]);
		const brief = run.rt.lattice?.get(committedId)?.brief ?? "<none>";
		const texts = (ms: readonly unknown[]) => ms.map((m) => canonical(m)).join("\n");
		expect(texts(reqs[2])).toContain(JSON.stringify(brief).slice(1, 60));
		expect(texts(reqs[4])).toContain(JSON.stringify(brief).slice(1, 60));
		expect(reqs[3].length).toBeGreaterThan(reqs[2].length);
		const rw = run.rt.status().rewrites;
		expect(rw.unattributed).toBe(0);
		expect(rw.attributed.expand).toBe(2);
	});

	it("a reopened session rebuilds the same lattice", () => {
		const file = run.h.session.sessionManager.getSessionFile();
		if (!file) throw new Error("no session file");
		const sm = SessionManager.open(file);
		const rebuilt = rebuildLattice(sm.getBranch(), sm.buildContextEntries(), core);
		expect(rebuilt.ok).toBe(true);
		if (!rebuilt.ok) return;
		expect(rebuilt.lattice.snapshot()).toEqual(run.rt.lattice?.snapshot());
	});
});
