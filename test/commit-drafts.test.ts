// End to end: a real AgentSession runs the scripted workload; an inline extension builds the
// lattice at a turn boundary, commits folds over the first half's tool batches as one batch of
// context_edit drafts (src/edits/drafts.ts), and later expands one of them. The captured
// requests show what the model saw: briefs instead of folded bytes, appends only between the two
// boundaries, valid tool pairing everywhere, and the original bytes back after the expand.
import type { Message } from "@earendil-works/pi-ai";
import {
	type ContextEditEntryDraft,
	type ExtensionContext,
	SessionManager,
	type TurnEndEvent,
} from "@earendil-works/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { makeSession, removeTempDirs, type TestSession, textOf, toolResultFor } from "../harness/pi-harness.ts";
import { isSummaryRequest, WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadPlan, workloadSteps } from "../harness/workload.ts";
import { commitDrafts, expandDrafts, validateDrafts } from "../src/edits/drafts.ts";
import type { FoldId } from "../src/fold-types.ts";
import { FoldLattice, type FoldView, type Outcome, type SavedLattice } from "../src/lattice/index.ts";
import { type ContextEntries, contextEntriesOf } from "../src/session/context-entries.ts";
import { canonical, isAppendOf, pairingProblems, providerProblems, sharedPrefix } from "./helpers/requests.ts";

const core = nodeCore();
const STAGES = 12;
const FOLDED_STAGES = [0, 1, 2, 3, 4, 5]; // the first half
const COMMIT_AT = 7; // turn_end index; batches up to 6 have been seen by the model, 7's results not yet
const EXPAND_AT = 10;
const EXPANDED_STAGE = 2;
const PLANTED = "PLANTED-7f3a-in-stage-2";
const workload = { seed: 7, plant: (stage: number) => (stage === EXPANDED_STAGE ? PLANTED : undefined) };
const plan = workloadPlan(STAGES, workload);

const briefOf = (id: FoldId, stage: number) => `[fold ${id}: stage ${stage} tool batch; read it back with peek]`;

/** What one boundary did, as the extension saw it. */
interface Boundary {
	turn: number;
	drafts: ContextEditEntryDraft[];
	/** Index, in the request that boundary's preview mirrors, of the first message a draft touches. */
	firstEdited: number;
	/** The window validateDrafts predicted for the next request. */
	predicted: unknown[];
}

function contextOf(ctx: ExtensionContext): ContextEntries {
	return contextEntriesOf(ctx.sessionManager.buildContextEntries(), core);
}

/** The span of stage k's tool batch: its assistant entry through its last result. */
function batchSpan(context: ContextEntries, stage: number): { from: string; to: string } {
	const calls = new Set(plan[stage].calls.map((c) => c.id));
	const at = context.entries.findIndex((e) => e.toolCallIds?.some((c) => calls.has(c)));
	let end = at;
	context.entries.forEach((e, p) => {
		if (e.toolCallId !== undefined && calls.has(e.toolCallId)) end = Math.max(end, p);
	});
	return { from: context.entries[at].id, to: context.entries[end].id };
}

function must<T extends object>(o: Outcome<T>): T {
	if (!o.ok) throw new Error(o.reason);
	return o as T;
}

interface Run {
	h: TestSession;
	work: Message[][];
	boundaries: Boundary[];
	handlerErrors: string[];
	foldOfStage: Map<number, FoldId>;
	saved: SavedLattice;
}

