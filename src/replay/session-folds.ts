// A folded session read without Pi, for `pi-fold peek` and `pi-fold unfold`: the session file's
// active branch (as Pi reopens it: from the last entry in file order back to the root), the folds
// pi-fold recorded on it, and their exact originals from the store beside the file, each fold
// verified by SHA-256 from the store alone. Nothing here loads Pi: these commands are for a person
// who may have removed pi-fold from Pi, or never had Pi on this machine.
import type { PiFoldCore } from "../../bindings/index.ts";
import type { FoldId, HexHash } from "../fold-types.ts";
import { journalOps, reduceJournal } from "../session/journal-state.ts";
import { FoldStore, type VerifiedFold } from "../store/index.ts";
import { asRecord, errorMessage } from "../vocabulary.ts";
import { type CheckedSession, ReplayInputError, readSessionFile } from "./session-lines.ts";

/** A session-file entry, loosely: what these commands read of it. */
export type LooseEntry = Record<string, unknown> & { type: string; id?: string; parentId?: string | null };

export interface SessionFolds {
	file: string;
	sessionId: string;
	checked: CheckedSession;
	/** Entries by id, the whole file. */
	byId: Map<string, LooseEntry>;
	/** The active branch, root first: what Pi shows when it reopens the file. */
	branch: LooseEntry[];
	/** Every fold the file records (any branch), by id: the hash of its record in the store. */
	records: Map<FoldId, HexHash>;
	/** The folds recorded on the active branch, in the order they were committed. */
	onBranch: FoldId[];
	store: FoldStore;
}

/** A fold that cannot be read back: the reason names the fold, the file and what failed. */
export class FoldReadError extends Error {
	override name = "FoldReadError";
}

/** Read a session file and the folds it records (ReplayInputError when it is not a session, or has no folds). */
export function readSessionFolds(file: string, core: PiFoldCore): SessionFolds {
	const checked = readSessionFile(file);
	const header = checked.entries[0] as unknown as LooseEntry;
	const sessionId = String(header.id);
	const entries = checked.entries.slice(1) as unknown as LooseEntry[];
	const byId = new Map<string, LooseEntry>();
	for (const e of entries) if (typeof e.id === "string") byId.set(e.id, e);
	const branch = branchOf(entries, byId);
	// Every fold the file records, on any branch (a fork's folds stay readable), and the branch's own.
	const records = new Map<FoldId, HexHash>();
	for (const op of journalOps(entries)) {
		const folds = op.op === "commit" ? op.folds : op.op === "consolidate" ? [op.fold] : [];
		for (const f of folds) records.set(f.id, f.record);
	}
	const onBranch = reduceJournal(journalOps(branch)).committed;
	let store: FoldStore;
	try {
		store = FoldStore.forSession({ sessionFile: file, sessionId }, core);
	} catch (err) {
		throw new ReplayInputError(`${file}: no store for session id ${JSON.stringify(sessionId)}: ${errorMessage(err)}`);
	}
	return { file, sessionId, checked, byId, branch, records, onBranch, store };
}

/** Pi's reopened branch: from the last entry in file order, up its parents to the root. */
export function branchOf<E extends { id?: unknown; parentId?: unknown }>(
	entries: readonly E[],
	byId: ReadonlyMap<string, E>,
): E[] {
	const out: E[] = [];
	const seen = new Set<string>();
	let at: E | undefined = entries[entries.length - 1];
	while (at && typeof at.id === "string" && !seen.has(at.id)) {
		seen.add(at.id);
		out.push(at);
		at = typeof at.parentId === "string" ? byId.get(at.parentId) : undefined;
	}
	return out.reverse();
}

/** One fold's originals from the store, verified (FoldReadError naming what failed; unknown ids too). */
export function verifiedFold(s: SessionFolds, id: string): VerifiedFold {
	const record = s.records.get(id);
	if (record === undefined) {
		const known = [...s.records.keys()];
		const listed = known.length === 0 ? "it records no folds" : `its folds: ${known.slice(0, 12).join(", ")}`;
		const more = known.length > 12 ? ` and ${known.length - 12} more` : "";
		throw new FoldReadError(`${s.file}: no fold ${id} in this session (${listed}${more})`);
	}
	try {
		return s.store.verifyFold(record, { id });
	} catch (err) {
		throw new FoldReadError(
			`fold ${id} cannot be read back from ${s.store.root}: ${errorMessage(err)}. Nothing was changed; ` +
				"the session file itself still holds the entries as they were written",
		);
	}
}

/** The content a context edit restores for an entry: a message's content, a custom message's own. */
export function contentOf(entry: LooseEntry): unknown {
	if (entry.type === "message") return asRecord(entry.message)?.content;
	if (entry.type === "custom_message") return entry.content;
	return undefined;
}
