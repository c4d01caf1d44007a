// The open session: the lattice of the active branch, a reduction of Pi's session, with its
// context entries, the fold store beside the session file, and what this process learnt about the
// session (folds known damaged, marks that could not be stored, spans withdrawn from folding).
// `sync` is the one writer of the lattice: it reads what the session gained since it last read it
// and either extends the lattice with the new entries, adopts a proposal whose records Pi appended
// (the state the proposer planned, the same a rebuild would reach), or rebuilds from the session's
// own records. Handlers never change it; they propose (proposals.ts) and the next sync reads back.
import type { ExtensionContext, SessionEntry } from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import type { FoldLattice } from "../lattice/index.ts";
import { FoldStore } from "../store/index.ts";
import { type FoldId, isPiFoldNotice, type ProblemState } from "../vocabulary.ts";
import { hiddenNotices } from "./canonical.ts";
import { type ContextEntries, contextEntriesOf } from "./context-entries.ts";
import { entriesSince } from "./entries-since.ts";
import { ancestorStores } from "./fork.ts";
import type { RecordIndex } from "./persist.ts";
import { answerOf, droppedMessage, ownRecords, type Proposal, type Proposals } from "./proposals.ts";
import { rebuildLattice } from "./rebuild.ts";

export type SessionView = ExtensionContext["sessionManager"];

export interface Open {
	/** Set only by the open session's reduction (open, sync); a working copy's is its own. */
	readonly lattice: FoldLattice;
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
	/**
	 * Deterministic briefs of pending marks, written once by the first commit that weighs them: a
	 * memo of a pure function of each mark's span, so filling it changes nothing the session says.
	 */
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

/** What a sync did: the session as it is now, whether it was rebuilt, and what came of a proposal. */
export interface Synced<T> {
	open: Open | undefined;
	rebuilt: boolean;
	/** The proposal whose records Pi appended: its planned state is the open session's now. */
	adopted?: Proposal<T>;
	/** The proposal whose records never appeared, and what to say of it. */
	dropped?: { proposal: Proposal<T>; message: string };
}

/** What reading the session's new entries did. */
type Read = Pick<Synced<never>, "open" | "rebuilt">;

/** The open session as the reduction holds it: the one place its lattice is set. */
type Held = Omit<Open, "lattice"> & { lattice: FoldLattice };

/** A copy of the open session a handler plans on (workingCopy): never the open session itself. */
export type OpenCopy = Held & { readonly working: true };

/** Whether `entries` hold anything that changes the folds: pi-fold's records, or context edits. */
const changesFolds = (entries: readonly SessionEntry[]) =>
	entries.some((e) => e.type === "context_edit") || ownRecords(entries).length > 0;

export class OpenSession {
	readonly #core: PiFoldCore;
	readonly #problem: (where: string, reason: string, state?: ProblemState) => void;
	#open: Held | undefined;
	/** The session leaf `#open` was last synced at (sync's incremental step); only sync sets it. */
	#synced: { open: Held; leafId: string } | undefined;
	/** Counts every change of the open session: a plan made at one version is stale at any other. */
	#version = 0;
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
	 * next boundary measures again.
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

	/** Which state of the open session this is: any sync that changes it moves it on. */
	get version(): number {
		return this.#version;
	}

	/** The session leaf the open session is in step with: what a plan made on it is keyed by. */
	get syncedLeaf(): string | null {
		const synced = this.#synced;
		return synced && synced.open === this.#open ? synced.leafId : null;
	}

	/**
	 * A working copy of the open session for a handler to plan on: its own lattice (a clone) and
	 * its own briefs, unstorable marks and record index; the context and the store are shared (only
	 * sync grows the context). Nothing done to it reaches the session until a sync adopts it.
	 */
	workingCopy(): OpenCopy | undefined {
		const open = this.#open;
		if (!open) return undefined;
		return {
			...open,
			lattice: open.lattice.clone(),
			records: new Map(open.records),
			markBriefs: new Map(open.markBriefs),
			unstorable: new Map(open.unstorable),
			working: true,
		};
	}

