// The edges of the window, in real AgentSessions (faux provider, offline): a 32k window with Pi's
// own compaction settings, where three tool batches can be most of the budget; Pi's threshold asking
// below pi-fold's budget; and a session where nothing lossless is left. The session always goes on,
// and what the provider receives is checked request by request.
import { fauxAssistantMessage, fauxText, fauxToolCall, type Message } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { makeSession, removeTempDirs, type TestSession } from "../harness/pi-harness.ts";
import {
	fauxPromptTokens,
	isSummaryRequest,
	WORKLOAD_DONE,
	WORKLOAD_PROMPT,
	WORKLOAD_ROOT,
	workloadSteps,
} from "../harness/workload.ts";
import { type PiFold, type PiFoldOptions, registerPiFold } from "../src/index.ts";
import type { FoldRuntime } from "../src/runtime/runtime.ts";
import { AUTOMATED_NOTICE_TAG, RECORD_TYPE } from "../src/vocabulary.ts";
import { behindPiFold } from "./helpers/behind-pi-fold.ts";
import { damageStored } from "./helpers/damage.ts";
import { recordingUi } from "./helpers/recording-ui.ts";
import { isAppendOf, pairingProblems } from "./helpers/requests.ts";

afterAll(removeTempDirs);

/** What Pi's compaction did, as an extension loaded after pi-fold sees it (a cancel stops the handler chain). */
interface PiCompactions {
	failed: { reason: string; aborted: boolean }[];
}

async function edgeSession(opts: {
	window: number;
	maxTokens?: number;
	options?: PiFoldOptions;
	settings?: Record<string, unknown>;
}): Promise<{
	h: TestSession;
	rt: () => FoldRuntime;
	pi: PiCompactions;
	actions: () => ReturnType<PiFold["runtime"]["actions"]>;
}> {
	let fold: PiFold | undefined;
	const pi: PiCompactions = { failed: [] };
	const h = await makeSession({
		cwd: WORKLOAD_ROOT,
		persist: true,
		contextWindow: opts.window,
		maxTokens: opts.maxTokens ?? 4096,
		...(opts.settings ? { settings: opts.settings } : {}),
		// The model's card prices a cache read, so the cost model decides (as on a catalog model).
		cost: { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 0 },
		extensions: [
			(api) => {
				fold = registerPiFold(api, opts.options ?? {});
			},
			(api: ExtensionAPI) => {
				api.on("session_compact_failed", (e) => void pi.failed.push({ reason: e.reason, aborted: e.aborted }));
			},
		],
	});
	const rt = () => {
		const r = fold?.runtime.get();
		if (!r) throw new Error(`no runtime: ${fold?.runtime.reason()}`);
		return r;
	};
	return { h, rt, pi, actions: () => fold?.runtime.actions() };
}

const assistants = (h: TestSession) =>
	h.session.sessionManager
		.getBranch()
		.flatMap((e) => (e.type === "message" && e.message.role === "assistant" ? [e.message] : []));

const textOf = (m: { content: unknown }) =>
	Array.isArray(m.content) ? m.content.map((b: { text?: string }) => b.text ?? "").join("") : String(m.content);

/** The receipts a request carries (a custom message reaches the provider as a user message). */
const receiptsIn = (messages: readonly Message[]) =>
	messages.filter(
		(m) => m.role === "user" && textOf(m).includes(`<${AUTOMATED_NOTICE_TAG}>`) && textOf(m).includes("commit:"),
	).length;

