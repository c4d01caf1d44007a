// A scripted faux agent driving pi_fold_context on a real session, and the probes that watch it:
// every scripted step can compute its tool arguments from the runtime as it stands when the model
// is asked (as a model would from earlier results), and the probe records the runtime's state at
// each request and right after each tool call, so a test can say exactly what a call changed.
import {
	type FauxResponseStep,
	fauxAssistantMessage,
	fauxText,
	fauxToolCall,
	type ToolResultMessage,
} from "@earendil-works/pi-ai";
import { type SessionEntry, SessionManager } from "@earendil-works/pi-coding-agent";
import { expect } from "vitest";
import { nodeCore } from "../../bindings/node.ts";
import { makeSession, type TestSession, textOf, toolResultFor } from "../../harness/pi-harness.ts";
import { WORKLOAD_PROMPT, WORKLOAD_ROOT, type WorkloadOptions, workloadPlan } from "../../harness/workload.ts";
import type { FoldId } from "../../src/fold-types.ts";
import { type PiFold, registerPiFold } from "../../src/index.ts";
import type { FoldView, LatticeSnapshot } from "../../src/lattice/index.ts";
import type { FoldActions } from "../../src/operations/actions.ts";
import type { RuntimeStatus } from "../../src/operations/status.ts";
import type { FoldRuntime } from "../../src/runtime/runtime.ts";
import { rebuildLattice } from "../../src/session/rebuild.ts";
import type { StagedEdit } from "../../src/session/staged.ts";
import { FOLD_TOOL_NAME, RECORD_TYPE, type Thresholds } from "../../src/vocabulary.ts";
import { canonical, pairingProblems } from "./requests.ts";

/** The window arithmetic a pi_fold_context result carries. */
export const ARITHMETIC = /-- window: ~\d+ of \d+ tokens/;

export type ToolArgs = Parameters<typeof fauxToolCall>[1];
/** Arguments, or a function computing them when the model is asked. */
export type ArgsOf = ToolArgs | (() => ToolArgs);

/** What the runtime holds at one moment, as plain data. */
export interface RuntimeState {
	snapshot: LatticeSnapshot | undefined;
	staged: StagedEdit[];
	foldRequested: boolean;
	/** pi-fold records and context edits on the branch (what an action may append). */
	records: number;
	edits: number;
	commits: number;
	rewrites: RuntimeStatus["rewrites"];
	/** The runtime's last calibrated estimate of the next request. */
	occupancy: number | null;
}

export interface FoldAgent {
	h: TestSession;
	fold: PiFold;
	actions: FoldActions;
	/** State at each request, by request index. */
	atRequest: RuntimeState[];
	/** State right after each tool call ran (or was refused), by tool call id. */
	afterCall: Map<string, RuntimeState & { ran: boolean }>;
	/** The request index at which each scripted call was issued, by tool call id. */
	issuedAt: Map<string, number>;
	/** The ids of the pi_fold_context calls among them, in order. */
	foldCalls: string[];
}

export interface FoldAgentOptions {
	/** providerInputBudget, in tokens. */
	budget: number;
	/** Threshold overrides (consolidateAfter defaults to 3 here, so short sessions consolidate). */
	thresholds?: Partial<Thresholds>;
}

function runtimeOf(fold: PiFold): FoldRuntime {
	const rt = fold.runtime.get();
	if (!rt) throw new Error(`no pi-fold runtime: ${fold.runtime.reason()}`);
	return rt;
}

function stateOf(fold: PiFold, h: TestSession): RuntimeState {
	const rt = runtimeOf(fold);
	const branch = h.session.sessionManager.getBranch();
	const status = rt.status();
	return {
		snapshot: rt.lattice?.snapshot(),
		staged: rt.staged.map((s) => ({ ...s })),
		foldRequested: rt.foldRequested,
		records: branch.filter((e) => e.type === "custom" && e.customType === RECORD_TYPE).length,
		edits: branch.filter((e) => e.type === "context_edit").length,
		commits: status.commits.length,
		rewrites: status.rewrites,
		occupancy: status.occupancy?.tokens ?? null,
	};
}

