// The open session: the lattice of the active branch kept in step with Pi's session, its context
// entries, the fold store beside the session file, and what this process learnt about the session
// (folds known damaged, marks that could not be stored, spans withdrawn from folding). Rebuilt from
// the session's own records on open; between rebuilds it only grows at its end.
import type { ExtensionContext, SessionBoundaryDraft, SessionEntry } from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import type { FoldLattice } from "../lattice/index.ts";
import { FoldStore } from "../store/index.ts";
import { type FoldId, isPiFoldNotice, type ProblemState } from "../vocabulary.ts";
import { hiddenNotices } from "./canonical.ts";
import { type ContextEntries, contextEntriesOf } from "./context-entries.ts";
import { entriesSince } from "./entries-since.ts";
import { ancestorStores } from "./fork.ts";
import type { RecordIndex } from "./persist.ts";
import { rebuildLattice } from "./rebuild.ts";

export type SessionView = ExtensionContext["sessionManager"];

export interface Open {
	lattice: FoldLattice;
	context: ContextEntries;
	/** Every raw context entry the lattice has seen, also those without messages (to detect appends). */
	raw: SessionEntry[];
	store: FoldStore;
	records: RecordIndex;
	sessionId: string;
	/** Folds whose bytes are known damaged (store and session copy), with what is wrong. */
	damaged: Map<FoldId, string>;
	/** Folds recorded under another id (an entry's bytes changed in the session file): recorded -> lattice id. */
	aliases: Map<FoldId, FoldId>;
	/** Marks a commit could not store, with why: not chosen again by the runtime in this session. */
	unstorable: Map<FoldId, string>;
	/** Deterministic briefs of pending marks, written once by the first commit that weighs them. */
	markBriefs: Map<string, string>;
	/** Where a reader reports what it met (a leaf healed on a failed read, a fold found damaged). */
	problem?: (where: string, reason: string, state?: ProblemState) => void;
}

/** Whether the context entry with this id is one of pi-fold's own notices. */
function noticeIn(context: ContextEntries, lattice: FoldLattice): (id: string) => boolean {
	return (id) => {
		const p = lattice.position(id);
		return p !== undefined && isPiFoldNotice(context.sources[p]);
	};
}

/** `now` is `before` plus entries appended at the end (same entries, by id, in the same places). */
function extendsEntries(before: readonly SessionEntry[], now: readonly SessionEntry[]): boolean {
	if (now.length < before.length) return false;
	for (let i = 0; i < before.length; i++) if (before[i] !== now[i] && before[i].id !== now[i].id) return false;
	return true;
}

export class OpenSession {
	readonly #core: PiFoldCore;
	readonly #problem: (where: string, reason: string, state?: ProblemState) => void;
	#open: Open | undefined;
	/** The session leaf `#open` was last synced at (sync's incremental step); only sync sets it. */
	#synced: { open: Open; leafId: string } | undefined;
	/**
	 * Entries of spans the agent or a person withdrew from folding (unmark, reboundary back to raw),
	 * for the session they belong to. The frontier treats them as it treats pins (never cuts them on
	 * its own), so only an explicit mark folds them again. Kept for the life of the process: a
	 * reopened session may mark them again.
	 */
	#withdrawn: { sessionId: string; entryIds: Set<string> } | undefined;
	/**
	 * Window tokens (uncalibrated) the last boundary's own edits added, on the lattice they made:
	 * that boundary measured the window before its edits, so its measurement misses them until the
	 * next boundary measures again. Carried over to copies that change no window (replaceLattice).
	 */
	#unmeasured: { lattice: FoldLattice; tokens: number } | undefined;

	constructor(core: PiFoldCore, problem: (where: string, reason: string, state?: ProblemState) => void) {
		this.#core = core;
		this.#problem = problem;
	}

	/** The open session, or undefined when none is open (never opened, or its rebuild failed). */
	get current(): Open | undefined {
		return this.#open;
	}