async function runWorkload(): Promise<Run> {
	const boundaries: Boundary[] = [];
	const handlerErrors: string[] = [];
	const foldOfStage = new Map<number, FoldId>();
	let saved: SavedLattice | undefined;

	const finish = (e: TurnEndEvent, drafts: ContextEditEntryDraft[]) => {
		const checked = must(validateDrafts(drafts, e.context.contextEntries));
		const targets = new Set(drafts.map((d) => d.targetId));
		const owners = e.context.contextEntries.flatMap((pe) => pe.messages.map(() => pe.sourceEntry.id));
		boundaries.push({
			turn: e.turnIndex,
			drafts,
			firstEdited: owners.findIndex((id) => targets.has(id)),
			predicted: checked.messages,
		});
		return { entries: [...e.entries, ...drafts] };
	};

	const commit = (e: TurnEndEvent, ctx: ExtensionContext) => {
		const context = contextOf(ctx);
		const { lattice } = must(FoldLattice.create(core, context.entries));
		const spans = FOLDED_STAGES.map((k) => ({ ...batchSpan(context, k), kind: "tool-batch" }));
		const { ids } = must(lattice.markMany(spans));
		ids.forEach((id, i) => {
			foldOfStage.set(FOLDED_STAGES[i], id);
			must(lattice.setDeterministicBrief(id, briefOf(id, FOLDED_STAGES[i])));
		});
		must(lattice.commit(ids));
		const folds = ids.map((id) => lattice.get(id) as FoldView);
		saved = lattice.save();
		return finish(e, must(commitDrafts(folds, context)).drafts);
	};

	const expand = (e: TurnEndEvent, ctx: ExtensionContext) => {
		const context = contextOf(ctx);
		if (!saved) throw new Error("expand before commit");
		const { lattice } = must(FoldLattice.load(core, context.entries, saved));
		const id = foldOfStage.get(EXPANDED_STAGE) as FoldId;
		must(lattice.expand(id));
		saved = lattice.save();
		return finish(e, must(expandDrafts(id, lattice, context)).drafts);
	};

	const h = await makeSession({
		cwd: WORKLOAD_ROOT,
		persist: true,
		contextWindow: 2_000_000, // no threshold compaction: this test is about the drafts
		extensions: [
			(pi) => {
				pi.on("turn_end", (e, ctx) => {
					try {
						if (e.turnIndex === COMMIT_AT) return commit(e, ctx);
						if (e.turnIndex === EXPAND_AT) return expand(e, ctx);
					} catch (err) {
						handlerErrors.push(`turn_end #${e.turnIndex}: ${err instanceof Error ? err.message : String(err)}`);
					}
					return undefined;
				});
			},
		],
	});
	h.script(workloadSteps(STAGES, workload));
	await h.session.prompt(WORKLOAD_PROMPT);
	const work = h.captured.filter((c) => !isSummaryRequest(c.context)).map((c) => c.context.messages);
	return { h, work, boundaries, handlerErrors, foldOfStage, saved: saved as SavedLattice };
}

/** Stage k's assistant message and its results, as they appear in one request. */
function stageMessages(messages: readonly Message[], stage: number): Message[] {
	const ids = plan[stage].calls.map((c) => c.id);
	const at = messages.findIndex(
		(m) => m.role === "assistant" && m.content.some((b) => b.type === "toolCall" && b.id === ids[0]),
	);
	if (at < 0) return [];
	return messages.slice(at, at + 1 + ids.length);
}

const mentionsCall = (messages: readonly Message[], id: string) => JSON.stringify(messages).includes(`"${id}"`);

afterAll(removeTempDirs);