/**
 * A persisted session over the workload's code base with pi-fold registered, and its probes. The
 * whole scenario runs as one prompt (see `run`): the agent works, and inspects or shapes its folds
 * in between, as a model would mid-task.
 */
export async function foldAgent(opts: FoldAgentOptions): Promise<FoldAgent> {
	let fold: PiFold | undefined;
	const afterCall: FoldAgent["afterCall"] = new Map();
	let harness: TestSession | undefined;
	const h = await makeSession({
		cwd: WORKLOAD_ROOT,
		persist: true,
		contextWindow: 1_000_000,
		extensions: [
			(pi) => {
				fold = registerPiFold(pi, {
					providerInputBudget: opts.budget,
					thresholds: { consolidateAfter: 3, ...opts.thresholds },
				});
			},
			(pi) => {
				// After pi-fold's handlers: the state a call left, before its turn's boundary.
				pi.on("tool_execution_end", (e) => {
					if (fold && harness && e.toolName === FOLD_TOOL_NAME) {
						afterCall.set(e.toolCallId, { ...stateOf(fold, harness), ran: e.durationMs !== undefined });
					}
				});
			},
		],
	});
	harness = h;
	if (!fold) throw new Error("pi-fold did not register");
	const actions = fold.runtime.actions();
	if (!actions) throw new Error(`no pi-fold actions: ${fold.runtime.reason()}`);
	return { h, fold, actions, atRequest: [], afterCall, issuedAt: new Map(), foldCalls: [] };
}

/** Script the steps and run them as one prompt. */
export async function run(agent: FoldAgent, steps: FauxResponseStep[], prompt = WORKLOAD_PROMPT): Promise<void> {
	agent.h.script(steps);
	await agent.h.session.prompt(prompt);
}

/** A value computed once, when first asked for (a step's arguments from the state at that moment). */
export function once<T>(compute: () => T): () => T {
	let done: { value: T } | undefined;
	return () => {
		done ??= { value: compute() };
		return done.value;
	};
}

/** Wrap a step so the probe records the runtime at its request, and where each tool call was issued. */
function probed(agent: FoldAgent, make: () => ReturnType<typeof fauxAssistantMessage>): FauxResponseStep {
	return () => {
		const index = agent.h.captured.length - 1;
		agent.atRequest[index] = stateOf(agent.fold, agent.h);
		const message = make();
		for (const id of callIdsOf(message)) agent.issuedAt.set(id, index);
		return message;
	};
}

/** One assistant message calling pi_fold_context once per [id, args] pair, in order. */
export function calls(agent: FoldAgent, ...list: [id: string, args: ArgsOf][]): FauxResponseStep {
	return probed(agent, () => {
		agent.foldCalls.push(...list.map(([id]) => id));
		return fauxAssistantMessage(
			list.map(([id, args]) => fauxToolCall(FOLD_TOOL_NAME, typeof args === "function" ? args() : args, { id })),
			{ stopReason: "toolUse" },
		);
	});
}

/** One pi_fold_context call. */
export function call(agent: FoldAgent, id: string, args: ArgsOf): FauxResponseStep {
	return calls(agent, [id, args]);
}

/** The final answer of a prompt. */
export function finish(agent: FoldAgent, text: string): FauxResponseStep {
	return probed(agent, () => fauxAssistantMessage(fauxText(text)));
}

/**
 * Workload stages (real read/bash/ls calls over Pi's dist/, see workload.ts), their tool call ids
 * prefixed so several runs of work in one session never share an id.
 */
export function work(
	agent: FoldAgent,
	prefix: string,
	stages: number,
	seed: number,
	plant?: WorkloadOptions["plant"],
): FauxResponseStep[] {
	return workloadPlan(stages, { seed, ...(plant ? { plant } : {}) }).map((plan) =>
		probed(agent, () =>
			fauxAssistantMessage(
				[fauxText(plan.note), ...plan.calls.map((c) => fauxToolCall(c.name, c.args, { id: `${prefix}${c.id}` }))],
				{ stopReason: "toolUse" },
			),
		),
	);
}

