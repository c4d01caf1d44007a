// A commit lands in the middle of a turn: its receipt reaches the model as a user-role message
// right after a tool result (Pi hands every custom message over that way). The model here is a
// literal one, as a scripted or a small model is: it works through its plan one request at a time,
// and a user message that does not say it is someone else's it takes for a new instruction, and
// starts its plan over. With the receipt framed as pi-fold's automated notice, the turn goes on
// across every commit: one request per step of the plan, no restart. Real AgentSession, real
// pi-fold, real tools over real files; only the model is scripted.
import type { AssistantMessage, Message } from "@earendil-works/pi-ai";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@earendil-works/pi-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSession, removeTempDirs, type TestSession } from "../harness/pi-harness.ts";
import { isSummaryRequest, WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadPlan } from "../harness/workload.ts";
import { type PiFold, registerPiFold } from "../src/index.ts";
import type { FoldRuntime } from "../src/runtime/runtime.ts";
import { FOLD_TOOL_NAME } from "../src/vocabulary.ts";

const STAGES = 16;
/** Small enough that 16 stages commit more than once. */
const BUDGET = 15_000;

const textOf = (m: Message) =>
	typeof m.content === "string" ? m.content : m.content.map((b) => (b.type === "text" ? b.text : "")).join("\n");

/** How the literal model tells a notice from an instruction: the message says the user did not write it. */
const saysNotFromUser = (text: string) => /\bnot from the user\b/i.test(text);

interface LiteralModel {
	steps: Parameters<TestSession["script"]>[0];
	/** Times it started its plan over. */
	restarts(): number;
	/** Requests it answered (summaries aside). */
	requests(): number;
}

function literalModel(plan: AssistantMessage[], done: AssistantMessage): LiteralModel {
	let next = 0;
	let restarts = 0;
	let requests = 0;
	const step = (context: { messages: Message[] }) => {
		if (isSummaryRequest(context as never)) return fauxAssistantMessage(fauxText("Summary: surveyed the package."));
		requests++;
		const last = context.messages.at(-1);
		// The newest message is a user's that is not a notice: a new instruction, so the plan starts over.
		if (last?.role === "user" && !saysNotFromUser(textOf(last)) && requests > 1) {
			restarts++;
			next = 0;
		}
		return plan[next++] ?? done;
	};
	return {
		steps: Array.from({ length: 4 * (STAGES + 4) }, () => step),
		restarts: () => restarts,
		requests: () => requests,
	};
}

let h: TestSession;
let rt: FoldRuntime;
let model: LiteralModel;

beforeAll(async () => {
	let fold: PiFold | undefined;
	h = await makeSession({
		cwd: WORKLOAD_ROOT,
		persist: true,
		contextWindow: 200_000,
		extensions: [
			(pi) => {
				fold = registerPiFold(pi, { providerInputBudget: BUDGET });
			},
		],
	});
	const plan = workloadPlan(STAGES, { seed: 11 }).map((p) =>
		fauxAssistantMessage([fauxText(p.note), ...p.calls.map((c) => fauxToolCall(c.name, c.args, { id: c.id }))], {
			stopReason: "toolUse",
		}),
	);
	model = literalModel(plan, fauxAssistantMessage(fauxText(`Done: surveyed the package in ${STAGES} stages.`)));
	h.script(model.steps);
	await h.session.prompt(WORKLOAD_PROMPT);
	const got = fold?.runtime.get();
	if (!got) throw new Error(`no runtime: ${fold?.runtime.reason()}`);
	rt = got;
}, 300_000);

afterAll(() => {
	h?.dispose();
	removeTempDirs();
});

describe("a commit in the middle of a turn", () => {
	it("the turn goes on across every commit: one request per planned step, no restart", () => {
		expect(rt.commits.length).toBeGreaterThanOrEqual(2);
		expect(model.restarts()).toBe(0);
		expect(model.requests()).toBe(STAGES + 1);
		expect(h.extensionErrors).toEqual([]);
		expect(rt.status().problems).toEqual([]);
	});

	it("the receipt is the last message of the request the commit rewrites, after the turn's tool result, framed as pi-fold's automated notice", () => {
		const work = h.captured.filter((c) => !isSummaryRequest(c.context)).map((c) => c.context.messages);
		const commitRequests = rt.commits.map((c) => c.turn + 1);
		expect(commitRequests.length).toBeGreaterThan(0);
		for (const i of commitRequests) {
			const messages = work[i];
			const receipt = messages.at(-1);
			if (receipt?.role !== "user") throw new Error(`request ${i} does not end in the receipt`);
			const text = textOf(receipt);
			expect(text.startsWith("<pi-fold-notice>\nAutomated, not from the user; carry on with your task.\n")).toBe(true);
			expect(text).toMatch(/^commit: \d+ folds?/m);
			expect(text.endsWith("</pi-fold-notice>")).toBe(true);
			// The turn in progress sits right before it: the tool results of the step the model is in.
			expect(messages.at(-2)?.role).toBe("toolResult");
		}
	});

	it("the tool's description, declared with the system prompt, names the notices' tag", () => {
		for (const c of h.captured) {
			const system = c.context.messages[0];
			const tools = system?.role === "system" ? (system.toolsAdded ?? []) : [];
			const tool = tools.find((t) => t.name === FOLD_TOOL_NAME);
			expect(tool?.description).toContain("<pi-fold-notice> tags");
		}
	});
});
