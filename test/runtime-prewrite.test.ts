// Leaf prewrites inside a real Pi AgentSession: a staged mark's leaf objects are written to the
// store in the background at turn_end, before any commit; the commit takes them as durable and
// writes only its records, and a background write that failed (or whose object vanished) is
// rewritten by the commit, which still lands only once every leaf is durable.
import { renameSync } from "node:fs";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { afterAll, afterEach, describe, expect, it, vi } from "vitest";
import { makeSession, removeTempDirs, type TestSession } from "../harness/pi-harness.ts";
import { WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "../harness/workload.ts";
import { type PiFold, registerPiFold } from "../src/index.ts";
import type { FoldRuntime } from "../src/runtime/runtime.ts";
import { FoldStore } from "../src/store/index.ts";
import { packHolding } from "./helpers/store-audit.ts";

const STAGES = 10;
const BUDGET = 14_000;

/** Leaf hashes of the pending marks, as the lattice names them. */
function pendingLeafHashes(rt: FoldRuntime): string[] {
	const lattice = rt.lattice;
	if (!lattice) return [];
	const hashOf = new Map(lattice.entries.map((e) => [e.id, e.hash]));
	const out = new Set<string>();
	const visit = (id: string) => {
		for (const child of lattice.get(id)?.children ?? []) {
			if (child.type === "fold") visit(child.id);
			else out.add(hashOf.get(child.entryId) as string);
		}
	};
	for (const f of lattice.pending()) visit(f.id);
	return [...out];
}

interface Run {
	h: TestSession;
	rt: FoldRuntime;
	/** Per turn that staged marks before any commit: whether each of their leaves was in the store. */
	beforeCommit: { leaves: number; present: number }[];
}

/**
 * The workload with pi-fold, plus an observer after pi-fold's turn ends: while no commit has
 * happened yet it waits for the background writes of the pending marks (never for a timer) and
 * looks in the store; `tamper` may then disturb it.
 */
async function run(tamper?: (rt: FoldRuntime, store: FoldStore, hashes: string[]) => void): Promise<Run> {
	let fold: PiFold | undefined;
	const beforeCommit: Run["beforeCommit"] = [];
	const h = await makeSession({
		cwd: WORKLOAD_ROOT,
		persist: true,
		contextWindow: 1_000_000,
		extensions: [
			(pi) => {
				fold = registerPiFold(pi, { providerInputBudget: BUDGET });
			},
			(pi: ExtensionAPI) => {
				const look = async () => {
					const rt = fold?.runtime.get();
					const store = rt?.store;
					if (!rt || !store || rt.commits.length > 0) return;
					const hashes = pendingLeafHashes(rt);
					if (hashes.length === 0) return;
					await rt.prewriter.durable(store, hashes);
					beforeCommit.push({ leaves: hashes.length, present: hashes.filter((x) => store.objects.has(x)).length });
					tamper?.(rt, store, hashes);
				};
				// After pi-fold's own: a turn's marks are made when it ends (the next turn's start, the run's end).
				pi.on("turn_start", look);
				pi.on("agent_end", look);
			},
		],
	});
	h.script(workloadSteps(STAGES, { seed: 11 }));
	await h.session.prompt(WORKLOAD_PROMPT);
	const rt = fold?.runtime.get();
	if (!rt) throw new Error(`no runtime: ${fold?.runtime.reason()}`);
	// The last turn's prewrites may still be in flight: let them finish inside this test.
	await rt.prewriter.idle();
	return { h, rt, beforeCommit };
}

/** Every committed fold verifies from the store (leaves included). */
function expectVerified(rt: FoldRuntime): void {
	const store = rt.store as FoldStore;
	expect(rt.records.size).toBeGreaterThan(0);
	for (const [id, record] of rt.records) expect(store.verifyFold(record, { id }).leaves.length).toBeGreaterThan(0);
	for (const f of rt.lattice?.folds() ?? []) if (f.state !== "pending") expect(rt.records.has(f.id)).toBe(true);
}

afterEach(() => void vi.restoreAllMocks());
afterAll(removeTempDirs);

describe("leaf prewrites", () => {
	it("a marking turn's leaves are in the store before any commit; commits reuse them and every fold verifies", async () => {
		const { h, rt, beforeCommit } = await run();
		try {
			expect(h.extensionErrors).toEqual([]);
			expect(rt.status().problems).toEqual([]);
			expect(beforeCommit.length).toBeGreaterThan(0);
			for (const b of beforeCommit) expect(b.present).toBe(b.leaves);
			expect(rt.commits.length).toBeGreaterThan(0);
			expect(rt.prewriter.stats.failed).toBe(0);
			expect(rt.prewriter.stats.durable).toBeGreaterThan(0);
			expectVerified(rt);
		} finally {
			h.dispose();
		}
	});

	it("a prewritten object gone before the commit is rewritten by it, with a problem", async () => {
		let removed: string | undefined;
		const { h, rt } = await run((_rt, store, hashes) => {
			if (removed) return;
			removed = hashes[0];
			// Gone: the pack holding it (with the other leaves of its write) is moved out of the store's view.
			const pack = packHolding(store, removed);
			renameSync(pack, `${pack}.moved`);
		});
		try {
			expect(removed).toBeDefined();
			expect(h.extensionErrors).toEqual([]);
			expect(rt.commits.length).toBeGreaterThan(0);
			const problems = rt.status().problems;
			expect(problems.some((p) => p.startsWith("prewrite:") && p.includes(removed as string))).toBe(true);
			expect((rt.store as FoldStore).objects.has(removed as string)).toBe(true);
			expectVerified(rt);
		} finally {
			h.dispose();
		}
	});

	it("a failed background write never throws; the commit writes those leaves itself", async () => {
		const original = FoldStore.prototype.putLeavesAsync;
		let calls = 0;
		vi.spyOn(FoldStore.prototype, "putLeavesAsync").mockImplementation(function (this: FoldStore, spans) {
			// The first write is a prewrite (the first marking turn precedes the first commit).
			if (calls++ === 0) return Promise.reject(new Error("simulated: store unwritable"));
			return original.call(this, spans);
		});
		const { h, rt } = await run();
		try {
			expect(h.extensionErrors).toEqual([]);
			expect(rt.prewriter.stats.failed).toBeGreaterThan(0);
			expect(rt.status().problems.some((p) => p.startsWith("prewrite:") && p.includes("simulated"))).toBe(true);
			expect(rt.commits.length).toBeGreaterThan(0);
			expectVerified(rt);
		} finally {
			h.dispose();
		}
	});
});
