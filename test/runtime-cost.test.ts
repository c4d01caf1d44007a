// End to end: the cost model deciding commits in a real AgentSession (faux provider, offline) over
// the scripted workload, for a model whose card prices cache reads; beside it the same session with
// the band set by the person, which the cost model must leave exactly as set.
import type { ToolResultMessage } from "@earendil-works/pi-ai";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FauxCost, makeSession, removeTempDirs, type TestSession } from "../harness/pi-harness.ts";
import {
	CONTINUE_PROMPT,
	isSummaryRequest,
	WORKLOAD_PROMPT,
	WORKLOAD_ROOT,
	workloadSteps,
} from "../harness/workload.ts";
import { runFoldStatus } from "../src/commands/fold-status.ts";
import { type PiFold, type PiFoldOptions, registerPiFold } from "../src/index.ts";
import { Meter, type Model } from "../src/meter/meter.ts";
import { occupancyOf } from "../src/meter/occupancy.ts";
import { DEFAULT_THRESHOLDS } from "../src/policy/thresholds.ts";
import { CommitTiming } from "../src/runtime/commit-timing.ts";
import type { FoldRuntime } from "../src/runtime/runtime.ts";
import { runtimeLines } from "../src/tool/status.ts";

const WINDOW = 80_000;
const STAGES = 32;
/** A card with cache prices and no tier: writes at the input rate, reads at a tenth of it. */
const COST: FauxCost = { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 0 };
const STEPS = { seed: 5, readLines: { min: 300, max: 1000 } };

afterAll(removeTempDirs);

async function run(
	options: PiFoldOptions,
	steps = workloadSteps(STAGES, STEPS),
): Promise<{ h: TestSession; rt: FoldRuntime; fold: PiFold }> {
	let fold: PiFold | undefined;
	const h = await makeSession({
		cwd: WORKLOAD_ROOT,
		persist: true,
		contextWindow: WINDOW,
		maxTokens: 4_096,
		cost: COST,
		extensions: [
			(pi) => {
				fold = registerPiFold(pi, options);
			},
		],
	});
	h.script(steps);
	await h.session.prompt(WORKLOAD_PROMPT);
	if (!fold) throw new Error("pi-fold did not register");
	return { h, rt: fold.runtime.get() as FoldRuntime, fold };
}

/** The tool call ids of a request's newest `n` tool batches, and the ids of the results it shows raw. */
function newestBatches(messages: readonly { role: string; content?: unknown }[], n: number) {
	const batches: string[][] = [];
	for (const m of messages) {
		if (m.role !== "assistant" || !Array.isArray(m.content)) continue;
		const ids = m.content.flatMap((b: { type?: string; id?: string }) => (b.type === "toolCall" ? [String(b.id)] : []));
		if (ids.length > 0) batches.push(ids);
	}
	const raw = new Set(messages.flatMap((m) => (m.role === "toolResult" ? [(m as ToolResultMessage).toolCallId] : [])));
	return { ids: batches.slice(-n).flat(), raw };
}

describe("no band set, a card with cache prices: the cost model decides", () => {
	let h: TestSession;
	let rt: FoldRuntime;
	let fold: PiFold;
	beforeAll(async () => {
		({ h, rt, fold } = await run({}));
	});
	afterAll(() => h?.dispose());

	it("commits by the cost model, cleanly, some of them before the band would have", () => {
		const status = rt.status();
		expect(h.extensionErrors).toEqual([]);
		expect(status.problems).toEqual([]);
		expect(status.rewrites.unattributed).toBe(0);
		expect(status.commits.length).toBeGreaterThanOrEqual(2);
		expect(status.commits.every((c) => c.reason === "cost")).toBe(true);
		const budget = status.commits[0].budget;
		expect(status.commits.some((c) => c.before < DEFAULT_THRESHOLDS.maxTarget * budget)).toBe(true);
		for (const c of status.commits) expect(c.why).toBeTruthy();
	});

	it("every request after a commit still shows the newest three tool batches raw", () => {
		const work = h.captured.filter((c) => !isSummaryRequest(c.context));
		for (const c of rt.commits) {
			const next = work[c.turn + 1];
			expect(next, `the request after turn ${c.turn}`).toBeDefined();
			const { ids, raw } = newestBatches(next.context.messages, DEFAULT_THRESHOLDS.rawBatches);
			expect(ids.length).toBeGreaterThan(0);
			for (const id of ids) expect(raw.has(id), `result ${id} after turn ${c.turn}`).toBe(true);
		}
	});

	it("status and /fold-status say which policy decides, and the last reckoning in money", () => {
		const ctx = { model: h.session.model, sessionManager: h.session.sessionManager } as unknown as ExtensionContext;
		const person = runFoldStatus(fold.runtime, ctx).text;
		expect(person).toContain("policy: cost model");
		expect(person).toMatch(/last reckoning \(after turn \d+\): (committed|waited): .*rewrite ~[\d,]+ tokens = \$/);
		expect(person).not.toContain("pi-fold commits: it folds pending marks until");
		const text = runtimeLines(rt.status()).join("\n");
		expect(text).toContain("policy: cost model");
		expect(text).toMatch(/last reckoning \(after turn \d+\): (committed|waited): /);
	});
});