	/** (Re)build everything from the session: its records replayed over its context entries. */
	open(sm: SessionView): Open | undefined {
		this.#open = undefined;
		const sessionId = sm.getSessionId();
		const store = FoldStore.forSession({ sessionFile: sm.getSessionFile(), sessionId }, this.#core);
		store.onQuarantine((q) =>
			this.#problem(
				"store",
				`${q.kind} ${q.hash} was ${q.reason}: set aside as ${q.movedTo} and written again`,
				"repaired",
			),
		);
		const parents = ancestorStores(sm.getHeader()?.parentSession, this.#core);
		for (const p of parents.problems) this.#problem("open", p);
		const raw = sm.buildContextEntries();
		const rebuilt = rebuildLattice(sm.getBranch(), raw, this.#core, { store, ancestors: parents.stores });
		if (!rebuilt.ok) {
			this.#problem("rebuild", rebuilt.reason);
			return undefined;
		}
		for (const p of rebuilt.problems) this.#problem("rebuild", p);
		for (const p of rebuilt.repaired) this.#problem("rebuild", p, "repaired");
		rebuilt.context.hidden = hiddenNotices(raw, noticeIn(rebuilt.context, rebuilt.lattice));
		this.#open = {
			lattice: rebuilt.lattice,
			context: rebuilt.context,
			raw: [...raw],
			store,
			records: rebuilt.records,
			sessionId,
			damaged: rebuilt.damaged,
			aliases: rebuilt.aliases,
			unstorable: new Map(),
			markBriefs: new Map(),
			problem: this.#problem,
		};
		return this.#open;
	}

	/**
	 * Bring the lattice in step with the session's context entries: new entries at the end are
	 * hashed and appended (cheap); anything else (a compaction, another branch) rebuilds, and
	 * `rebuilt` says so. The new entries are found by walking back from the leaf to the leaf of the
	 * last sync (entriesSince), not by Pi's buildContextEntries (a whole-path rebuild per call):
	 * with no compaction among them, Pi's context entries are the previous ones followed by exactly
	 * these (it only reorders around the newest compaction). Whenever that cannot be shown, the
	 * full comparison runs.
	 */
	sync(sm: SessionView): { open: Open | undefined; rebuilt: boolean } {
		const open = this.#open;
		const synced = this.#synced;
		this.#synced = undefined;
		if (open && synced?.open === open && open.sessionId === sm.getSessionId()) {
			const added = entriesSince(sm, synced.leafId);
			if (added && !added.some((e) => e.type === "compaction")) return this.#appendSynced(open, added, sm);
		}
		const now = sm.buildContextEntries();
		if (!open || open.sessionId !== sm.getSessionId() || !extendsEntries(open.raw, now)) return this.#rebuild(sm);
		return this.#appendSynced(open, now.slice(open.raw.length), sm);
	}

	#rebuild(sm: SessionView): { open: Open | undefined; rebuilt: boolean } {
		return { open: this.#markSynced(this.open(sm), sm), rebuilt: true };
	}

	/** Append context entries that extend the lattice's, or rebuild when the lattice refuses them. */
	#appendSynced(
		open: Open,
		tail: readonly SessionEntry[],
		sm: SessionView,
	): { open: Open | undefined; rebuilt: boolean } {
		if (tail.length === 0) return { open: this.#markSynced(open, sm), rebuilt: false };
		const added = contextEntriesOf(tail, this.#core);
		if (added.entries.length > 0) {
			const r = open.lattice.extend(added.entries);
			if (!r.ok) {
				this.#problem("sync", r.reason);
				return this.#rebuild(sm);
			}
			open.context.entries.push(...added.entries);
			open.context.sources.push(...added.sources);
		}
		open.raw.push(...tail);
		open.context.hidden = hiddenNotices(tail, noticeIn(open.context, open.lattice), open.context.hidden);
		return { open: this.#markSynced(open, sm), rebuilt: false };
	}

	/** Remember the leaf `open` is now in step with (the next sync walks back to it). */
	#markSynced(open: Open | undefined, sm: SessionView): Open | undefined {
		const leafId = sm.getLeafId();
		this.#synced = open && leafId !== null ? { open, leafId } : undefined;
		return open;
	}

	/** Put `next` in place of the open lattice: a copy of it with changes that leave the window as it is. */
	replaceLattice(next: FoldLattice): void {
		const open = this.#open;
		if (!open) return;
		if (this.#unmeasured?.lattice === open.lattice) this.#unmeasured.lattice = next;
		open.lattice = next;
	}

	/**
	 * Put `next` in place of the open lattice, a window of its own (a commit, with the records it
	 * wrote and its drafts; staged expands and refolds): the only other place the open session's
	 * lattice changes. The notices a commit's drafts hide are hidden from now on (the session says
	 * so too, once Pi appends them).
	 */
	changeWindow(next: FoldLattice, records?: RecordIndex, drafts?: readonly SessionBoundaryDraft[]): void {
		const open = this.#open;
		if (!open) return;
		open.lattice = next;
		if (records) open.records = records;
		const edits = drafts?.filter((d) => d.type === "context_edit") ?? [];
		if (edits.length > 0) open.context.hidden = hiddenNotices(edits, noticeIn(open.context, next), open.context.hidden);
	}

	/** What the last measurement missed (see #unmeasured); `undefined`: measured again, nothing missed. */
	unmeasured(missed: { lattice: FoldLattice; tokens: number } | undefined): void {
		this.#unmeasured = missed;
	}

	/** What the last occupancy measurement missed of the open lattice's window. */
	get unmeasuredTokens(): number {
		const u = this.#unmeasured;
		return u !== undefined && u.lattice === this.#open?.lattice ? u.tokens : 0;
	}

	withdraw(entryIds: readonly string[]): void {
		const sessionId = this.#open?.sessionId;
		if (sessionId === undefined) return;
		if (this.#withdrawn?.sessionId !== sessionId) this.#withdrawn = { sessionId, entryIds: new Set() };
		for (const id of entryIds) this.#withdrawn.entryIds.add(id);
	}

	/** The withdrawn entries of the open session (see #withdrawn). */
	get withdrawn(): ReadonlySet<string> {
		const w = this.#withdrawn;
		return w !== undefined && w.sessionId === this.#open?.sessionId ? w.entryIds : new Set();
	}
}
