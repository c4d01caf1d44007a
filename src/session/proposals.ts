// What pi-fold asked Pi to append, and the state it planned for once Pi has. A handler never
// changes the open session: it returns drafts (a turn boundary, an overflow's settle) or appends
// records (a quiet turn, an operation), and remembers here the lattice those records make, keyed by
// the session leaf it planned on. The next sync reads the entries Pi appended: when they hold exactly
// the proposal's records, the planned state is adopted (the same state a rebuild from the session
// would reach, without the rebuild); otherwise the proposal is dropped and the session is read as it
// is. Pi chains turn_end results through every extension, and one loaded after pi-fold may replace
// the entries or add one Pi refuses (then Pi drops the whole batch): the session is the truth.
import type { SessionBoundaryDraft, SessionEntry } from "@earendil-works/pi-coding-agent";
import type { FoldId } from "../fold-types.ts";
import type { FoldLattice } from "../lattice/index.ts";
import { RECORD_TYPE } from "../vocabulary.ts";
import type { RecordIndex } from "./persist.ts";

type Recordish = { type: string; customType?: string; data?: unknown };

/** The state the open session takes once the proposal's records are in the session. */
export interface ProposedState {
	lattice: FoldLattice;
	/** Whether that lattice shows another window (a commit, an expand), not only other marks. */
	changesWindow?: boolean;
	/** The record index with what the proposal's commit wrote (absent: unchanged). */
	records?: RecordIndex;
	/** The pending marks' briefs as the plan kept them (absent: unchanged). */
	markBriefs?: Map<string, string>;
	/** Marks the store refused while the plan was made durable, with why. */
	unstorable?: ReadonlyMap<FoldId, string>;
}

export interface Proposal<T = unknown> {
	/** The session leaf the plan was made on: the records must follow it. */
	leafId: string;
	/** The open session's version the plan was made on: any other change since makes it stale. */
	version: number;
	/** The proposal's records (their data as JSON), in order. */
	records: string[];
	commit: boolean;
	state: ProposedState;
	/** What the proposer does once it is adopted, or restores once it is dropped. */
	then: T;
}

/** pi-fold's records among `entries` (drafts or session entries), as JSON. */
export function ownRecords(entries: readonly Recordish[]): string[] {
	return entries.flatMap((e) => (e.type === "custom" && e.customType === RECORD_TYPE ? [JSON.stringify(e.data)] : []));
}

/** How the entries Pi appended after a proposal's leaf answer it. */
export function answerOf(p: Proposal, added: readonly SessionEntry[]): "adopt" | "dropped" | "waiting" {
	if (added.length === 0) return "waiting";
	const found = ownRecords(added as readonly Recordish[]);
	if (found.length === p.records.length && found.every((r, i) => r === p.records[i])) return "adopt";
	return "dropped";
}

/** Why a dropped proposal is reported, in one line. */
export function droppedMessage(p: Proposal, added: readonly SessionEntry[] | undefined): string {
	const found = new Set(ownRecords((added ?? []) as readonly Recordish[]));
	const missing = p.records.filter((r) => !found.has(r)).length;
	return (
		`${missing} of the ${p.records.length} records pi-fold proposed were not appended ` +
		"(an extension after pi-fold replaced the boundary's entries, Pi refused them, or the disk was full)" +
		`${p.commit ? ": its commit did not happen; the marks stay pending" : ""}; read again from the session`
	);
}

export class Proposals<T = unknown> {
	#pending: Proposal<T> | undefined;

	/**
	 * `drafts` (or records) were handed to Pi at `leafId`; once appended, the session is in `state`.
	 * False when they hold no record: nothing of the session's folds changes, nothing is pending.
	 */
	propose(
		leafId: string | null,
		version: number,
		drafts: readonly (SessionBoundaryDraft | Recordish)[],
		state: ProposedState,
		then: T,
	): boolean {
		const records = ownRecords(drafts as readonly Recordish[]);
		const commit = records.some((r) => (JSON.parse(r) as { op?: unknown }).op === "commit");
		this.#pending =
			leafId !== null && records.length > 0 ? { leafId, version, records, commit, state, then } : undefined;
		return this.#pending !== undefined;
	}

	get pending(): Proposal<T> | undefined {
		return this.#pending;
	}

	/** The pending proposal, taken (it is adopted or dropped now). */
	take(): Proposal<T> | undefined {
		const p = this.#pending;
		this.#pending = undefined;
		return p;
	}
}
