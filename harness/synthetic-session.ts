// A small session written by Pi's own SessionManager: a user prompt, then tool batches (an
// assistant with 1-3 tool calls and their results), each followed by a short note.
import { SessionManager } from "@earendil-works/pi-coding-agent";

const usage = {
	input: 10,
	output: 10,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: 20,
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

/** An assistant message as the faux model writes one, typed loosely for appendMessage. */
export function assistantMessage(content: unknown[], stopReason: "toolUse" | "stop" = "toolUse"): never {
	return {
		role: "assistant",
		content,
		api: "faux",
		provider: "faux",
		model: "faux-1",
		usage,
		stopReason,
		timestamp: 1,
	} as never;
}

/** Append `batches` tool batches to a session; returns the manager (persisted in `dir`). */
export function syntheticSession(dir: string, batches: number): SessionManager {
	const sm = SessionManager.create(dir, dir);
	sm.appendMessage({ role: "user", content: "Read the files and explain them.", timestamp: 1 });
	for (let b = 0; b < batches; b++) {
		const calls = Array.from({ length: 1 + (b % 3) }, (_, k) => ({
			type: "toolCall",
			id: `call_${b}_${k}`,
			name: "read",
			arguments: { path: `src/file-${b}-${k}.ts` },
		}));
		sm.appendMessage(assistantMessage([{ type: "text", text: `Batch ${b}.` }, ...calls], "toolUse"));
		for (const c of calls) {
			sm.appendMessage({
				role: "toolResult",
				toolCallId: c.id,
				toolName: "read",
				content: [{ type: "text", text: `contents of ${c.arguments.path}\n${"x".repeat(200 + b * 10)}` }],
				isError: false,
				timestamp: 1,
			} as never);
		}
	}
	sm.appendMessage(assistantMessage([{ type: "text", text: "Done." }], "stop"));
	return sm;
}
