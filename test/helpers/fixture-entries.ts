// Turns a recorded Pi session (JSON lines) into LatticeEntry[] for the lattice tests. Each line is
// one entry: id = its own id, else its line index; hash = SHA-256 of the line; role from
// message.role. Lines that are not messages (the session header, model and thinking-level
// changes, compactions) become "system": Pi refuses context edits that target them, so for the
// lattice they are barriers no fold may cover, exactly like system entries.
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { toHex } from "../../bindings/hex.ts";
import type { PiFoldCore } from "../../bindings/index.ts";
import type { EntryRole, LatticeEntry } from "../../src/lattice/index.ts";

export const FIXTURE = fileURLToPath(
	new URL("../../../shared/fixtures/sessions/pi-mono-before-compaction.jsonl", import.meta.url),
);

export const fixtureAvailable = (): boolean => existsSync(FIXTURE);

/** A session file's entries as written, one JSON object a line. */
export type FileLine = Record<string, unknown> & { type: string; id: string };
export const fileEntries = (file: string): FileLine[] =>
	readFileSync(file, "utf8")
		.trimEnd()
		.split("\n")
		.map((l) => JSON.parse(l) as FileLine);

const MESSAGE_ROLES: Record<string, EntryRole> = {
	user: "user",
	assistant: "assistant",
	toolResult: "toolResult",
	custom: "custom",
	system: "system",
};

interface Line {
	id?: unknown;
	message?: { role?: unknown; content?: unknown; toolCallId?: unknown };
}

/** LatticeEntry[] from JSON-lines text, hashing each line with the core. */
export function entriesFromJsonl(text: string, core: Pick<PiFoldCore, "hashSpans">): LatticeEntry[] {
	const lines = text.split("\n").filter((l) => l.trim() !== "");
	const digests = core.hashSpans(lines);
	const encoder = new TextEncoder();
	return lines.map((line, i): LatticeEntry => {
		const parsed = JSON.parse(line) as Line;
		const message = parsed.message;
		const id = typeof parsed.id === "string" && parsed.id !== "" ? parsed.id : String(i);
		const hash = toHex(digests, 32 * i, 32 * i + 32);
		const bytes = encoder.encode(line).byteLength;
		if (!message) return { id, hash, bytes, role: "system" };
		const role = MESSAGE_ROLES[String(message.role)] ?? "other";
		if (role === "assistant" && Array.isArray(message.content)) {
			const toolCallIds = message.content
				.filter((c): c is { type: "toolCall"; id: string } => c?.type === "toolCall" && typeof c.id === "string")
				.map((c) => c.id);
			return toolCallIds.length > 0 ? { id, hash, bytes, role, toolCallIds } : { id, hash, bytes, role };
		}
		if (role === "toolResult" && typeof message.toolCallId === "string") {
			return { id, hash, bytes, role, toolCallId: message.toolCallId };
		}
		return { id, hash, bytes, role };
	});
}

export function fixtureEntries(core: Pick<PiFoldCore, "hashSpans">): LatticeEntry[] {
	return entriesFromJsonl(readFileSync(FIXTURE, "utf8"), core);
}

/** A hand-written entry: id, role, and the tool call ids it makes (assistant) or answers (toolResult). */
export type EntrySketch =
	| [id: string, role: "user" | "custom" | "system" | "other"]
	| [id: string, role: "assistant", calls?: string[]]
	| [id: string, role: "toolResult", call: string];

/** LatticeEntry[] from sketches; each entry's bytes are `content(id)` (default: a JSON line naming it). */
export function sketchedEntries(
	core: Pick<PiFoldCore, "sha256">,
	sketches: readonly EntrySketch[],
	content: (id: string) => string = (id) => JSON.stringify({ type: "message", id }),
): LatticeEntry[] {
	const encoder = new TextEncoder();
	return sketches.map(([id, role, tool]): LatticeEntry => {
		const bytes = encoder.encode(content(id));
		const base = { id, role, hash: toHex(core.sha256(bytes)), bytes: bytes.byteLength };
		if (role === "assistant" && Array.isArray(tool) && tool.length > 0) return { ...base, toolCallIds: tool };
		if (role === "toolResult" && typeof tool === "string") return { ...base, toolCallId: tool };
		return base;
	});
}
