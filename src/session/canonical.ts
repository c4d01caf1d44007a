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