describe("a 32k window with Pi's default compaction settings", () => {
	const WINDOW = 32_000;
	const STAGES = 40;

	it("runs to its end inside the window, rewriting at most every third request, with one receipt at a time", async () => {
		const { h, rt, pi } = await edgeSession({ window: WINDOW });
		try {
			// Reads of up to 2000 lines: three batches are most of the budget, and one read can be an eighth of the window.
			h.script(workloadSteps(STAGES, { seed: 7, readLines: { min: 400, max: 2000 }, windowLimit: WINDOW }));
			await h.session.prompt(WORKLOAD_PROMPT);
			const answers = assistants(h);
			expect(textOf(answers.at(-1) ?? { content: "" })).toContain(`${WORKLOAD_DONE} in ${STAGES} stages`);
			expect(answers.filter((m) => m.stopReason !== "toolUse" && m.stopReason !== "stop")).toEqual([]);
			const status = rt().status();
			expect(status.fence.stopped).toBe(0);
			expect(h.extensionErrors).toEqual([]);
			expect(status.rewrites.unattributed).toBe(0);

			const requests = h.captured.filter((c) => !isSummaryRequest(c.context)).map((c) => c.context.messages);
			// Every request fits the window (the provider would refuse one that does not), and is provider-valid.
			for (const [i, m] of requests.entries()) {
				expect(fauxPromptTokens({ messages: m }), `request ${i}`).toBeLessThanOrEqual(WINDOW);
				expect(pairingProblems(m), `request ${i}`).toEqual([]);
				// An earlier receipt leaves the window with the next commit.
				expect(receiptsIn(m), `request ${i}`).toBeLessThanOrEqual(1);
			}
			const rewrites = requests.flatMap((m, i) => (i > 0 && !isAppendOf(requests[i - 1], m) ? [i] : []));
			expect(status.commits.length).toBeGreaterThan(2);
			expect(rewrites.length / requests.length).toBeLessThanOrEqual(1 / 3);
			// Never two rewrites in a row here: no request came near what the window cannot take.
			expect(rewrites.filter((r, k) => k > 0 && rewrites[k - 1] === r - 1)).toEqual([]);
			// pi-fold's budget is where Pi's compaction acts, so Pi never had to be declined turn after turn.
			expect(status.budget).toMatchObject({ limit: "compaction" });
			expect(pi.failed.filter((f) => f.aborted).length).toBeLessThanOrEqual(status.commits.length / 4);
			expect(h.session.sessionManager.getBranch().filter((e) => e.type === "compaction")).toEqual([]);
			expect(status.noticesShown).toBeLessThanOrEqual(2);

			// A commit at a run's last turn (a /fold while idle, committed at the one-turn answer's end)
			// appends no receipt: the run's last message stays the answer, the one print mode prints.
			h.script(workloadSteps(4, { seed: 9, idPrefix: "more-", windowLimit: WINDOW }));
			await h.session.prompt(WORKLOAD_PROMPT);
			expect(rt().lattice?.pending().length).toBeGreaterThan(0);
			const before = rt().commits.length;
			await h.session.prompt("/fold");
			h.script([fauxAssistantMessage(fauxText("the survey is complete"))]);
			await h.session.prompt("Anything left?");
			expect(rt().commits.length).toBe(before + 1);
			const last = h.session.messages.at(-1) as Message;
			expect(last.role).toBe("assistant");
			expect(textOf(last)).toBe("the survey is complete");
		} finally {
			h.dispose();
		}
	}, 300_000);
});

describe("Pi's threshold below pi-fold's budget (providerInputBudget above it)", () => {
	it("is answered by folding the marks there are, so Pi stops asking; nothing is summarised", async () => {
		// 64k window: Pi compacts past 64,000 - 16,384 = 47,616; the person's budget lets pi-fold go to 62,000.
		const { h, rt, pi } = await edgeSession({ window: 64_000, options: { providerInputBudget: 62_000 } });
		try {
			// Reads large enough that the window reaches Pi's threshold between the cost model's commits.
			h.script(workloadSteps(40, { seed: 3, readLines: { min: 1200, max: 3000 }, windowLimit: 64_000 }));
			await h.session.prompt(WORKLOAD_PROMPT);
			const c = rt().status().compaction;
			expect(c.thresholdFolded).toBeGreaterThan(0);
			// Each fold answered Pi's threshold; declining again and again would mean it did not.
			expect(c.thresholdCancelled).toBeLessThanOrEqual(c.thresholdFolded);
			// Pi reports each declined or folded-for pass as an aborted compaction.
			expect(pi.failed.filter((f) => f.reason === "threshold" && f.aborted).length).toBe(
				c.thresholdFolded + c.thresholdCancelled,
			);
			expect(c.thresholdPassed).toBe(0);
			expect(h.session.sessionManager.getBranch().filter((e) => e.type === "compaction")).toEqual([]);
			expect(rt().status().rewrites.unattributed).toBe(0);
		} finally {
			h.dispose();
		}
	}, 300_000);
});