describe("Pi's idle cache refresh", () => {
	it("is stopped when it costs more than what the next commit keeps, and let go (keeping the cache warm) when not due", async () => {
		const { h, rt } = await run({});
		try {
			const open = rt.view;
			const model = h.session.model as Model;
			if (!open || !model) throw new Error("no session");
			const settings = { ...rt.settings, thresholds: { ...rt.settings.thresholds } };
			const timing = new CommitTiming(new Meter(rt.core, settings), settings, () => false);
			const budget = rt.budget(model);
			if (!budget.ok) throw new Error(budget.reason);
			// The window at the commit threshold, with marks to fold: whatever the prices, the next boundary commits.
			expect(open.lattice.pending().length).toBeGreaterThan(0);
			const cap = Math.ceil(settings.thresholds.maxTarget * budget.budget);
			expect(timing.prospect(open, occupancyOf(cap, budget.budget), model)).toBe(true);
			// No request will come before the entry expires: the refresh keeps nothing worth its read.
			expect(timing.warming({ action: "warm", continuationProbability: 0 })).toBe("stop");
			expect(timing.status().warmingStopped).toBe(1);
			// Pi's own "stop" stands, and is not counted as pi-fold's.
			expect(timing.warming({ action: "stop", continuationProbability: 1 })).toBeUndefined();
			expect(timing.status().warmingStopped).toBe(1);
			// An empty window: nothing is due, Pi's refresh goes on.
			expect(timing.prospect(open, occupancyOf(0, budget.budget), model)).toBe(false);
			expect(timing.warming({ action: "warm", continuationProbability: 0 })).toBeUndefined();
			expect(timing.status().warmingStopped).toBe(1);
		} finally {
			h.dispose();
		}
	});
});

describe("the band set by the person", () => {
	let h: TestSession;
	let rt: FoldRuntime;
	const band = { maxTarget: 0.6, minTarget: 0.3 };
	beforeAll(async () => {
		({ h, rt } = await run({ thresholds: band }));
	});
	afterAll(() => h?.dispose());

	it("fires only at maxTarget, exactly as set, whatever the card says", () => {
		const status = rt.status();
		expect(status.problems).toEqual([]);
		expect(status.commits.length).toBeGreaterThanOrEqual(1);
		for (const c of status.commits) {
			expect(c.reason).toBe("threshold");
			expect(c.before).toBeGreaterThanOrEqual(band.maxTarget * c.budget);
		}
		expect(runtimeLines(status).join("\n")).toContain("policy: the band");
	});
});

describe("idle past the prompt cache's lifetime", () => {
	const EVERY = 8;
	let now = 1_000_000;
	const clock = () => now;
	const steps = () => workloadSteps(STAGES, { ...STEPS, pauseEvery: EVERY });

	it("the next prompt's first request is folded first: the rewrite is free on a cold cache", async () => {
		const { h, rt } = await run({ clock }, steps());
		try {
			const before = rt.status().commits.length;
			const last = h.captured.length;
			now += 10 * 60_000; // past Pi's default 5-minute retention
			await h.session.prompt(CONTINUE_PROMPT);
			const status = rt.status();
			expect(status.problems).toEqual([]);
			expect(status.rewrites.unattributed).toBe(0);
			expect(status.policy.coldCommits).toBe(1);
			expect(runtimeLines(status).join("\n")).toContain("cold-cache commits: 1");
			// Shown on the prompt's first request (the /fold bridge), committed at its first boundary.
			const first = h.captured[last].context.messages.length;
			const previous = h.captured[last - 1].context.messages.length;
			expect(first).toBeLessThan(previous);
			expect(status.commits.length).toBe(before + 1);
			expect(status.commits.at(-1)?.reason).toBe("fold");
		} finally {
			h.dispose();
		}
	});

	it("a cache Pi kept warm while idle is not cold: no fold before the next prompt", async () => {
		const { h, rt } = await run({ clock }, steps());
		try {
			now += 4 * 60_000;
			expect(rt.timing.warming({ action: "warm" })).toBeUndefined(); // Pi refreshes the entry: warm again
			now += 4 * 60_000;
			await h.session.prompt(CONTINUE_PROMPT);
			expect(rt.status().policy.coldCommits).toBe(0);
		} finally {
			h.dispose();
		}
	});
});
