// One session entry as the text search and peek read: a header line naming the entry and its
// role (and a tool result's tool), then its text and tool calls. Pure (no Node, no Pi): the
// view's page searches the same text in a browser.
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { asRecord } from "../vocabulary.ts";

type Loose = Record<string, unknown>;

/** Text and tool calls of a content field; thinking blocks and provider metadata are left out. */
function contentLines(content: unknown): string[] {
	if (typeof content === "string") return [content];
	if (!Array.isArray(content)) return [];
	const out: string[] = [];
	for (const raw of content) {
		const b = asRecord(raw);
		if (!b) continue;
		if (b.type === "text" && typeof b.text === "string") out.push(b.text);
		else if (b.type === "toolCall")
			out.push(`-> call ${String(b.name)} ${JSON.stringify(b.arguments ?? {})} [${String(b.id)}]`);
		else if (b.type === "image") out.push("[image]");
	}
	return out;
}

/** One entry as readable text: a header naming entry and role, then its text. */
export function entryText(canonical: string): string {
	let entry: SessionEntry;
	try {
		entry = JSON.parse(canonical) as SessionEntry;
	} catch {
		return canonical;
	}
	const e = entry as unknown as Loose;
	const message = asRecord(e.message);
	if (entry.type === "message" && message) {
		const role = String(message.role);
		const tool = role === "toolResult" ? ` ${String(message.toolName)} [${String(message.toolCallId)}]` : "";
		const error = message.isError === true ? " (error)" : "";
		return [`## entry ${entry.id} · ${role}${tool}${error}`, ...contentLines(message.content)].join("\n");
	}
	if (entry.type === "custom_message") {
		return [`## entry ${entry.id} · custom ${String(e.customType)}`, ...contentLines(e.content)].join("\n");
	}
	return [`## entry ${entry.id} · ${entry.type}`, JSON.stringify(e)].join("\n");
}
