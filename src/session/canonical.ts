// An entry's canonical bytes, what the store keeps of it, and the context entries that hold them.
// Apart from context-entries.ts (which asks Pi which entries make messages), so what reads folds
// back without Pi (`pi-fold peek`, `unfold`) loads none of Pi.
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { LatticeEntry } from "../lattice/index.ts";

/** An entry's canonical bytes: the JSON text Pi persists for it (one line of the session file). */
export function canonicalText(entry: SessionEntry): string {
	return JSON.stringify(entry);
}

export interface ContextEntries {
	/** The lattice's input, in window order. */
	entries: LatticeEntry[];
	/**
	 * The Pi entries behind them, same order. Their canonical bytes (what the store keeps) are not
	 * held beside them: textAt derives them again when a write or a read needs them.
	 */
	sources: SessionEntry[];
	/**
	 * Entries Pi hides outside every fold: pi-fold's own notices of earlier commits, each hidden by
	 * the commit after it. The lattice sees them as raw; the window does not show them.
	 */
	hidden?: Set<string>;
}

/**
 * Which of `context`'s notices the context edits among `raw` (in session order) leave hidden: the
 * latest edit of each decides. Only pi-fold's own notices are hidden this way outside a fold.
 */
export function hiddenNotices(
	raw: readonly (SessionEntry | { type: "context_edit"; targetId: string; replacement: unknown })[],
	isNotice: (id: string) => boolean,
	into: Set<string> = new Set(),
): Set<string> {
	for (const e of raw) {
		if (e.type !== "context_edit" || !isNotice(e.targetId)) continue;
		if (e.replacement === null) into.add(e.targetId);
		else into.delete(e.targetId);
	}
	return into;
}

/**
 * The canonical bytes (as text) of the entry at position `p`: derived from Pi's entry, which never
 * changes once appended. Whoever trusts them checks them against the entry's leaf hash (the store
 * on every write, a read of a pending fold by hashing them again), so an entry changed in place is
 * found out, never folded under its old hash.
 */
export function textAt(context: Pick<ContextEntries, "sources">, p: number): string {
	return canonicalText(context.sources[p]);
}
