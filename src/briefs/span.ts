// What a span of entries holds, read from Pi's entries defensively (old sessions, custom
// messages, broken tool output: never throws): its tool calls with their results, the assistant's
// notes, the first user text, and how many entries of each role. Briefs and index lines are
// written from this reading.
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { FoldId } from "../fold-types.ts";
import type { FoldLeaf, FoldView } from "../lattice/index.ts";
import { codePointLength } from "../values/text-fit.ts";
import { asRecord } from "../vocabulary.ts";
import { principalArgs } from "./call-args.ts";
import type { IndexChild } from "./index-lines.ts";

export interface CallInfo {
	id: string;
	name: string;
	/** Arguments as `key=value, …` (short); `json` is the exact JSON. */
	args: string;
	json: string;
	/** The arguments as given. */
	input: unknown;
	result?: { text: string; chars: number; isError: boolean; images: number };
	/** A result whose call is not in the span read (its call, if anywhere, is before the span). */
	orphan?: true;
}

type Loose = Record<string, unknown>;

/** Text of a content field (string or blocks); images counted, not shown. */
function contentText(content: unknown): { text: string; images: number } {
	if (typeof content === "string") return { text: content, images: 0 };
	if (!Array.isArray(content)) return { text: "", images: 0 };
	const parts: string[] = [];
	let images = 0;
	for (const b of content) {
		const block = asRecord(b);
		if (block?.type === "text" && typeof block.text === "string") parts.push(block.text);
		else if (block?.type === "image") images++;
	}
	return { text: parts.join("\n"), images };
}

function messageOf(entry: SessionEntry | undefined): Loose | undefined {
	if (!entry) return undefined;
	if (entry.type === "message") return asRecord(entry.message);
	if (entry.type === "custom_message") return { role: "custom", content: entry.content };
	return undefined;
}

function jsonText(value: unknown): string {
	try {
		return JSON.stringify(value ?? {}) ?? "{}";
	} catch {
		return "{…}";
	}
}

/**
 * `path=src/a.ts, limit=80`: an object's top-level fields without JSON's quoting (briefs are prose),
 * the principal ones (path, command, pattern, ids, numbers) first.
 */
function argsText(args: unknown): string {
	const record = asRecord(args);
	if (!record) return jsonText(args);
	const order = principalArgs(record).map((p) => p.key);
	const rest = Object.keys(record).filter((k) => !order.includes(k));
	return [...order, ...rest]
		.map((k) => [k, record[k]] as const)
		.map(([k, v]) => `${k}=${typeof v === "string" ? v : jsonText(v)}`)
		.join(", ");
}

/** Tool calls (with their results), assistant notes and the first user text of a span. */
export interface SpanContent {
	calls: CallInfo[];
	notes: string[];
	opening?: string;
	roles: Map<string, { n: number; chars: number }>;
	missing: number;
}

/** The session entries a brief reads, by id (a Map, or a lookup through the context's positions). */
export type EntryLookup = Pick<ReadonlyMap<string, SessionEntry>, "get">;

export function readSpan(leaves: readonly FoldLeaf[], entriesById: EntryLookup): SpanContent {
	const out: SpanContent = { calls: [], notes: [], roles: new Map(), missing: 0 };
	const byCall = new Map<string, CallInfo>();
	for (const leaf of leaves) {
		const m = messageOf(entriesById.get(leaf.entryId));
		if (!m) {
			out.missing++;
			continue;
		}
		const role = typeof m.role === "string" ? m.role : "other";
		const { text, images } = contentText(m.content);
		const r = out.roles.get(role) ?? { n: 0, chars: 0 };
		r.n++;
		r.chars += codePointLength(text);
		out.roles.set(role, r);
		if (role === "user" && out.opening === undefined) out.opening = text;
		if (role === "assistant" && Array.isArray(m.content)) {
			for (const b of m.content) {
				const block = asRecord(b);
				if (block?.type === "text" && typeof block.text === "string" && block.text.trim() !== "") {
					out.notes.push(block.text);
				} else if (block?.type === "toolCall") {
					const call: CallInfo = {
						id: String(block.id ?? ""),
						name: typeof block.name === "string" ? block.name : "?",
						args: argsText(block.arguments),
						json: jsonText(block.arguments),
						input: block.arguments,
					};
					out.calls.push(call);
					byCall.set(call.id, call);
				}
			}
		}
		if (role === "toolResult") {
			const id = String(m.toolCallId ?? "");
			const result = { text, chars: codePointLength(text), isError: m.isError === true, images };
			const call = byCall.get(id);
			if (call) call.result = result;
			else {
				// A result whose call is outside the leaves (never in a valid fold): still described.
				const name = typeof m.toolName === "string" ? m.toolName : "?";
				const orphan: CallInfo = { id, name, args: "", json: "", input: undefined, result, orphan: true };
				out.calls.push(orphan);
				byCall.set(id, orphan);
			}
		}
	}
	return out;
}

/**
 * How many calls readSpan finds in a span, from the readings of its consecutive parts, in order:
 * a part's result answering a call read in an earlier part joins that call instead of counting
 * as a call of its own, as it does when the span is read whole.
 */
export function callsAcross(parts: readonly SpanContent[]): number {
	const seen = new Set<string>();
	let n = 0;
	for (const part of parts) {
		for (const c of part.calls) if (!(c.orphan && seen.has(c.id))) n++;
		for (const c of part.calls) seen.add(c.id);
	}
	return n;
}

/** What an index line says about one fold: its shape and everything its entries hold. */
export function indexChild(
	id: FoldId,
	fold: Pick<FoldView, "kind" | "brief" | "provenance" | "children"> | undefined,
	leaves: readonly FoldLeaf[],
	entriesById: EntryLookup,
): IndexChild & { span: SpanContent } {
	const supplied = fold?.provenance === "supplied" ? fold.brief.split("\n", 1)[0] : undefined;
	return {
		id,
		kind: fold?.kind ?? "tool-batch",
		entries: leaves.length,
		folds: fold?.children.filter((k) => k.type === "fold").length ?? 0,
		span: readSpan(leaves, entriesById),
		...(supplied ? { supplied } : {}),
	};
}