/** The tool result recorded in the session for a call (its raw entry: folds do not hide it here). */
export function resultOf(agent: FoldAgent, id: string): ToolResultMessage {
	const messages = agent.h.session.sessionManager
		.getBranch()
		.flatMap((e) => (e.type === "message" ? [e.message as unknown] : []));
	const r = toolResultFor(messages, id);
	if (!r) throw new Error(`no tool result for ${id}`);
	return r;
}

/** The typed details of a call's result (what the tool returned besides its text). */
export function detailsOf<T = Record<string, unknown>>(agent: FoldAgent, id: string): T {
	return resultOf(agent, id).details as unknown as T;
}

export function resultText(agent: FoldAgent, id: string): string {
	return textOf(resultOf(agent, id));
}

/** The request that answered a call's result (the first request after it), as messages. */
export function requestAfter(agent: FoldAgent, id: string): readonly unknown[] {
	const at = agent.issuedAt.get(id);
	if (at === undefined) throw new Error(`call ${id} was never issued`);
	const next = agent.h.captured[at + 1];
	if (!next) throw new Error(`no request after call ${id}`);
	return next.context.messages;
}

export function requestOf(agent: FoldAgent, id: string): readonly unknown[] {
	const at = agent.issuedAt.get(id);
	if (at === undefined) throw new Error(`call ${id} was never issued`);
	return agent.h.captured[at].context.messages;
}

type Loose = { role?: string; content?: unknown; toolCallId?: string };

/** Tool call ids an assistant message makes. */
export function callIdsOf(message: unknown): string[] {
	const m = message as Loose;
	if (m.role !== "assistant" || !Array.isArray(m.content)) return [];
	return m.content.flatMap((b: { type?: string; id?: string }) => (b.type === "toolCall" && b.id ? [b.id] : []));
}

/**
 * The run of `count` messages starting at the assistant message that makes tool call `callId`,
 * in canonical JSON; undefined when that message is not in the request.
 */
export function runFrom(messages: readonly unknown[], callId: string, count: number): string[] | undefined {
	const at = messages.findIndex((m) => callIdsOf(m).includes(callId));
	if (at < 0 || at + count > messages.length) return undefined;
	return messages.slice(at, at + count).map((m) => canonical(m));
}

/** The tool result message of a call in a request, in canonical JSON. */
export function resultIn(messages: readonly unknown[], callId: string): string | undefined {
	const m = messages.find((x) => (x as Loose).role === "toolResult" && (x as Loose).toolCallId === callId);
	return m === undefined ? undefined : canonical(m);
}

/** The tool call ids a session entry makes or answers. */
export function callIdsOfEntry(entry: SessionEntry | undefined): string[] {
	if (entry?.type !== "message") return [];
	const m = entry.message as Loose;
	if (m.role === "toolResult" && m.toolCallId) return [m.toolCallId];
	return callIdsOf(m);
}

/** One assistant message making other tool calls (read, bash, ls): [id, tool name, args]. */
export function toolStep(agent: FoldAgent, note: string, ...list: [id: string, name: string, args: ToolArgs][]) {
	return probed(agent, () =>
		fauxAssistantMessage([fauxText(note), ...list.map(([id, name, args]) => fauxToolCall(name, args, { id }))], {
			stopReason: "toolUse",
		}),
	);
}

/** Some message of the request shows exactly `text` (a string content or one text block). */
export function showsText(messages: readonly unknown[], text: string): boolean {
	return messages.some((m) => {
		const c = (m as Loose).content;
		if (typeof c === "string") return c === text;
		return Array.isArray(c) && c.some((b: { type?: string; text?: string }) => b.type === "text" && b.text === text);
	});
}

// ---- oracles over a finished run ----

export function rtOf(agent: FoldAgent): FoldRuntime {
	return runtimeOf(agent.fold);
}