describe("commit and expand drafts in a real AgentSession", () => {
	let run: Run;
	beforeAll(async () => {
		run = await runWorkload();
	});
	afterAll(() => run?.h.dispose());

	it("Pi accepts both boundary batches and the run completes", () => {
		expect(run.handlerErrors).toEqual([]);
		expect(run.h.extensionErrors).toEqual([]);
		expect(run.boundaries.map((b) => b.turn)).toEqual([COMMIT_AT, EXPAND_AT]);
		// One request per stage plus the final answer: nothing was retried or summarised.
		expect(run.work).toHaveLength(STAGES + 1);
		expect(run.h.captured).toHaveLength(STAGES + 1);
		const edits = run.h.session.sessionManager.getBranch().filter((e) => e.type === "context_edit");
		expect(edits).toHaveLength(run.boundaries.reduce((n, b) => n + b.drafts.length, 0));
	});

	it("the request after the commit shows the briefs, not the folded bytes", () => {
		const before = run.work[COMMIT_AT];
		const after = run.work[COMMIT_AT + 1];
		expect(JSON.stringify(before)).toContain(PLANTED);
		expect(JSON.stringify(after)).not.toContain(PLANTED);
		for (const k of FOLDED_STAGES) {
			const id = run.foldOfStage.get(k) as FoldId;
			expect(JSON.stringify(after)).toContain(briefOf(id, k));
			for (const c of plan[k].calls) {
				expect(mentionsCall(before, c.id)).toBe(true);
				expect(mentionsCall(after, c.id)).toBe(false);
			}
		}
		// The batches not folded are still there, raw.
		for (const c of plan[FOLDED_STAGES.length].calls) expect(mentionsCall(after, c.id)).toBe(true);
		// What validateDrafts predicted is exactly what the provider received.
		const predicted = run.boundaries[0].predicted;
		expect(after.slice(0, predicted.length).map(canonical)).toEqual(predicted.map(canonical));
	});

	it("between boundaries every request is the previous one plus appended messages", () => {
		const boundaryAfter = new Map(run.boundaries.map((b) => [b.turn + 1, b]));
		for (let i = 1; i < run.work.length; i++) {
			const b = boundaryAfter.get(i);
			if (!b) {
				expect(isAppendOf(run.work[i - 1], run.work[i]), `request ${i} extends request ${i - 1}`).toBe(true);
				continue;
			}
			// At a boundary the first changed message is the first edited entry, and nothing before it moved.
			expect(b.firstEdited).toBeGreaterThan(0);
			expect(sharedPrefix(run.work[i - 1], run.work[i])).toBe(b.firstEdited);
		}
		const firstFolded = stageMessages(run.work[COMMIT_AT], FOLDED_STAGES[0])[0];
		expect(run.work[COMMIT_AT].indexOf(firstFolded)).toBe(run.boundaries[0].firstEdited);
	});

	it("every request is provider-valid", async () => {
		for (const [i, c] of run.h.captured.entries()) {
			expect(pairingProblems(c.context.messages), `request ${i}`).toEqual([]);
			expect(await providerProblems(c.context), `request ${i} on the wire`).toEqual([]);
		}
	});

	it("the pairing oracles do catch an orphan (a result whose call is gone)", async () => {
		const context = structuredClone(run.h.captured[COMMIT_AT].context);
		const at = context.messages.findIndex(
			(m) => m.role === "assistant" && m.content.some((b) => b.type === "toolCall"),
		);
		context.messages.splice(at, 1);
		expect(pairingProblems(context.messages).length).toBeGreaterThan(0);
		expect((await providerProblems(context)).length).toBeGreaterThan(0);
	});

	it("the expand restores the original messages byte for byte", () => {
		const original = stageMessages(run.work[COMMIT_AT], EXPANDED_STAGE);
		const restored = stageMessages(run.work[EXPAND_AT + 1], EXPANDED_STAGE);
		expect(original).toHaveLength(1 + plan[EXPANDED_STAGE].calls.length);
		expect(JSON.stringify(restored)).toBe(JSON.stringify(original));
		expect(JSON.stringify(run.work[EXPAND_AT + 1])).toContain(PLANTED);
		// The other folds stay collapsed.
		for (const k of FOLDED_STAGES.filter((s) => s !== EXPANDED_STAGE)) {
			expect(stageMessages(run.work[EXPAND_AT + 1], k)).toEqual([]);
		}
	});

	it("reopening the session file rebuilds the same projection and lattice", () => {
		const live = run.h.session.sessionManager;
		const file = live.getSessionFile();
		if (!file) throw new Error("session was not persisted");
		const reopened = SessionManager.open(file, run.h.sessionDir);
		expect(canonical(reopened.buildSessionProjection().messages)).toBe(
			canonical(live.buildSessionProjection().messages),
		);
		const a = contextOf({ sessionManager: live } as unknown as ExtensionContext);
		const b = contextEntriesOf(reopened.buildContextEntries(), core);
		expect(b.entries).toEqual(a.entries);
		const la = must(FoldLattice.load(core, a.entries, run.saved)).lattice;
		const lb = must(FoldLattice.load(core, b.entries, run.saved)).lattice;
		expect(lb.snapshot()).toEqual(la.snapshot());
		expect(lb.get(run.foldOfStage.get(EXPANDED_STAGE) as FoldId)?.state).toBe("expanded");
	});
});