describe("nothing lossless left and the next request would not fit", () => {
	it("lets Pi's own compaction run once, says so once, and the session goes on", async () => {
		const WINDOW = 24_000;
		// bash results never fold here: nothing lossless can make room.
		const { h, rt } = await edgeSession({
			window: WINDOW,
			maxTokens: 2_000,
			options: { blacklistAutoFoldTools: ["bash"] },
		});
		const ui = recordingUi();
		await h.session.bindExtensions({ uiContext: ui.ui });
		try {
			// Each stage prints ~4,800 tokens; five of them pass the window.
			const stage = (i: number) =>
				fauxAssistantMessage(
					[fauxToolCall("bash", { command: `seq -s ' ' ${i * 10_000} ${i * 10_000 + 4_000}` }, { id: `b${i}` })],
					{
						stopReason: "toolUse",
					},
				);
			const stages = Array.from({ length: 8 }, (_, i) => stage(i + 1));
			h.script([
				...Array.from({ length: 20 }, () => (context: Parameters<typeof isSummaryRequest>[0]) => {
					if (isSummaryRequest(context)) return fauxAssistantMessage(fauxText("## Goal\nPrint numbers.\n"));
					if (fauxPromptTokens(context) > WINDOW)
						return fauxAssistantMessage([], { stopReason: "error", errorMessage: "prompt is too long" });
					return stages.shift() ?? fauxAssistantMessage(fauxText("all printed"));
				}),
			]);
			await h.session.prompt("print the numbers");
			const answers = assistants(h);
			expect(textOf(answers.at(-1) ?? { content: "" })).toBe("all printed");
			const status = rt().status();
			expect(status.compaction.thresholdPassed).toBeGreaterThan(0);
			expect(h.session.sessionManager.getBranch().filter((e) => e.type === "compaction").length).toBeGreaterThan(0);
			expect(status.fence.stopped).toBe(0);
			// One notice, however often it happened.
			const told = ui.notes.filter((n) => n.message.includes("Pi's own compaction summarises"));
			expect(told).toHaveLength(1);
			expect(h.extensionErrors).toEqual([]);
		} finally {
			h.dispose();
		}
	}, 300_000);
});

describe("an extension after pi-fold that drops pi-fold's boundary entries", () => {
	/** Loaded after pi-fold: at the first two boundaries holding a pi-fold commit, `how` undoes the batch. */
	const dropper =
		(how: "replace" | "refuse", dropped: number[]) =>
		(api: ExtensionAPI): void => {
			api.on("turn_end", (e) => {
				const commits = e.entries.some(
					(d) => d.type === "custom" && d.customType === RECORD_TYPE && (d.data as { op?: string }).op === "commit",
				);
				if (!commits || dropped.length >= 2) return undefined;
				dropped.push(e.turnIndex);
				// "refuse": one draft Pi cannot append (its target does not exist), so Pi drops the whole batch.
				return {
					entries:
						how === "replace"
							? []
							: [...e.entries, { type: "context_edit", targetId: "no-such-entry", replacement: null }],
				};
			});
		};

	it.each(["replace", "refuse"] as const)(
		"%s: status and the window agree at every request, and the marks fold later",
		async (how) => {
			const dropped: number[] = [];
			const agree: boolean[] = [];
			const WINDOW = 32_000;
			const { h, fold: piFold } = await behindPiFold((fold) => [
				dropper(how, dropped),
				// After pi-fold's own context handler: what pi-fold holds against what this request shows.
				(api: ExtensionAPI) => {
					api.on("context", (e) => {
						const visible = fold()
							?.runtime.get()
							?.lattice?.window()
							.filter((w) => w.type === "fold").length;
						const shown = e.messages.filter((m) => textOf(m as { content: unknown }).startsWith("[pi-fold f")).length;
						agree.push(visible === shown);
					});
				},
			]);
			const fold = piFold();
			try {
				h.script(workloadSteps(40, { seed: 7, readLines: { min: 400, max: 2000 }, windowLimit: WINDOW }));
				await h.session.prompt(WORKLOAD_PROMPT);
				const rt = fold?.runtime.get();
				if (!rt) throw new Error("no runtime");
				expect(dropped).toHaveLength(2);
				const status = rt.status();
				// Each dropped proposal was reported, its commit forgotten; the marks folded at a later commit.
				expect(status.problems.filter((p) => p.includes("were not appended"))).toHaveLength(2);
				const records = h.session.sessionManager
					.getBranch()
					.filter(
						(e) => e.type === "custom" && e.customType === RECORD_TYPE && (e.data as { op?: string }).op === "commit",
					);
				expect(status.commits.length).toBe(records.length);
				expect(records.length).toBeGreaterThan(0);
				// What pi-fold holds is what the session says: at every request, the folds it holds visible
				// are the briefs the request shows.
				expect(agree.length).toBe(h.captured.length);
				expect(agree.every(Boolean)).toBe(true);
				expect(status.rewrites.unattributed).toBe(0);
				for (const c of h.captured) expect(pairingProblems(c.context.messages)).toEqual([]);
			} finally {
				h.dispose();
			}
		},
		120_000,
	);
});

