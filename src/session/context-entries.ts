// From Pi's session to the lattice's input: the active branch's context entries that produce
// messages, each with its canonical bytes and leaf hash. The raw entries, not the edited
// projection: a fold omits entries from the window, but they stay the lattice's leaves.
import { type SessionEntry, sessionEntryToContextMessages } from "@earendil-works/pi-coding-agent";
import { DIGEST_BYTES, type PiFoldCore, toHex } from "../../bindings/index.ts";
import type { LatticeEntry } from "../lattice/index.ts";
import { asRecord } from "../vocabulary.ts";
import { type ContextEntries, canonicalText } from "./canonical.ts";

export { type ContextEntries, canonicalText, textAt } from "./canonical.ts";

/**
 * How the lattice treats an entry. Only user/assistant/toolResult messages and custom messages can
 * be the target of a Pi `context_edit`; everything else that shows in the window (a compaction
 * summary, a branch summary, a bash execution, a system message) must stay as it is, so the
 * lattice sees it as "system": never inside a fold.
 */
function latticeRole(entry: SessionEntry): LatticeEntry["role"] {
	if (entry.type === "custom_message") return "custom";
	if (entry.type !== "message") return "system";
	const role = entry.message.role;
	return role === "user" || role === "assistant" || role === "toolResult" ? role : "system";
}

/**
 * The tool calls a message opens: an assistant message's calls, which its results must answer.
 * pi-ai drops aborted and failed assistant messages before they reach a provider, so their calls
 * open nothing (an unanswered one makes no batch incomplete and no request invalid). Read loosely:
 * any message shape, never throws.
 */
export function callsOpenedBy(message: unknown): string[] {
	const m = asRecord(message);
	if (m?.role !== "assistant" || m.stopReason === "aborted" || m.stopReason === "error") return [];
	if (!Array.isArray(m.content)) return [];
	const ids: string[] = [];
	for (const b of m.content) {
		const block = asRecord(b);
		if (block?.type === "toolCall") ids.push(String(block.id));
	}
	return ids;
}

function toolLinks(entry: SessionEntry): Pick<LatticeEntry, "toolCallIds" | "toolCallId"> {
	if (entry.type !== "message") return {};
	const m = entry.message;
	if (m.role === "assistant") {
		const ids = callsOpenedBy(m);
		return ids.length > 0 ? { toolCallIds: ids } : {};
	}
	if (m.role === "toolResult") return { toolCallId: m.toolCallId };
	return {};
}

/**
 * The message-producing entries among `entries` (pass `sessionManager.buildContextEntries()`),
 * hashed in one batch by the core.
 */
export function contextEntriesOf(entries: readonly SessionEntry[], core: PiFoldCore): ContextEntries {
	const sources = entries.filter((e) => sessionEntryToContextMessages(e).length > 0);
	const texts = sources.map(canonicalText);
	const digests = core.hashSpans(texts);
	const lattice = sources.map(
		(entry, i): LatticeEntry => ({
			id: entry.id,
			hash: toHex(digests, i * DIGEST_BYTES, (i + 1) * DIGEST_BYTES),
			bytes: Buffer.byteLength(texts[i]),
			role: latticeRole(entry),
			...toolLinks(entry),
		}),
	);
	return { entries: lattice, sources };
}
