// Aligning a `context` event's messages with the session entries that own them, which the
// messages alone cannot tell: Pi builds the event's messages from its session projection, so the
// projection's messages, system ones dropped, match the event's one to one.
import {
	type ExtensionContext,
	type SessionEntry,
	type SessionProjection,
	sessionEntryToContextMessages,
} from "@earendil-works/pi-coding-agent";
import { entriesSince, type SessionWalk } from "../session/entries-since.ts";

/** A message as Pi projects it (an AgentMessage). */
type AgentMessage = SessionProjection["messages"][number];

export type Alignment = { ok: true; entries: SessionEntry[] } | { ok: false; reason: string };

const roleOf = (m: unknown): string =>
	typeof m === "object" && m !== null && typeof (m as { role?: unknown }).role === "string"
		? (m as { role: string }).role
		: "(none)";
const timestampOf = (m: unknown): unknown =>
	typeof m === "object" && m !== null ? (m as { timestamp?: unknown }).timestamp : undefined;

/**
 * The session entry owning each message of a `context` event: the projection's messages, system
 * ones dropped, match the event's one to one. Checked by count, role and
 * timestamp at every index (timestamps repeat, so they check order, they are not keys). A
 * failure means something changed the list before us (another extension): the caller degrades.
 */
export function alignWithProjection(
	messages: readonly AgentMessage[],
	projection: Pick<SessionProjection, "entries">,
): Alignment {
	const owners: SessionEntry[] = [];
	const projected: AgentMessage[] = [];
	for (const pe of projection.entries) {
		for (const m of pe.messages) {
			if (m.role === "system") continue;
			owners.push(pe.sourceEntry);
			projected.push(m);
		}
	}
	if (projected.length !== messages.length) {
		return {
			ok: false,
			reason: `the request has ${messages.length} messages, the session projection ${projected.length}`,
		};
	}
	for (let i = 0; i < messages.length; i++) {
		const got = roleOf(messages[i]);
		const want = roleOf(projected[i]);
		if (got !== want) {
			return { ok: false, reason: `message ${i} is ${got} in the request, ${want} in the session projection` };
		}
		if (timestampOf(messages[i]) !== timestampOf(projected[i])) {
			return {
				ok: false,
				reason: `message ${i} (${got}) has timestamp ${String(timestampOf(messages[i]))} in the request, ${String(timestampOf(projected[i]))} in the session projection`,
			};
		}
	}
	return { ok: true, entries: owners };
}

/** Entries that change how earlier entries project (Pi's buildSessionProjection): never taken incrementally. */
const reshapes = (e: SessionEntry) => e.type === "compaction" || e.type === "context_edit";

/** The last aligned request: where the session's leaf was, and its message count and last message. */
interface Aligned {
	sessionId: string;
	leafId: string;
	count: number;
	role: string;
	timestamp: unknown;
}

/**
 * alignWithProjection, incremental on pure appends. The last full alignment (or extension of it)
 * is kept as: the leaf it was made at, the message count, and the last message's role and
 * timestamp. When the recorder says this request is a pure append of the previous one, its
 * prefix is byte-identical to messages already aligned, and when the session's path only grew
 * past that leaf by entries that do not reshape earlier ones (no compaction, no context edit),
 * Pi's projection is the old one followed by the new entries' messages: only those are checked,
 * by count, role and timestamp, as the full check would. Anything else aligns in full.
 */
export class ProjectionAligner {
	#last: Aligned | undefined;

	/** Forget the last alignment (a rebuilt session): the next one is full. */
	reset(): void {
		this.#last = undefined;
	}

	align(
		messages: readonly AgentMessage[],
		sm: SessionWalk & Pick<ExtensionContext["sessionManager"], "getSessionId" | "buildSessionProjection">,
		pureAppend: boolean,
	): { ok: true } | { ok: false; reason: string } {
		const last = this.#last;
		this.#last = undefined;
		const sessionId = sm.getSessionId();
		const leafId = sm.getLeafId();
		if (pureAppend && last && last.sessionId === sessionId && leafId !== null) {
			// Only a success is taken from the tail; a failure is confirmed (and worded) by the full check.
			if (this.#alignTail(messages, sm, last)) {
				this.#keep(messages, sessionId, leafId);
				return { ok: true };
			}
		}
		const full = alignWithProjection(messages, sm.buildSessionProjection());
		if (full.ok && leafId !== null) this.#keep(messages, sessionId, leafId);
		return full;
	}

	/** Whether the new tail aligns; false also when it cannot be decided incrementally (align in full). */
	#alignTail(messages: readonly AgentMessage[], sm: SessionWalk, last: Aligned): boolean {
		if (messages.length < last.count) return false;
		// The prefix's last message is the one aligned last time (the recorder proved the bytes; this is a cheap guard).
		if (last.count > 0) {
			const m = messages[last.count - 1];
			if (roleOf(m) !== last.role || timestampOf(m) !== last.timestamp) return false;
		}
		const added = entriesSince(sm, last.leafId);
		if (!added || added.some(reshapes)) return false;
		let i = last.count;
		for (const e of added) {
			for (const m of sessionEntryToContextMessages(e)) {
				if (m.role === "system") continue;
				if (i >= messages.length || roleOf(messages[i]) !== m.role || timestampOf(messages[i]) !== timestampOf(m)) {
					return false;
				}
				i++;
			}
		}
		return i === messages.length;
	}

	#keep(messages: readonly AgentMessage[], sessionId: string, leafId: string): void {
		const m = messages.at(-1);
		this.#last = { sessionId, leafId, count: messages.length, role: roleOf(m), timestamp: timestampOf(m) };
	}
}