describe("a record damaged in the store while the session runs", () => {
	it("is found at the first read, written again from the session's own bytes, and said at once", async () => {
		const { h, rt, actions } = await edgeSession({ window: 32_000 });
		try {
			h.script(workloadSteps(24, { seed: 7, readLines: { min: 400, max: 2000 }, windowLimit: 32_000 }));
			await h.session.prompt(WORKLOAD_PROMPT);
			const open = rt().view;
			const root = open?.lattice.visibleRoots().find((id) => open.records.has(id));
			if (!open || !root) throw new Error("no committed root");
			const file = h.session.sessionManager.getSessionFile() as string;
			damageStored(file, h.session.sessionManager.getSessionId(), "record", open.records.get(root) as string);
			expect(
				rt()
					.status()
					.problems.filter((p) => p.startsWith("store:")),
			).toEqual([]);
			const peek = actions()?.peek(root, { bytes: 1000 });
			expect(peek?.ok, peek && !peek.ok ? peek.reason : "").toBe(true);
			const said = rt()
				.status()
				.problems.filter((p) => p.startsWith("store:"));
			// The store set the damaged copy aside; the fold's record was written again from the session.
			expect(said.length).toBeGreaterThan(0);
			for (const line of said) expect(line).toMatch(/\(repaired\)$/);
			expect(
				said.some(
					(l) =>
						l.includes(`fold ${root} could not be read back`) &&
						l.includes("written again from the session's own bytes"),
				),
			).toBe(true);
			// Every fold verifies again, and status says nothing needs action.
			for (const id of open.lattice.visibleRoots()) expect(actions()?.peek(id, { bytes: 100 }).ok, id).toBe(true);
			expect(rt().status().problemsOpen).toBe(0);
			expect(rt().view?.damaged.has(root)).toBe(false);
		} finally {
			h.dispose();
		}
	}, 300_000);

	it("is checked before a consolidation names it: written again first, said, and every fold verifies", async () => {
		const damaged = new Map<string, string>();
		const WINDOW = 32_000;
		const { h, fold: piFold } = await behindPiFold((fold) => [
			// Halfway: every standing root's record damaged in the store, none of them read.
			(api: ExtensionAPI) => {
				api.on("turn_start", (e, ctx) => {
					const open = fold()?.runtime.get()?.view;
					if (e.turnIndex !== 24 || !open) return;
					for (const id of open.lattice.visibleRoots()) {
						const hash = open.records.get(id);
						if (!hash) continue;
						damaged.set(id, hash);
						const file = ctx.sessionManager.getSessionFile() as string;
						damageStored(file, ctx.sessionManager.getSessionId(), "record", hash);
					}
				});
			},
		]);
		const fold = piFold();
		try {
			h.script(workloadSteps(56, { seed: 7, readLines: { min: 400, max: 2000 }, windowLimit: WINDOW }));
			await h.session.prompt(WORKLOAD_PROMPT);
			const rt = fold?.runtime.get();
			const after = rt?.view;
			if (!rt || !after) throw new Error("no runtime");
			expect(damaged.size).toBeGreaterThan(0);
			// Consolidations took damaged roots: each one taken was written again first, and said so.
			const taken = [...damaged.keys()].filter((id) => typeof after.lattice.get(id)?.parent === "string");
			expect(taken.length).toBeGreaterThan(0);
			const said = rt
				.status()
				.problems.filter((p) => p.includes("could not be read back; written again from the session's own bytes"));
			for (const id of taken)
				expect(
					said.some((l) => l.includes(`fold ${id} `)),
					id,
				).toBe(true);
			// Nothing was built over an unreadable fold: every fold of the lattice reads back and verifies.
			const actions = fold?.runtime.actions();
			for (const f of after.lattice.folds().filter((x) => x.state !== "pending")) {
				const peek = actions?.peek(f.id, { bytes: 100 });
				expect(peek?.ok, `${f.id}: ${peek && !peek.ok ? peek.reason : ""}`).toBe(true);
			}
			expect(rt.status().problemsOpen).toBe(0);
		} finally {
			h.dispose();
		}
	}, 600_000);
});