export function folded(agent: FoldAgent, id: string): FoldView {
	const f = rtOf(agent).lattice?.get(id as FoldId);
	if (!f) throw new Error(`no fold ${id}`);
	return f;
}

/** The context entries of a fold (or of any span), in order. */
export function sourcesOf(agent: FoldAgent, f: { start: number; end: number }) {
	const view = rtOf(agent).view;
	if (!view) throw new Error("no session open");
	return view.context.sources.slice(f.start, f.end);
}

/** The first tool call id of a fold's first entry: where its run of messages starts in a request. */
export function firstCallOf(agent: FoldAgent, f: { start: number; end: number }): string {
	const id = callIdsOfEntry(sourcesOf(agent, f)[0])[0];
	if (!id) throw new Error("the fold does not start with a tool call");
	return id;
}

/** Every request of the session after a given one, as messages. */
export function requestsFrom(agent: FoldAgent, index: number): (readonly unknown[])[] {
	return agent.h.captured.slice(index).map((c) => c.context.messages);
}

/** Rewrites the recorder classified request `index` as (the difference of its counters over the one before). */
export function classified(agent: FoldAgent, index: number): string {
	const [a, b] = [agent.atRequest[index - 1]?.rewrites, agent.atRequest[index]?.rewrites];
	if (!a || !b) throw new Error(`no probe at request ${index - 1} or ${index}`);
	if (b.pureAppends > a.pureAppends) return "append";
	for (const k of Object.keys(b.attributed) as (keyof typeof b.attributed)[]) {
		if (b.attributed[k] > a.attributed[k]) return k;
	}
	if (b.unattributed > a.unattributed) return "unattributed";
	return b.baselines > a.baselines ? "baseline" : "none";
}

/** The session file, reopened, rebuilds the lattice the runtime holds. */
export function reopenMatches(agent: FoldAgent): void {
	const file = agent.h.session.sessionManager.getSessionFile();
	if (!file) throw new Error("no session file");
	const sm = SessionManager.open(file);
	const rebuilt = rebuildLattice(sm.getBranch(), sm.buildContextEntries(), nodeCore());
	expect(rebuilt.ok).toBe(true);
	if (!rebuilt.ok) return;
	expect(rebuilt.lattice.snapshot()).toEqual(rtOf(agent).lattice?.snapshot());
}

/** No problem recorded, no unattributed rewrite, no extension error, every request paired. */
export function healthy(agent: FoldAgent): void {
	const status = rtOf(agent).status();
	expect(status.problems).toEqual([]);
	expect(status.rewrites.unattributed).toBe(0);
	expect(agent.h.extensionErrors).toEqual([]);
	for (const c of agent.h.captured) expect(pairingProblems(c.context.messages)).toEqual([]);
}

/**
 * Checks that every commit took every pending peek mark; returns how many commits took one, and
 * how many of those while an older mark stayed pending (stalest first alone would not reach it).
 */
export function peekMarksTakenOutOfTurn(agent: FoldAgent): { withPeek: number; outOfTurn: number } {
	let outOfTurn = 0;
	let withPeek = 0;
	for (let i = 1; i < agent.atRequest.length; i++) {
		const [before, after] = [agent.atRequest[i - 1], agent.atRequest[i]];
		if (!before || !after || after.commits === before.commits) continue;
		const folds = after.snapshot?.folds ?? [];
		const pending = folds.filter((f) => f.state === "pending");
		expect(
			pending.filter((f) => f.kind === "peek"),
			`the commit before request ${i}`,
		).toEqual([]);
		const wasStanding = new Set(before.snapshot?.folds.filter((f) => f.state !== "pending").map((f) => f.id));
		const taken = folds.filter((f) => f.kind === "peek" && f.state !== "pending" && !wasStanding.has(f.id));
		if (taken.length > 0) withPeek++;
		if (taken.some((p) => pending.some((f) => f.start < p.start))) outOfTurn++;
	}
	return { withPeek, outOfTurn };
}
