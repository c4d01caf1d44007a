// End to end: the folding runtime inside a real Pi AgentSession (faux provider, offline) over the
// scripted workload. The extension is pi-fold itself (registerPiFold with a small serving budget),
// so every fold, record, edit and receipt here was made by the runtime from Pi's hooks alone. The
// captured requests are the oracle: what the model saw, what the provider billed for it.
import type { AssistantMessage, Message, TextContent, ToolResultMessage } from "@earendil-works/pi-ai";
import { type ExtensionAPI, SessionManager } from "@earendil-works/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { makeSession, removeTempDirs, type TestSession } from "../harness/pi-harness.ts";
import { isSummaryRequest, WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "../harness/workload.ts";
import { briefForFold } from "../src/briefs/briefs.ts";
import { RECEIPT_MAX_BYTES } from "../src/edits/receipt.ts";
import { type PiFold, registerPiFold } from "../src/index.ts";
import { FoldLattice, type LatticeEntry } from "../src/lattice/index.ts";
import { DEFAULT_THRESHOLDS } from "../src/policy/thresholds.ts";
import type { FoldRuntime } from "../src/runtime/runtime.ts";
import { canonicalText } from "../src/session/context-entries.ts";
import { rebuildLattice } from "../src/session/rebuild.ts";
import { FoldStore, StoreBatch } from "../src/store/index.ts";
import { runtimeLines } from "../src/tool/status.ts";
import { RECEIPT_TYPE, RECORD_TYPE } from "../src/vocabulary.ts";
import { canonical, isAppendOf, pairingProblems, providerProblems, sharedPrefix } from "./helpers/requests.ts";

const core = nodeCore();
const STAGES = 16;
/** Small enough that 16 stages need several commits; each stage adds ~0.1-0.35 of it. */
const BUDGET = 15_000;
/** Low, so consolidation runs in this short session too. */
const CONSOLIDATE_AFTER = 3;
/**
 * Pi's own compaction threshold (window - reserveTokens = 13,000 tokens) lies between maxTarget and
 * the budget, so Pi asks to compact only when the window passes where pi-fold commits; Pi's
 * compaction must never run. (Pi asking below pi-fold's budget: runtime-edges.test.ts.)
 */
const RESERVE = 16_384;
const CONTEXT_WINDOW = RESERVE + 13_000;
/**
 * Estimator tolerance, relative to the amount estimated. The runtime estimates with the core's
 * estimator times one calibration ratio (real/estimated, from the last usage the provider
 * reported). The faux provider bills ceil(chars/4) of "role:text"; the core estimator weighs code
 * and prose differently, so one ratio measured on a window of raw tool output is off by the
 * difference between that mix and a window of briefs. Firing extends the calibrated request
 * (exact usage plus the appended messages), so 10% of it bounds the error; a landing estimate
 * rescales a rewritten window and is off by up to ~20% here, always on the safe side (it
 * overestimates), which is what is asserted for it.
 */
const TOLERANCE = 0.1;
const { maxTarget, minTarget } = DEFAULT_THRESHOLDS;

/** Prompt tokens the provider billed for the request an assistant message answers. */
const billed = (m: AssistantMessage) => m.usage.input + m.usage.cacheRead + m.usage.cacheWrite;

/** The faux provider's characters for one appended message ("\n\n" + "role:text"), as it bills them. */
function fauxChars(m: Message): number {
	const text = (c: Message["content"]) =>
		typeof c === "string"
			? c
			: c
					.map((b) =>
						b.type === "text"
							? b.text
							: b.type === "toolCall"
								? `${b.name}:${JSON.stringify(b.arguments)}`
								: b.type === "thinking"
									? b.thinking
									: "",
					)
					.join("\n");
	const body =
		m.role === "toolResult"
			? [m.toolName, ...(m.content as TextContent[]).map((b) => b.text)].join("\n")
			: text(m.content);
	return 2 + `${m.role}:${body}`.length;
}

interface Observed {
	beforeCompact: string[];
	compacted: string[];
	compactFailed: { reason: string; aborted: boolean }[];
}

function observer(seen: Observed) {
	return (pi: ExtensionAPI) => {
		pi.on("session_before_compact", (e) => void seen.beforeCompact.push(e.reason));
		pi.on("session_compact", (e) => void seen.compacted.push(e.reason));
		pi.on("session_compact_failed", (e) => void seen.compactFailed.push({ reason: e.reason, aborted: e.aborted }));
	};
}

interface Run {
	h: TestSession;
	rt: FoldRuntime;
	/** Store batches that held fold records, committed during the run. */
	recordBatches: number;
	seen: Observed;
	/** Non-summary requests, in order. */
	work: Message[][];
	/** The assistant message answering each request (same order). */
	answers: AssistantMessage[];
}

async function runWorkload(): Promise<Run> {
	const seen: Observed = { beforeCompact: [], compacted: [], compactFailed: [] };
	let fold: PiFold | undefined;
	const h = await makeSession({
		cwd: WORKLOAD_ROOT,
		persist: true,
		contextWindow: CONTEXT_WINDOW,
		settings: { compaction: { enabled: true, reserveTokens: RESERVE, keepRecentTokens: 2000 } },
		extensions: [
			(pi) => {
				fold = registerPiFold(pi, {
					providerInputBudget: BUDGET,
					thresholds: { consolidateAfter: CONSOLIDATE_AFTER },
				});
			},
			observer(seen),
		],
	});
	h.script(workloadSteps(STAGES, { seed: 11 }));
	// Store batches holding records (the background leaf writes hold leaves only).
	const stage = StoreBatch.prototype.putRecords;
	const commit = StoreBatch.prototype.commit;
	const withRecords = new WeakSet<StoreBatch>();
	let recordBatches = 0;
	StoreBatch.prototype.putRecords = function (this: StoreBatch, records) {
		withRecords.add(this);
		return stage.call(this, records);
	};
	StoreBatch.prototype.commit = function (this: StoreBatch) {
		if (withRecords.has(this)) recordBatches++;
		return commit.call(this);
	};
	try {
		await h.session.prompt(WORKLOAD_PROMPT);
	} finally {
		StoreBatch.prototype.putRecords = stage;
		StoreBatch.prototype.commit = commit;
	}
	const rt = fold?.runtime.get();
	if (!rt) throw new Error(`no runtime: ${fold?.runtime.reason()}`);
	const work = h.captured.filter((c) => !isSummaryRequest(c.context)).map((c) => c.context.messages);
	const answers = h.session.sessionManager
		.getBranch()
		.flatMap((e) => (e.type === "message" && e.message.role === "assistant" ? [e.message] : []));
	return { h, rt, recordBatches, seen, work, answers };
}

afterAll(removeTempDirs);

describe("the runtime folds a real session by itself", () => {
	let run: Run;
	beforeAll(async () => {
		run = await runWorkload();
	});
	afterAll(() => run?.h.dispose());

	it("completes with at least 3 commits, no problems and no errors", () => {
		const { rt, h } = run;
		const status = rt.status();
		// Figures for the report.
		const ms = [...status.timing.handlerMs].sort((a, b) => a - b);
		console.log(
			`commits (turn: before -> after, of ${BUDGET}):`,
			status.commits.map(
				(c) =>
					`${c.turn}: ${c.before} -> ${c.after} (billed ${billed(run.answers[c.turn + 1])})${c.consolidated.length ? " +consolidation" : ""}${c.met ? "" : " NOT MET"}`,
			),
			`\nbilled per request: ${run.answers.map(billed).join(" ")}`,
			`\nhandler ms per request: median ${ms[ms.length >> 1].toFixed(3)}, max ${ms.at(-1)?.toFixed(3)}`,
		);
		expect(h.extensionErrors).toEqual([]);
		expect(status.problems).toEqual([]);
		expect(status.commits.length).toBeGreaterThanOrEqual(3);
		expect(run.work).toHaveLength(STAGES + 1);
		expect(run.answers).toHaveLength(run.work.length);
		const last = run.answers.at(-1);
		expect(last?.stopReason).toBe("stop");
	});

	it("between commits every request only appends; rewrites are exactly the commits, and the counters agree", () => {
		const { rt, work } = run;
		const commitRequests = rt.commits.map((c) => c.turn + 1);
		let appends = 0;
		const rewrites: number[] = [];
		for (let i = 1; i < work.length; i++) {
			if (isAppendOf(work[i - 1], work[i])) appends++;
			else rewrites.push(i);
		}
		expect(rewrites).toEqual(commitRequests);
		const counters = rt.recorder.counters();
		expect(counters.requests).toBe(work.length);
		expect(counters.baselines).toBe(1);
		expect(counters.pureAppends).toBe(appends);
		expect(counters.attributed.commit).toBe(rewrites.length);
		expect(counters.unattributed).toBe(0);
		expect(counters.lapsedAnnouncements).toBe(0);
		// At a commit nothing before the first folded entry moves: the system prompt and the task stay cached.
		for (const i of rewrites) expect(sharedPrefix(work[i - 1], work[i])).toBeGreaterThanOrEqual(2);
	});

	it("each commit fires at maxTarget and lands at minTarget, within the estimator's tolerance", () => {
		const { rt, work, answers } = run;
		for (const c of rt.commits) {
			const k = c.turn; // request k was sent raw; request k + 1 is the first folded one
			// What request k + 1 would have billed without the commit: request k plus what turn k appended.
			const appended = work[k + 1].slice(sharedPrefix(work[k], work[k + 1]));
			const turnK = run.h.session.sessionManager
				.getBranch()
				.flatMap((e) => (e.type === "message" ? [e.message as Message] : []))
				.filter(
					(m) =>
						m === answers[k] ||
						(m.role === "toolResult" &&
							answers[k].content.some((b) => b.type === "toolCall" && b.id === (m as ToolResultMessage).toolCallId)),
				);
			const unfolded = Math.ceil((4 * billed(answers[k]) + turnK.reduce((n, m) => n + fauxChars(m), 0)) / 4);
			expect(unfolded, `commit at turn ${k} fired at or above maxTarget`).toBeGreaterThanOrEqual(
				maxTarget * BUDGET * (1 - TOLERANCE),
			);
			expect(billed(answers[k]), `no commit was due before turn ${k}`).toBeLessThan(
				maxTarget * BUDGET * (1 + TOLERANCE),
			);
			const landed = billed(answers[k + 1]);
			expect(landed, `commit at turn ${k} landed at or below minTarget`).toBeLessThanOrEqual(
				minTarget * BUDGET * (1 + TOLERANCE),
			);
			// The runtime's landing estimate never undershoots what the provider billed by more than the tolerance.
			expect(landed).toBeLessThanOrEqual(c.after * (1 + TOLERANCE));
			expect(appended.length).toBeGreaterThan(0);
		}
	});

	it("no request exceeds the budget, and Pi's native compaction never runs (its threshold requests are answered)", () => {
		const { rt, seen, h } = run;
		for (const [i, a] of run.answers.entries()) expect(billed(a), `request ${i}`).toBeLessThanOrEqual(BUDGET);
		expect(h.captured.filter((c) => isSummaryRequest(c.context))).toHaveLength(0);
		expect(seen.compacted).toEqual([]);
		// pi-fold loads first and cancels, so later handlers (the observer) never see the request:
		// Pi reports each cancelled one as an aborted compaction.
		expect(seen.beforeCompact).toEqual([]);
		const answered = rt.compaction.thresholdCancelled + rt.compaction.thresholdFolded;
		expect(rt.compaction.thresholdPassed).toBe(0);
		expect(seen.compactFailed).toEqual(
			Array.from({ length: answered }, () => ({ reason: "threshold", aborted: true })),
		);
	});

	it("every fold verifies from the store, and every leaf is the session's canonical bytes", () => {
		const { rt, h } = run;
		const store = rt.store as FoldStore;
		const sm = h.session.sessionManager;
		expect(rt.records.size).toBeGreaterThan(0);
		let leaves = 0;
		for (const [id, record] of rt.records) {
			const verified = store.verifyFold(record, { id });
			for (const leaf of verified.leaves) {
				const entry = sm.getEntry(leaf.entryId);
				if (!entry) throw new Error(`leaf ${leaf.entryId} is not in the session`);
				expect(Buffer.from(leaf.bytes).equals(Buffer.from(canonicalText(entry))), `leaf ${leaf.entryId}`).toBe(true);
				leaves++;
			}
		}
		expect(leaves).toBeGreaterThan(0);
		// Every committed fold of the lattice has its record.
		for (const f of rt.lattice?.folds() ?? []) if (f.state !== "pending") expect(rt.records.has(f.id)).toBe(true);
	});

	it("every captured request is provider-valid", async () => {
		for (const [i, c] of run.h.captured.entries()) {
			expect(pairingProblems(c.context.messages), `request ${i}`).toEqual([]);
			expect(await providerProblems(c.context), `request ${i} on the wire`).toEqual([]);
		}
	});

	it("every context_edit changes what its target shows (a consolidation edits only its children's first entries)", () => {
		// Replay the branch's edits in order: each must differ from the target's last edit (or, for
		// its first edit, from showing the entry as it is: an omission or a brief, never a no-op).
		const last = new Map<string, string>();
		let edits = 0;
		for (const e of run.h.session.sessionManager.getBranch()) {
			if (e.type !== "context_edit") continue;
			edits++;
			const now = canonical(e.replacement);
			expect(last.get(e.targetId), `edit ${e.id} of ${e.targetId} repeats what it shows`).not.toBe(now);
			last.set(e.targetId, now);
		}
		expect(edits).toBeGreaterThan(0);
		expect(run.rt.commits.some((c) => c.consolidated.length > 0)).toBe(true);
	});

	it("each commit is one batch: edits, records and one bounded receipt", () => {
		const branch = run.h.session.sessionManager.getBranch();
		const receipts = branch.filter((e) => e.type === "custom_message" && e.customType === RECEIPT_TYPE);
		expect(receipts).toHaveLength(run.rt.commits.length);
		for (const r of receipts) {
			if (r.type !== "custom_message" || typeof r.content !== "string") throw new Error("receipt is not text");
			expect(Buffer.byteLength(r.content)).toBeLessThanOrEqual(RECEIPT_MAX_BYTES);
			// Right before it: the commit's records, and before those its edits.
			const at = branch.indexOf(r);
			const prev = branch[at - 1];
			expect(prev.type === "custom" && prev.customType === RECORD_TYPE).toBe(true);
		}
		const edits = branch.filter((e) => e.type === "context_edit").length;
		expect(edits).toBe(run.rt.commits.reduce((n, c) => n + c.edits, 0));
		expect(run.rt.commits.some((c) => c.consolidated.length > 0)).toBe(true);
	});

	it("each commit writes one store batch, its consolidations' parents included", () => {
		expect(run.rt.commits.some((c) => c.consolidated.length > 0)).toBe(true);
		expect(run.recordBatches).toBe(run.rt.commits.length);
	});

	it("every runtime brief is the one written afresh from its fold as it stands (marks' briefs kept between commits, parents' written as planned)", () => {
		const lattice = run.rt.lattice as FoldLattice;
		const sm = run.h.session.sessionManager;
		const entries = { get: (id: string) => sm.getEntry(id) };
		let checked = 0;
		for (const f of lattice.folds()) {
			if (f.state === "pending" || f.provenance !== "deterministic") continue;
			expect(f.brief, f.id).toBe(briefForFold(lattice, f.id, entries));
			checked++;
		}
		expect(lattice.folds().filter((f) => f.kind === "consolidation").length).toBeGreaterThan(0);
		expect(checked).toBeGreaterThan(3);
	});

	it("reopening the session file gives the same lattice and the same projection", () => {
		const { h, rt } = run;
		const live = h.session.sessionManager;
		const file = live.getSessionFile();
		if (!file) throw new Error("session was not persisted");
		const reopened = SessionManager.open(file, h.sessionDir);
		expect(canonical(reopened.buildSessionProjection().messages)).toBe(
			canonical(live.buildSessionProjection().messages),
		);
		const store = FoldStore.forSession({ sessionFile: file, sessionId: reopened.getSessionId() }, core);
		const a = rebuildLattice(live.getBranch(), live.buildContextEntries(), core, { store });
		const b = rebuildLattice(reopened.getBranch(), reopened.buildContextEntries(), core, { store });
		if (!a.ok || !b.ok) throw new Error("rebuild failed");
		expect(a.problems).toEqual([]);
		expect(b.problems).toEqual([]);
		expect(b.lattice.snapshot()).toEqual(a.lattice.snapshot());
		// And the runtime's live lattice holds the same folds (it has not yet seen the last batch's receipt).
		expect(rt.lattice?.folds()).toEqual(b.lattice.folds());
		expect(b.lattice.visibleRoots().length).toBeGreaterThan(0);
	});

	it("every turn's marks are recorded where its boundary would put them: after the turn's last result", () => {
		// Most turns end quietly (no turn_end handler of pi-fold's: Pi skips the boundary), their marks
		// appended as the next turn starts; they must still never land between a call and its result.
		const branch = run.h.session.sessionManager.getBranch();
		let open = new Set<string>();
		let records = 0;
		for (const e of branch) {
			if (e.type === "message" && e.message.role === "assistant") {
				open = new Set(e.message.content.flatMap((c) => (c.type === "toolCall" ? [c.id] : [])));
			} else if (e.type === "message" && e.message.role === "toolResult") open.delete(e.message.toolCallId);
			else if (e.type === "custom" && e.customType === RECORD_TYPE) {
				records++;
				expect([...open], `record ${e.id}`).toEqual([]);
			}
		}
		expect(records).toBeGreaterThan(STAGES / 2);
		// Marked turn by turn: every stage's tool batch but the last few was marked before its commit.
		expect(run.rt.lattice?.folds().length).toBeGreaterThan(STAGES / 2);
	});

	it("status reports the runtime's state", () => {
		const status = run.rt.status();
		expect(status.budget).toMatchObject({
			ok: true,
			tokens: BUDGET,
			source: "providerInputBudget",
			limit: "providerInputBudget",
			window: CONTEXT_WINDOW,
			model: "pi-fold-faux/faux-1",
		});
		expect(status.roots.map((r) => r.id)).toEqual(run.rt.lattice?.visibleRoots());
		expect(status.pendingMarks.map((m) => m.id)).toEqual(run.rt.lattice?.pending().map((f) => f.id));
		const text = runtimeLines(status).join("\n");
		expect(text).toContain(
			`budget: ${BUDGET.toLocaleString("en-US")} tokens (providerInputBudget; window ${CONTEXT_WINDOW.toLocaleString("en-US")}), model pi-fold-faux/faux-1`,
		);
		expect(text).toContain(`attributed (commit ${status.commits.length},`);
		expect(text).toContain("+ 0 unattributed");
		expect(text).toContain(
			`Pi's threshold ${status.compaction.thresholdFolded} answered by folding, ${status.compaction.thresholdCancelled} declined`,
		);
	});
});

describe("compaction requests", () => {
	it("a manual compact passes through untouched", async () => {
		const seen: Observed = { beforeCompact: [], compacted: [], compactFailed: [] };
		let fold: PiFold | undefined;
		const h = await makeSession({
			cwd: WORKLOAD_ROOT,
			persist: true,
			contextWindow: 2_000_000,
			settings: { compaction: { enabled: true, reserveTokens: RESERVE, keepRecentTokens: 1000 } },
			extensions: [
				(pi) => {
					fold = registerPiFold(pi);
				},
				observer(seen),
			],
		});
		try {
			h.script(workloadSteps(4, { seed: 5 }));
			await h.session.prompt(WORKLOAD_PROMPT);
			await h.session.compact();
			expect(seen.beforeCompact).toEqual(["manual"]);
			expect(seen.compacted).toEqual(["manual"]);
			expect(h.captured.filter((c) => isSummaryRequest(c.context))).toHaveLength(1);
			const status = fold?.runtime.get()?.status();
			expect(status?.compaction.manualPassed).toBe(1);
			expect(status?.open).toBe(true); // rebuilt over the compacted branch
			expect(h.extensionErrors).toEqual([]);
		} finally {
			h.dispose();
		}
	});
});

describe("FoldLattice.extend", () => {
	const entry = (id: string, extra: Partial<LatticeEntry> = {}): LatticeEntry => ({
		id,
		hash: core.sha256(id).reduce((s, b) => s + b.toString(16).padStart(2, "0"), ""),
		bytes: 10,
		role: "user",
		...extra,
	});

	it("appends entries and keeps folds, ids and pins", () => {
		const created = FoldLattice.create(core, [entry("a"), entry("b"), entry("c")]);
		if (!created.ok) throw new Error(created.reason);
		const { lattice } = created;
		const m = lattice.mark("a", "b", "chapter");
		if (!m.ok) throw new Error(m.reason);
		expect(lattice.pin(["c"]).ok).toBe(true);
		const before = lattice.snapshot();
		const r = lattice.extend([entry("d"), entry("e")]);
		expect(r).toEqual({ ok: true, added: 2, size: 5 });
		const after = lattice.snapshot();
		expect(after.folds).toEqual(before.folds);
		expect(after.pins).toEqual(["c"]);
		expect(lattice.entries.map((e) => e.id)).toEqual(["a", "b", "c", "d", "e"]);
		expect(lattice.mark("d", "e", "chapter").ok).toBe(true);
	});

	it("refuses a duplicate id, a malformed entry, and an entry that breaks a fold, changing nothing", () => {
		const a = entry("a", { role: "assistant", toolCallIds: ["c1"] });
		const t = entry("t", { role: "toolResult", toolCallId: "c1" });
		const created = FoldLattice.create(core, [a, t]);
		if (!created.ok) throw new Error(created.reason);
		const { lattice } = created;
		expect(lattice.mark("a", "t", "tool-batch").ok).toBe(true);
		const before = lattice.snapshot();
		const dup = lattice.extend([entry("a")]);
		expect(dup.ok).toBe(false);
		if (!dup.ok) expect(dup.reason).toMatch(/share the id "a"/);
		const bad = lattice.extend([{ ...entry("x"), hash: "nope" }]);
		expect(bad.ok).toBe(false);
		const breaking = lattice.extend([entry("t2", { role: "toolResult", toolCallId: "c1" })]);
		expect(breaking.ok).toBe(false);
		if (!breaking.ok) expect(breaking.reason).toMatch(/would break pending fold/);
		expect(lattice.snapshot()).toEqual(before);
		expect(lattice.entries).toHaveLength(2);
	});
});
