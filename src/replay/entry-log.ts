// A replayed session branch: a plain list of entries that answers the read side of Pi's
// SessionManager (what an extension sees as ctx.sessionManager), computed by Pi's own exported
// functions (buildSessionProjection, buildContextEntries). Recorded entries keep their ids and
// timestamps and are re-linked into one path (the entries the replay drops would leave gaps);
// entries the replay writes (a compaction, pi-fold's drafts) get ids from a counter and the
// timestamp they are given. Why not a SessionManager: its appends draw random ids and the clock,
// and pi-fold's fold ids hash entry bytes, ids included: the same session would replay to other
// briefs (other ids to estimate) on every run. This way a replay is deterministic.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import {
	buildContextEntries,
	buildSessionProjection,
	type CompactionEntry,
	type ExtensionContext,
	type SessionBoundaryDraft,
	type SessionEntry,
	type SessionHeader,
	type SessionProjection,
	type SessionTreeNode,
} from "@earendil-works/pi-coding-agent";

type ReadonlySessionManager = ExtensionContext["sessionManager"];

/** What a replayed branch keeps of the recorded header. */
export type LogHeader = Pick<SessionHeader, "id" | "cwd" | "timestamp">;

/** Replayed entries' ids: not 8 hex digits, so never one of Pi's. */
const idOf = (serial: number) => `r${serial.toString(36).padStart(7, "0")}`;

export class EntryLog implements ReadonlySessionManager {
	readonly entries: SessionEntry[] = [];
	readonly #byId = new Map<string, SessionEntry>();
	readonly #header: SessionHeader;
	readonly #file: string | undefined;
	#serial = 0;

	/** `file`: where the session would be saved (the fold store and evidence go beside it); never written. */
	constructor(header: LogHeader, file?: string) {
		this.#header = { type: "session", version: 3, ...header };
		this.#file = file;
	}

	#push(entry: SessionEntry): SessionEntry {
		this.entries.push(entry);
		this.#byId.set(entry.id, entry);
		return entry;
	}

	/** Append a recorded entry (a copy, re-linked after the current leaf). */
	append(entry: SessionEntry): SessionEntry {
		return this.#push({ ...entry, parentId: this.getLeafId() } as SessionEntry);
	}

	/** Append a recorded message entry carrying another message (a replayed answer: other usage). */
	appendMessage(entry: SessionEntry, message: AgentMessage): SessionEntry {
		return this.append({ ...entry, message } as SessionEntry);
	}

	/** A new entry written by the replay. */
	#fresh(timestamp: string): { id: string; parentId: string | null; timestamp: string } {
		return { id: idOf(++this.#serial), parentId: this.getLeafId(), timestamp };
	}

	appendCompaction(
		fields: Pick<CompactionEntry, "summary" | "firstKeptEntryId" | "tokensBefore" | "systemMessage">,
		timestamp: string,
	): void {
		this.#push({ type: "compaction", ...this.#fresh(timestamp), ...fields });
	}

	/**
	 * Append a boundary batch as Pi does: all of it or, when one draft is invalid, none of it (the
	 * checks and the string normalisation are Pi's SessionManager.appendContextEdit's). Throws why.
	 */
	appendBatch(drafts: readonly SessionBoundaryDraft[], timestamp: string): void {
		for (const d of drafts) this.#check(d);
		for (const d of drafts) {
			if (d.type === "context_edit") {
				const target = this.#byId.get(d.targetId) as SessionEntry;
				const role = target.type === "message" ? target.message.role : "custom";
				const replacement =
					d.replacement !== null &&
					(role === "assistant" || role === "toolResult") &&
					typeof d.replacement.content === "string"
						? { content: [{ type: "text" as const, text: d.replacement.content }] }
						: d.replacement;
				this.#push({ type: "context_edit", ...this.#fresh(timestamp), targetId: d.targetId, replacement });
			} else if (d.type === "custom") {
				this.#push({ type: "custom", ...this.#fresh(timestamp), customType: d.customType, data: d.data });
			} else if (d.type === "custom_message") {
				const { customType, content, display, details } = d;
				this.#push({ type: "custom_message", customType, content, display, details, ...this.#fresh(timestamp) });
			}
		}
	}

	#check(d: SessionBoundaryDraft): void {
		if (d.type === "custom" || d.type === "custom_message") return;
		if (d.type !== "context_edit") throw new Error(`a ${d.type} draft is not replayed`);
		const r = d.replacement;
		if (r !== null && (typeof r !== "object" || (typeof r.content !== "string" && !Array.isArray(r.content)))) {
			throw new Error("Context edit replacement must be null or contain string/array content");
		}
		const target = this.#byId.get(d.targetId);
		if (!target) throw new Error(`Entry ${d.targetId} not found`);
		if (!this.getBranch().some((e) => e.id === d.targetId))
			throw new Error(`Entry ${d.targetId} is not on the active branch`);
		const editable =
			target.type === "custom_message" ||
			(target.type === "message" && ["user", "assistant", "toolResult"].includes(target.message.role));
		if (!editable) throw new Error(`Entry ${d.targetId} does not contribute editable model content`);
	}

	// ---- the read side of SessionManager ----

	getCwd(): string {
		return this.#header.cwd;
	}

	getSessionDir(): string {
		return "";
	}

	getSessionId(): string {
		return this.#header.id;
	}

	getSessionFile(): string | undefined {
		return this.#file;
	}

	getLeafId(): string | null {
		return this.entries.at(-1)?.id ?? null;
	}

	getLeafEntry(): SessionEntry | undefined {
		return this.entries.at(-1);
	}

	getEntry(id: string): SessionEntry | undefined {
		return this.#byId.get(id);
	}

	getLabel(_id: string): string | undefined {
		return undefined;
	}

	/** The path from the root to `fromId` (default: the leaf). */
	getBranch(fromId?: string): SessionEntry[] {
		const path: SessionEntry[] = [];
		let at = fromId === undefined ? this.getLeafEntry() : this.#byId.get(fromId);
		while (at) {
			path.push(at);
			at = at.parentId === null ? undefined : this.#byId.get(at.parentId);
		}
		return path.reverse();
	}

	buildContextEntries(): SessionEntry[] {
		return buildContextEntries(this.entries, this.getLeafId(), this.#byId);
	}

	buildSessionProjection(): SessionProjection {
		return buildSessionProjection(this.entries, this.getLeafId(), this.#byId);
	}

	/** The projection of the branch (alias kept short for the policies). */
	projection(): SessionProjection {
		return this.buildSessionProjection();
	}

	getHeader(): SessionHeader {
		return this.#header;
	}

	getEntries(): SessionEntry[] {
		return [...this.entries];
	}

	getTree(): SessionTreeNode[] {
		const nodes = new Map<string, SessionTreeNode>(this.entries.map((e) => [e.id, { entry: e, children: [] }]));
		const roots: SessionTreeNode[] = [];
		for (const e of this.entries) {
			const node = nodes.get(e.id) as SessionTreeNode;
			const parent = e.parentId === null ? undefined : nodes.get(e.parentId);
			(parent ? parent.children : roots).push(node);
		}
		return roots;
	}

	getSessionName(): string | undefined {
		return undefined;
	}
}