	/** (Re)build everything from the session: its records replayed over its context entries. */
	open(sm: SessionView): Open | undefined {
		this.#open = undefined;
		this.#version++;
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
	 * Bring the open session in step with Pi's. A pending proposal is answered first: its records
	 * appended after its leaf, exactly, adopt its state; anything else drops it. Then the entries the
	 * session gained are read: new context entries are hashed and appended to the lattice (cheap);
	 * records nobody proposed, a compaction or another branch rebuild from the session, and
	 * `rebuilt` says so. The new entries are found by walking back from the leaf to the leaf of the
	 * last sync (entriesSince), not by Pi's buildContextEntries (a whole-path rebuild per call): with
	 * no compaction among them, Pi's context entries are the previous ones followed by exactly these
	 * (it only reorders around the newest compaction). Whenever that cannot be shown, the full
	 * comparison runs.
	 */
	sync<T>(sm: SessionView, proposals?: Proposals<T>): Synced<T> {
		const open = this.#open;
		const synced = this.#synced;
		this.#synced = undefined;
		const fresh = open !== undefined && synced?.open === open && open.sessionId === sm.getSessionId();
		let added = fresh ? entriesSince(sm, synced.leafId) : undefined;
		if (added?.some((e) => e.type === "compaction")) added = undefined;

		const p = proposals?.pending;
		if (p) {
			const since = entriesSince(sm, p.leafId);
			const answer = since === undefined ? "dropped" : answerOf(p, since);
			if (answer !== "waiting") proposals?.take();
			if (answer === "adopt") {
				// Planned on exactly this state, at exactly this leaf: the plan is what the records make.
				if (open && added && synced?.leafId === p.leafId && p.version === this.#version) {
					this.#adopt(open, p);
					return { ...this.#appendSynced(open, added, sm), adopted: p };
				}
				return this.#rebuild(sm);
			}
			if (answer === "dropped") {
				const dropped = { proposal: p, message: droppedMessage(p, since) };
				// What did reach the session (edits without their records, say) is read from it whole.
				const read = !open || !added || changesFolds(added) ? this.#rebuild(sm) : this.#appendSynced(open, added, sm);
				return { ...read, dropped };
			}
		}
		if (open && added) {
			return ownRecords(added).length > 0 ? this.#rebuild(sm) : this.#appendSynced(open, added, sm);
		}
		const now = sm.buildContextEntries();
		if (!open || open.sessionId !== sm.getSessionId() || !extendsEntries(open.raw, now)) return this.#rebuild(sm);
		const tail = now.slice(open.raw.length);
		return ownRecords(tail).length > 0 ? this.#rebuild(sm) : this.#appendSynced(open, tail, sm);
	}

	/** The proposal's planned state becomes the open session's. */
	#adopt(open: Held, p: Proposal<unknown>): void {
		const { state } = p;
		// What the last measurement missed still holds over a lattice that shows the same window.
		if (this.#unmeasured?.lattice === open.lattice && !state.changesWindow) this.#unmeasured.lattice = state.lattice;
		open.lattice = state.lattice;
		if (state.records) open.records = state.records;
		if (state.markBriefs) open.markBriefs = state.markBriefs;
		for (const [id, why] of state.unstorable ?? []) open.unstorable.set(id, why);
		this.#version++;
	}

	#rebuild(sm: SessionView): Read {
		return { open: this.#markSynced(this.open(sm) as Held | undefined, sm), rebuilt: true };
	}

	/** Append context entries that extend the lattice's, or rebuild when the lattice refuses them. */
	#appendSynced(open: Held, tail: readonly SessionEntry[], sm: SessionView): Read {
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
			this.#version++;
		}
		open.raw.push(...tail);
		open.context.hidden = hiddenNotices(tail, noticeIn(open.context, open.lattice), open.context.hidden);
		return { open: this.#markSynced(open, sm), rebuilt: false };
	}

	/** Remember the leaf `open` is now in step with (the next sync walks back to it). */
	#markSynced(open: Held | undefined, sm: SessionView): Open | undefined {
		const leafId = sm.getLeafId();
		this.#synced = open && leafId !== null ? { open, leafId } : undefined;
		return open;
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
