// End to end: pi-fold under a model with a price tier (Pi's `cost.tiers`), in a real AgentSession
// (faux provider, offline) over the scripted workload, with pi-fold's default options. The tier is far
// below the window, so only the budget's price-tier rule keeps requests under it. Then a model switch
// mid-session: the next commit uses the new model's budget, and a switch while idle to a model whose
// budget the window already passes folds before the next request instead of sending it dear (or
// fencing it).
import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FAUX_PROVIDER, type FauxCost, makeSession, removeTempDirs, type TestSession } from "../harness/pi-harness.ts";
import { isSummaryRequest, WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "../harness/workload.ts";
import { runFoldStatus } from "../src/commands/fold-status.ts";
import { type PiFold, registerPiFold } from "../src/index.ts";
import { CompositionCache, windowComposition } from "../src/operations/composition.ts";
import { DEFAULT_THRESHOLDS } from "../src/policy/thresholds.ts";
import type { FoldRuntime } from "../src/runtime/runtime.ts";
import { runtimeLines } from "../src/tool/status.ts";
import { headerLines } from "../src/ui/editor-model.ts";
import { foldBarLines } from "../src/ui/fold-bar.ts";
import { windowFigure } from "../src/ui/window-figure.ts";

const { maxTarget, minTarget } = DEFAULT_THRESHOLDS;
/** The estimator's tolerance against the faux provider's billing (as in runtime.test.ts). */
const TOLERANCE = 0.1;

/** A gpt-5.x-shaped cost, the tier moved to `above`. */
function tieredCost(above: number): FauxCost {
	return {
		input: 5,
		output: 30,
		cacheRead: 0.5,
		cacheWrite: 5,
		tiers: [{ inputTokensAbove: above, input: 10, output: 45, cacheRead: 1, cacheWrite: 10 }],
	};
}

const billed = (m: AssistantMessage) => m.usage.input + m.usage.cacheRead + m.usage.cacheWrite;

function answersOf(h: TestSession): AssistantMessage[] {
	return h.session.sessionManager
		.getBranch()
		.flatMap((e) => (e.type === "message" && e.message.role === "assistant" ? [e.message as AssistantMessage] : []));
}

/** What the tool, /fold-status, the fold bar and the editor say of the budget, for the session's model now. */
/** The one window figure every display shows. */
function figureOf(fold: PiFold, ctx: ExtensionContext) {
	const actions = fold.runtime.actions();
	const rt = fold.runtime.get();
	if (!actions || !rt) throw new Error("no runtime");
	const figure = windowFigure(actions, ctx, rt.staged);
	if ("error" in figure) throw new Error(figure.error);
	return figure;
}

function surfaces(fold: PiFold, h: TestSession) {
	const rt = fold.runtime.get() as FoldRuntime;
	const ctx = { model: h.session.model, sessionManager: h.session.sessionManager } as unknown as ExtensionContext;
	const over = fold.runtime.actions()?.overview(ctx);
	if (!over?.ok) throw new Error(`no overview: ${over?.reason}`);
	const composition = windowComposition(rt, new CompositionCache(), h.session.model);
	if (!composition) throw new Error("no composition");
	return {
		status: runtimeLines(rt.status()).join("\n"),
		foldStatus: runFoldStatus(fold.runtime, ctx).text,
		bar: foldBarLines(composition).join("\n"),
		editor: headerLines(over.overview, [], figureOf(fold, ctx)).join("\n"),
	};
}

afterAll(removeTempDirs);

describe("a model with a 2x price tier far below its window, pi-fold's defaults", () => {
	const WINDOW = 60_000;
	const TIER = 20_000;
	let h: TestSession;
	let fold: PiFold | undefined;
	let rt: FoldRuntime;
	let answers: AssistantMessage[];

	beforeAll(async () => {
		h = await makeSession({
			cwd: WORKLOAD_ROOT,
			persist: true,
			contextWindow: WINDOW,
			maxTokens: 4_096,
			cost: tieredCost(TIER),
			extensions: [
				(pi) => {
					fold = registerPiFold(pi);
				},
			],
		});
		h.script(workloadSteps(20, { seed: 5 }));
		await h.session.prompt(WORKLOAD_PROMPT);
		rt = fold?.runtime.get() as FoldRuntime;
		answers = answersOf(h);
	});
	afterAll(() => h?.dispose());

	it("runs cleanly, and every commit used the tier's budget", () => {
		const status = rt.status();
		expect(h.extensionErrors).toEqual([]);
		expect(status.problems).toEqual([]);
		expect(status.fence.stopped).toBe(0);
		expect(answers.at(-1)?.stopReason).toBe("stop");
		expect(status.budget).toMatchObject({ ok: true, tokens: TIER, limit: "price tier", window: WINDOW });
		expect(status.commits.length).toBeGreaterThanOrEqual(2);
		for (const c of status.commits) expect(c.budget).toBe(TIER);
		expect(status.rewrites.unattributed).toBe(0);
	});

	it("no request passes the tier: none before the first commit, none once pi-fold has folded", () => {
		const work = h.captured.filter((c) => !isSummaryRequest(c.context));
		expect(answers).toHaveLength(work.length);
		const over = answers.map(billed).filter((t) => t > TIER);
		expect(over, `billed: ${answers.map(billed).join(" ")}`).toEqual([]);
		// Without folding the session would have passed it: the conversation outgrew the tier.
		const firstFolded = rt.commits[0].turn + 1;
		const grown = rt.commits.reduce((n, c) => n + (c.before - c.after), 0) + billed(answers[answers.length - 1]);
		expect(grown).toBeGreaterThan(TIER);
		expect(answers.slice(firstFolded).every((m) => billed(m) <= TIER)).toBe(true);
	});

	it("each commit fires at maxTarget of the tier budget and lands near minTarget of it", () => {
		for (const c of rt.commits) {
			const k = c.turn; // request k went out raw; request k + 1 is the first folded one
			expect(c.before, `commit after turn ${k}`).toBeGreaterThanOrEqual(maxTarget * TIER);
			expect(billed(answers[k]), `no commit was due before turn ${k}`).toBeLessThan(maxTarget * TIER * (1 + TOLERANCE));
			expect(billed(answers[k + 1]), `landing after turn ${k}`).toBeLessThanOrEqual(c.after * (1 + TOLERANCE));
			expect(c.after).toBeLessThan(maxTarget * TIER);
			expect(c.after).toBeGreaterThanOrEqual(minTarget * TIER * (1 - 2 * TOLERANCE));
		}
	});

	it("status, /fold-status, the fold bar and the editor name the price tier as the limit", () => {
		const s = surfaces(fold as PiFold, h);
		const why = "price tier: 2x above 20,000; window 60,000";
		expect(s.status).toContain(`budget: 20,000 tokens (${why}), model ${FAUX_PROVIDER}/faux-1`);
		expect(s.foldStatus).toContain(`20k is pi-fold's budget for it (set by ${why})`);
		expect(s.bar).toMatch(/ of 20k budget \(price tier: 2x above; window 60k\)/);
		expect(s.editor).toContain(`budget 20,000 (${why})`);
	});
});

describe("a model switch mid-session", () => {
	const TIERED = "faux-tiered";
	const SMALL = "faux-small-tier";
	/** faux-1: a 128k window and no cost, so its budget is the window's (123,904). */
	const TIER = 24_000;
	const SMALL_TIER = 12_000;
	let h: TestSession;
	let fold: PiFold | undefined;
	let rt: FoldRuntime;
	const seen: { phase: string; occupancy: number | undefined; commits: number }[] = [];

	beforeAll(async () => {
		h = await makeSession({
			cwd: WORKLOAD_ROOT,
			persist: true,
			contextWindow: 128_000,
			extraModels: [
				{ id: TIERED, contextWindow: 60_000, maxTokens: 4_096, cost: tieredCost(TIER) },
				{ id: SMALL, contextWindow: 60_000, maxTokens: 4_096, cost: tieredCost(SMALL_TIER) },
			],
			extensions: [
				(pi) => {
					fold = registerPiFold(pi);
				},
			],
		});
		rt = fold?.runtime.get() as FoldRuntime;
		const phase = async (name: string, stages: number, seed: number) => {
			h.script(workloadSteps(stages, { seed, idPrefix: `${name}-` }));
			await h.session.prompt(`${WORKLOAD_PROMPT} (${name})`);
			seen.push({ phase: name, occupancy: rt.occupancy?.tokens, commits: rt.commits.length });
		};
		await phase("p1", 4, 21);
	});
	afterAll(() => h?.dispose());

	const modelOf = (id: string) => {
		const m = h.session.modelRuntime.getModel(FAUX_PROVIDER, id);
		if (!m) throw new Error(`no model ${id}`);
		return m;
	};

	it("on the first model the window's budget holds and nothing commits below it", () => {
		// Pi's default compaction acts past 128,000 - 16,384: the budget agrees with it.
		expect(rt.status().budget).toMatchObject({ tokens: 128_000 - 16_384, limit: "compaction" });
		expect(rt.commits).toHaveLength(0);
		// The switch below must find the window under the new budget's commit threshold.
		expect(seen[0].occupancy).toBeLessThan(maxTarget * TIER);
	});

	it("the switch moves the budget at once: status and the bar name the new model's price tier", async () => {
		await h.session.setModel(modelOf(TIERED));
		const status = rt.status();
		expect(status.budget).toMatchObject({ tokens: TIER, limit: "price tier", model: `${FAUX_PROVIDER}/${TIERED}` });
		expect(status.occupancy?.budget).toBe(TIER);
		expect(rt.bridge.armed).toBe(false); // under the new commit threshold: nothing to fold yet
		const s = surfaces(fold as PiFold, h);
		expect(s.status).toContain("budget: 24,000 tokens (price tier: 2x above 24,000; window 60,000)");
		expect(s.bar).toMatch(/ of 24k budget \(price tier: 2x above; window 60k\)/);
	});

	it("the next commit uses the new budget: it fires at maxTarget of the tier, and no request passes it", async () => {
		const before = h.captured.length;
		h.script(workloadSteps(10, { seed: 22, idPrefix: "p2-" }));
		await h.session.prompt(`${WORKLOAD_PROMPT} (on ${TIERED})`);
		expect(rt.commits.length).toBeGreaterThan(0);
		for (const c of rt.commits) {
			expect(c.budget).toBe(TIER);
			expect(c.before).toBeGreaterThanOrEqual(maxTarget * TIER);
		}
		const answers = answersOf(h);
		const after = answers.slice(answers.length - (h.captured.length - before));
		expect(after.map(billed).filter((t) => t > TIER)).toEqual([]);
		expect(rt.status().problems).toEqual([]);
	});

	it("a switch while idle to a model whose budget the window already reaches folds before the next request", async () => {
		const occupancy = rt.occupancy?.tokens ?? 0;
		expect(occupancy, "the window is past the smaller model's commit threshold").toBeGreaterThanOrEqual(
			maxTarget * SMALL_TIER,
		);
		const commits = rt.commits.length;
		await h.session.setModel(modelOf(SMALL));
		expect(rt.status().budget).toMatchObject({ tokens: SMALL_TIER, limit: "price tier" });
		expect(rt.bridge.armed).toBe(true);
		const before = h.captured.length;
		h.script(workloadSteps(2, { seed: 23, idPrefix: "p3-" }));
		await h.session.prompt(`${WORKLOAD_PROMPT} (on ${SMALL})`);
		const status = rt.status();
		expect(status.fence.stopped).toBe(0);
		expect(status.problems).toEqual([]);
		expect(status.rewrites.unattributed).toBe(0);
		// The switch's fold committed at the first boundary, on the smaller budget.
		expect(rt.commits.length).toBeGreaterThan(commits);
		expect(rt.commits[commits].budget).toBe(SMALL_TIER);
		const answers = answersOf(h);
		const after = answers.slice(answers.length - (h.captured.length - before));
		expect(billed(after[0]), "the first request on the new model was already folded").toBeLessThanOrEqual(SMALL_TIER);
		expect(after.map(billed).filter((t) => t > SMALL_TIER)).toEqual([]);
	});
});
