// Overflow recovery end to end: the faux provider refuses one request of the scripted workload as
// too long (the workload's `overflowAt`). pi-fold must answer Pi's overflow compaction by
// cancelling it, committing folds, and asking for exactly one continuation, so the run completes
// without a lossy summary and every request stays provider-valid.
import type { AssistantMessage, Message } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSession, removeTempDirs, type TestSession } from "../harness/pi-harness.ts";
import { isSummaryRequest, WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "../harness/workload.ts";
import { OVERFLOW_NOTICE_MAX_BYTES, parseOverflowMessage } from "../src/edits/overflow-notice.ts";
import { type PiFold, registerPiFold } from "../src/index.ts";
import type { FoldRuntime } from "../src/runtime/runtime.ts";
import { OVERFLOW_NOTICE_TYPE, RECEIPT_TYPE } from "../src/vocabulary.ts";
import { isAppendOf, pairingProblems, providerProblems } from "./helpers/requests.ts";

const STAGES = 10;
/** Large enough that no threshold commit is due before the overflow: the recovery has marks to fold. */
const BUDGET = 60_000;
/** The request the provider refuses: late enough that several stages are marked. */
const OVERFLOW_AT = 6;

interface Seen {
	compacted: string[];
	failed: { reason: string; aborted: boolean }[];
	settles: { outcome: string; continue: boolean }[];
}

describe("a context-overflow error is recovered by folding, with one continuation", () => {
	let h: TestSession;
	let rt: FoldRuntime;
	const seen: Seen = { compacted: [], failed: [], settles: [] };
	let work: Message[][];
	let answers: AssistantMessage[];

	beforeAll(async () => {
		let fold: PiFold | undefined;
		h = await makeSession({
			cwd: WORKLOAD_ROOT,
			persist: true,
			contextWindow: 200_000,
			// Compaction must be enabled: Pi asks extensions about an overflow only then.
			settings: { compaction: { enabled: true, reserveTokens: 16_384, keepRecentTokens: 2000 } },
			extensions: [
				(pi) => {
					fold = registerPiFold(pi, { providerInputBudget: BUDGET });
				},
				(pi: ExtensionAPI) => {
					pi.on("session_compact", (e) => void seen.compacted.push(e.reason));
					pi.on("session_compact_failed", (e) => void seen.failed.push({ reason: e.reason, aborted: e.aborted }));
					// Runs after pi-fold's handler: sees what it decided.
					pi.on("agent_before_settle", (e) => void seen.settles.push({ outcome: e.outcome, continue: e.continue }));
				},
			],
		});
		h.script(workloadSteps(STAGES, { seed: 3, overflowAt: OVERFLOW_AT }));
		await h.session.prompt(WORKLOAD_PROMPT);
		const runtime = fold?.runtime.get();
		if (!runtime) throw new Error(`no runtime: ${fold?.runtime.reason()}`);
		rt = runtime;
		work = h.captured.filter((c) => !isSummaryRequest(c.context)).map((c) => c.context.messages);
		answers = h.session.sessionManager
			.getBranch()
			.flatMap((e) => (e.type === "message" && e.message.role === "assistant" ? [e.message] : []));
	}, 300_000);
	afterAll(() => {
		h?.dispose();
		removeTempDirs();
	});

	it("the run completes: every stage and the final answer, after one refused request", () => {
		expect(h.extensionErrors).toEqual([]);
		expect(rt.status().problems).toEqual([]);
		// Every stage's request, the final answer's, and the refused one.
		expect(work).toHaveLength(STAGES + 2);
		const failed = answers.filter((a) => a.stopReason === "error");
		expect(failed).toHaveLength(1);
		expect(parseOverflowMessage(failed[0].errorMessage ?? "").tokens).toBeGreaterThan(0);
		const last = answers.at(-1);
		expect(last?.stopReason).toBe("stop");
		expect(last?.content.some((b) => b.type === "text" && b.text.startsWith("Done:"))).toBe(true);
	});

	it("Pi's compaction was cancelled and never summarised; pi-fold continued exactly once", () => {
		expect(h.captured.filter((c) => isSummaryRequest(c.context))).toHaveLength(0);
		expect(seen.compacted).toEqual([]);
		expect(seen.failed.filter((f) => f.reason === "overflow")).toEqual([{ reason: "overflow", aborted: true }]);
		const status = rt.status();
		expect(status.compaction.overflowSeen).toBe(1);
		expect(status.compaction.overflowRecovered).toBe(1);
		expect(status.compaction.overflowPassed).toBe(0);
		expect(seen.settles.filter((s) => s.continue)).toEqual([{ outcome: "error", continue: true }]);
	});

	it("the recovery is one commit, sized down to minTarget, with its receipt and one bounded notice", () => {
		const overflowCommits = rt.commits.filter((c) => c.reason === "overflow");
		expect(overflowCommits).toHaveLength(1);
		const c = overflowCommits[0];
		expect(c.committed.length).toBeGreaterThan(0);
		expect(c.edits).toBeGreaterThan(0);
		expect(c.after).toBeLessThan(c.before);
		const branch = h.session.sessionManager.getBranch();
		const notices = branch.filter((e) => e.type === "custom_message" && e.customType === OVERFLOW_NOTICE_TYPE);
		expect(notices).toHaveLength(1);
		const notice = notices[0];
		if (notice.type !== "custom_message" || typeof notice.content !== "string") throw new Error("notice is not text");
		expect(Buffer.byteLength(notice.content)).toBeLessThanOrEqual(OVERFLOW_NOTICE_MAX_BYTES);
		expect(notice.content).toContain("too long");
		// The commit's receipt comes before it, in the same batch (an unbriefed-marks notice may sit between).
		const batch = branch.slice(branch.indexOf(notice) - 2, branch.indexOf(notice));
		expect(batch.some((e) => e.type === "custom_message" && e.customType === RECEIPT_TYPE)).toBe(true);
	});

	it("the retried request is the refused one folded: an attributed overflow rewrite, smaller, and nothing unattributed", () => {
		const refused = OVERFLOW_AT;
		const retried = refused + 1;
		expect(isAppendOf(work[refused], work[retried])).toBe(false);
		expect(JSON.stringify(work[retried]).length).toBeLessThan(JSON.stringify(work[refused]).length);
		// The notice reached the model in the retry.
		expect(JSON.stringify(work[retried].at(-1))).toContain("too long");
		const counters = rt.recorder.counters();
		expect(counters.requests).toBe(work.length);
		expect(counters.attributed.overflow).toBe(1);
		expect(counters.unattributed).toBe(0);
		expect(counters.lapsedAnnouncements).toBe(0);
		// Every other request only appends (or is a threshold commit's rewrite).
		const commitRewrites = rt.commits.filter((c) => c.reason === "threshold").length;
		let rewrites = 0;
		for (let i = 1; i < work.length; i++) if (!isAppendOf(work[i - 1], work[i])) rewrites++;
		expect(rewrites).toBe(1 + commitRewrites);
		expect(counters.attributed.commit).toBe(commitRewrites);
	});

	it("every request stays provider-valid", async () => {
		for (const [i, c] of h.captured.entries()) {
			expect(pairingProblems(c.context.messages), `request ${i}`).toEqual([]);
			expect(await providerProblems(c.context), `request ${i} on the wire`).toEqual([]);
		}
	});
});

describe("parseOverflowMessage", () => {
	it("reads the numbers of the usual phrasings and nothing from others", () => {
		expect(parseOverflowMessage("prompt is too long: 210000 tokens > 200000 maximum")).toMatchObject({
			tokens: 210000,
			maximum: 200000,
		});
		expect(parseOverflowMessage("input length: 12,345 tokens exceeds 8,192")).toMatchObject({
			tokens: 12345,
			maximum: 8192,
		});
		const none = parseOverflowMessage("context_length_exceeded");
		expect(none.tokens).toBeUndefined();
		expect(none.maximum).toBeUndefined();
	});
});
