// Oracles over captured provider requests: canonical JSON, prefix comparison, and tool-call pairing,
// both on pi-ai messages and replayed through pi-ai's real payload builders (nothing is sent: the
// base URL's port 9 is one fetch refuses, after the payload hook has run).
import type { Api, Message, Model, TranscriptContext } from "@earendil-works/pi-ai";
import { stream as anthropicStream } from "@earendil-works/pi-ai/api/anthropic-messages";
import { stream as openaiChatStream } from "@earendil-works/pi-ai/api/openai-completions";
import { stream as openaiResponsesStream } from "@earendil-works/pi-ai/api/openai-responses";
import { canonicalJson } from "../../src/values/canonical-json.ts";

/** JSON with object keys sorted at every depth: equal values give equal text whatever the key order. */
export const canonical = canonicalJson;

/** How many leading messages two requests share (canonical JSON). */
export function sharedPrefix(prev: readonly unknown[], cur: readonly unknown[]): number {
	let k = 0;
	while (k < prev.length && k < cur.length && canonical(prev[k]) === canonical(cur[k])) k++;
	return k;
}

/** `cur` is `prev` plus appended messages. */
export function isAppendOf(prev: readonly unknown[], cur: readonly unknown[]): boolean {
	return cur.length >= prev.length && sharedPrefix(prev, cur) === prev.length;
}

/**
 * Calls without results and results without calls, in pi-ai's message model (a result answers the
 * latest assistant). An aborted or failed assistant message opens no calls: pi-ai drops it before
 * building a provider's payload (its transformMessages), so no provider sees its calls.
 */
export function pairingProblems(messages: readonly Message[]): string[] {
	const out: string[] = [];
	let unanswered = new Set<string>();
	for (const [i, m] of messages.entries()) {
		if (m.role === "toolResult") {
			if (!unanswered.has(m.toolCallId)) out.push(`#${i}: orphan result ${m.toolCallId}`);
			unanswered.delete(m.toolCallId);
			continue;
		}
		if ((m.role as string) === "system") continue;
		if (unanswered.size) out.push(`#${i}: ${m.role} before results of ${[...unanswered].join(",")}`);
		const opens = m.role === "assistant" && m.stopReason !== "aborted" && m.stopReason !== "error";
		unanswered = new Set(opens ? m.content.flatMap((b) => (b.type === "toolCall" ? [b.id] : [])) : []);
	}
	if (unanswered.size) out.push(`end: no results for ${[...unanswered].join(",")}`);
	return out;
}

// ---- replay through the real payload builders ----

type Json = Record<string, unknown>;
type Payloadable = (model: Model<Api>, context: TranscriptContext, options: Json) => { result(): Promise<unknown> };

const offline = {
	reasoning: false,
	input: ["text" as const],
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
	contextWindow: 1_000_000,
	maxTokens: 4096,
	baseUrl: "http://127.0.0.1:9",
};
const anthropic = { ...offline, id: "claude-sonnet-4-5", name: "a", api: "anthropic-messages", provider: "anthropic" };
const openaiChat = { ...offline, id: "gpt-4o", name: "c", api: "openai-completions", provider: "openai" };
const openaiResponses = { ...offline, id: "gpt-5", name: "r", api: "openai-responses", provider: "openai" };

async function payloadOf(build: Payloadable, model: Model<Api>, context: TranscriptContext): Promise<Json> {
	let payload: Json | undefined;
	const s = build(model, context, {
		apiKey: "offline",
		maxRetries: 0,
		onPayload: (p: unknown) => {
			payload = p as Json;
		},
	});
	await s.result(); // fails with a connection error after the payload was built
	if (!payload) throw new Error(`no payload built for ${model.api}`);
	return payload;
}

const blocks = (m: Json): Json[] => (Array.isArray(m.content) ? (m.content as Json[]) : []);

/** Anthropic: every tool_use answered in the next message, every tool_result answering the previous one. */
function anthropicProblems(messages: Json[]): string[] {
	const out: string[] = [];
	messages.forEach((m, i) => {
		const prevUses = new Set(
			i > 0 && messages[i - 1].role === "assistant"
				? blocks(messages[i - 1]).flatMap((b) => (b.type === "tool_use" ? [b.id] : []))
				: [],
		);
		const answers = new Set(blocks(m).flatMap((b) => (b.type === "tool_result" ? [b.tool_use_id] : [])));
		for (const a of answers) if (!prevUses.has(a)) out.push(`anthropic #${i}: tool_result ${a} without tool_use`);
		for (const u of prevUses) if (!answers.has(u)) out.push(`anthropic #${i}: tool_use ${u} unanswered`);
	});
	const last = messages.at(-1);
	if (last?.role === "assistant" && blocks(last).some((b) => b.type === "tool_use"))
		out.push("anthropic: ends in tool_use");
	return out;
}

/** OpenAI chat: `tool` messages directly after the assistant that made the calls, all answered. */
function openaiChatProblems(messages: Json[]): string[] {
	const out: string[] = [];
	let open = new Set<unknown>();
	messages.forEach((m, i) => {
		if (m.role === "tool") {
			if (!open.delete(m.tool_call_id)) out.push(`openai-chat #${i}: tool ${m.tool_call_id} without its call`);
			return;
		}
		if (open.size) out.push(`openai-chat #${i}: calls ${[...open].join(",")} unanswered`);
		open = new Set(m.role === "assistant" ? ((m.tool_calls as Json[] | undefined) ?? []).map((c) => c.id) : []);
	});
	if (open.size) out.push(`openai-chat: calls ${[...open].join(",")} unanswered at the end`);
	return out;
}

/** OpenAI Responses: each function_call_output after its function_call, each function_call answered. */
function openaiResponsesProblems(items: Json[]): string[] {
	const out: string[] = [];
	const calls = new Set<unknown>();
	const outputs = new Set<unknown>();
	items.forEach((it, i) => {
		if (it.type === "function_call") calls.add(it.call_id);
		if (it.type === "function_call_output") {
			if (!calls.has(it.call_id)) out.push(`openai-responses #${i}: output ${it.call_id} without its call`);
			outputs.add(it.call_id);
		}
	});
	for (const c of calls) if (!outputs.has(c)) out.push(`openai-responses: call ${c} has no output`);
	return out;
}

/** Pairing problems of one captured request in the Anthropic, OpenAI chat and OpenAI Responses wire formats. */
export async function providerProblems(context: TranscriptContext): Promise<string[]> {
	const a = await payloadOf(anthropicStream as unknown as Payloadable, anthropic as Model<Api>, context);
	const c = await payloadOf(openaiChatStream as unknown as Payloadable, openaiChat as Model<Api>, context);
	const r = await payloadOf(openaiResponsesStream as unknown as Payloadable, openaiResponses as Model<Api>, context);
	return [
		...anthropicProblems(a.messages as Json[]),
		...openaiChatProblems(c.messages as Json[]),
		...openaiResponsesProblems(r.input as Json[]),
	];
}
