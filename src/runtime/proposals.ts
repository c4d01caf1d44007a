// What a turn boundary proposed, checked against what Pi appended. pi-fold answers turn_end with
// drafts and moves its lattice on at once; but Pi chains turn_end results through every extension,
// and one loaded after pi-fold may replace the entries (or add one Pi refuses, and Pi drops the
// whole batch). The session is the truth: at the next sync, a proposal whose records never appeared
// is reported, and the lattice is rebuilt from the session (its marks stay pending there, for the
// next boundary that pays).
import type { SessionBoundaryDraft } from "@earendil-works/pi-coding-agent";
import { entriesSince, type SessionWalk } from "../session/entries-since.ts";
import { RECORD_TYPE } from "../vocabulary.ts";

const recordsOf = (entries: readonly { type: string; customType?: string; data?: unknown }[]) =>
	entries.flatMap((e) => (e.type === "custom" && e.customType === RECORD_TYPE ? [JSON.stringify(e.data)] : []));

export class Proposals {
	#pending: { leafId: string; records: string[]; commit: boolean } | undefined;

	/** A boundary at session leaf `leafId` returned `drafts` (its records are what must appear). */
	propose(leafId: string | null, drafts: readonly SessionBoundaryDraft[]): void {
		const records = recordsOf(drafts as { type: string; customType?: string; data?: unknown }[]);
		const commit = records.some((r) => (JSON.parse(r) as { op?: unknown }).op === "commit");
		this.#pending = leafId !== null && records.length > 0 ? { leafId, records, commit } : undefined;
	}

	/**
	 * Whether the last proposal reached the session: undefined when it did (or cannot be told: the
	 * session moved elsewhere, which rebuilds anyway), else how many of its records are missing.
	 */
	check(sm: SessionWalk): { missing: number; of: number; commit: boolean } | undefined {
		const p = this.#pending;
		if (!p) return undefined;
		// Asked only after the boundary returned: Pi appends its entries before anything else runs, so a
		// leaf that did not move means none of them was appended.
		const added = entriesSince(sm, p.leafId);
		this.#pending = undefined;
		if (!added) return undefined;
		const found = new Set(recordsOf(added as { type: string; customType?: string; data?: unknown }[]));
		const missing = p.records.filter((r) => !found.has(r)).length;
		return missing > 0 ? { missing, of: p.records.length, commit: p.commit } : undefined;
	}
}