describe("drafts refuse what Pi or a provider would reject", () => {
	let run: Run;
	let context: ContextEntries;
	beforeAll(async () => {
		run = await runWorkload();
		context = contextOf({ sessionManager: run.h.session.sessionManager } as unknown as ExtensionContext);
	});
	afterAll(() => run?.h.dispose());

	const projection = () => run.h.session.sessionManager.buildSessionProjection().entries;
	const positionOf = (id: string) => context.entries.findIndex((e) => e.id === id);
	const fakeFold = (start: number, end: number, state: FoldView["state"] = "committed"): FoldView => ({
		id: "fdeadbeef00",
		identity: "0".repeat(64),
		kind: "tool-batch",
		state,
		brief: "[fold fdeadbeef00]",
		provenance: "deterministic",
		start,
		end,
		parent: null,
		depth: 0,
		children: context.entries.slice(start, end).map((e) => ({ type: "leaf", entryId: e.id })),
	});

	it("a span that splits a call from its result is refused by name", () => {
		const { from } = batchSpan(context, 9);
		const p = positionOf(from);
		const r = commitDrafts([fakeFold(p, p + 1)], context);
		expect(r.ok).toBe(false);
		if (!r.ok) expect(r.reason).toMatch(/holds tool call s9c0 but not its result/);
		const results = commitDrafts([fakeFold(p + 1, p + 2)], context);
		expect(results.ok).toBe(false);
		if (!results.ok) expect(results.reason).toMatch(/holds the result of s9c0 but not its call/);
	});

	it("validateDrafts catches an orphaned result and a non-editable target", () => {
		const { from } = batchSpan(context, 9);
		const orphan = validateDrafts([{ type: "context_edit", targetId: from, replacement: null }], projection());
		expect(orphan.ok).toBe(false);
		if (!orphan.ok) expect(orphan.reason).toMatch(/result s9c0 without its call/);
		const notEditable = run.h.session.sessionManager.getBranch().find((e) => e.type === "model_change");
		if (!notEditable) throw new Error("the branch has no model_change entry");
		const bad = validateDrafts([{ type: "context_edit", targetId: notEditable.id, replacement: null }], projection());
		expect(bad.ok).toBe(false);
		if (!bad.ok) expect(bad.reason).toMatch(/not editable/);
	});

	it("validateDrafts counts only what the drafts break: a window's own unanswered call does not block a fold", () => {
		// A window that already ends on an unanswered call (a crash or compaction cut a batch): Pi
		// repairs it on send; folding other batches must stay possible, breaking a new pair must not.
		const whole = projection();
		const cut = batchSpan(context, 9);
		const at = whole.findIndex((pe) => pe.sourceEntry.id === cut.from);
		const damaged = whole.slice(0, at + 1);
		const { from, to } = batchSpan(context, 2);
		const ids = context.entries.slice(positionOf(from), positionOf(to) + 1).map((e) => e.id);
		const fold = validateDrafts(
			ids.map((id, i) =>
				i === 0
					? {
							type: "context_edit" as const,
							targetId: id,
							replacement: { content: [{ type: "text" as const, text: "[fold]" }] },
						}
					: { type: "context_edit" as const, targetId: id, replacement: null },
			),
			damaged,
		);
		expect(fold.ok, fold.ok ? "" : fold.reason).toBe(true);
		const orphan = validateDrafts([{ type: "context_edit", targetId: from, replacement: null }], damaged);
		expect(orphan.ok).toBe(false);
		if (!orphan.ok) expect(orphan.reason).toMatch(/without its call/);
		expect(orphan.ok ? "" : orphan.reason).not.toMatch(/s9c0/);
	});

	it("a span from the top skips non-editable entries and briefs the user entry as a string", () => {
		const { to } = batchSpan(context, 0);
		const r = commitDrafts([fakeFold(0, positionOf(to) + 1)], context);
		if (!r.ok) throw new Error(r.reason);
		const editable = new Set(
			context.sources
				.filter((s) => s.type === "custom_message" || (s.type === "message" && s.message.role !== "system"))
				.map((s) => s.id),
		);
		expect(r.drafts.every((d) => editable.has(d.targetId))).toBe(true);
		expect(r.drafts[0].replacement).toEqual({ content: "[fold fdeadbeef00]" });
		expect(r.drafts.slice(1).every((d) => d.replacement === null)).toBe(true);
		expect(validateDrafts(r.drafts, projection()).ok).toBe(true);
	});

	it("expandDrafts refuses a fold the lattice has not expanded", () => {
		const lattice = must(FoldLattice.load(core, context.entries, run.saved)).lattice;
		const committed = run.foldOfStage.get(0) as FoldId;
		const r = expandDrafts(committed, lattice, context);
		expect(r.ok).toBe(false);
		if (!r.ok) expect(r.reason).toMatch(/is committed: expand it in the lattice first/);
	});
});

describe("the workload script", () => {
	it("is deterministic for a seed, with 2-4 calls per stage and bounded reads", () => {
		const a = workloadPlan(16, { seed: 3 });
		expect(workloadPlan(16, { seed: 3 })).toEqual(a);
		expect(workloadPlan(16, { seed: 4 })).not.toEqual(a);
		for (const stage of a) {
			expect(stage.calls.length).toBeGreaterThanOrEqual(2);
			expect(stage.calls.length).toBeLessThanOrEqual(4);
			expect(stage.calls[0].name).toBe("read");
			for (const c of stage.calls) if (c.name === "read") expect(c.args.limit).toBeLessThanOrEqual(300);
		}
		const ids = a.flatMap((s) => s.calls.map((c) => c.id));
		expect(new Set(ids).size).toBe(ids.length);
	});

	it("plants values verbatim, answers an overflow error and Pi's summary request, and completes", async () => {
		const value = `it's "quoted" $HOME \`x\``;
		// keepRecentTokens below the workload's size, so Pi's overflow compaction has something to summarise.
		const compaction = { enabled: true, reserveTokens: 16_384, keepRecentTokens: 1000 };
		const h = await makeSession({ cwd: WORKLOAD_ROOT, contextWindow: 2_000_000, settings: { compaction } });
		try {
			h.script(workloadSteps(4, { seed: 5, plant: (k) => (k === 1 ? value : undefined), overflowAt: 3 }));
			await h.session.prompt(WORKLOAD_PROMPT);
			const messages = h.session.messages as Message[];
			// Read from the raw branch: the compaction summarised stage 1 out of the window.
			const raw = h.session.sessionManager.getBranch().flatMap((e) => (e.type === "message" ? [e.message] : []));
			const planted = toolResultFor(raw, "s1p");
			expect(planted && textOf(planted)).toContain(`[stage 1] check value: ${value}\n`);
			// Only in the middle of the result: the call that printed it does not name it.
			expect(JSON.stringify(raw.filter((m) => m.role === "assistant"))).not.toContain("check value");
			// Pi compacted on the overflow (a summary request), retried, and the script went on to the end.
			expect(h.captured.filter((c) => isSummaryRequest(c.context)).length).toBe(1);
			const failed = h.session.sessionManager
				.getBranch()
				.filter((e) => e.type === "message" && e.message.role === "assistant" && e.message.stopReason === "error");
			expect(failed).toHaveLength(1);
			// 4 stages + the final answer, the overflowed attempt, the summary.
			expect(h.captured).toHaveLength(4 + 1 + 1 + 1);
			const last = messages.at(-1);
			expect(last?.role === "assistant" && last.stopReason).toBe("stop");
			expect(JSON.stringify(last)).toContain("surveyed the package in 4 stages");
		} finally {
			h.dispose();
		}
	});
});
