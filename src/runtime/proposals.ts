// What a turn boundary proposed, checked against what Pi appended. pi-fold answers turn_end with
// drafts and moves its lattice on at once; but Pi chains turn_end results through every extension,
// and one loaded after pi-fold may replace the entries (or add one Pi refuses, and Pi drops the
// whole batch). The session is the truth: at the next sync, a proposal whose records never appeared
// is reported, and the lattice is rebuilt from the session (its marks stay pending there, for the
// next boundary that pays).
import type { SessionBoundaryDraft } from "@earendil-works/pi-coding-agent";
import { entriesSince, type SessionWalk } from "../session/entries-since.ts";
import { RECORD_TYPE } from "../vocabulary.ts";

type Recordish = { type: string; customType?: string; data?: unknown };

/** pi-fold's records among `entries` (drafts or session entries). */
const ownRecords = (entries: readonly Recordish[]) =>
	entries.filter((e) => e.type === "custom" && e.customType === RECORD_TYPE);

export class Proposals {
	#pending: { leafId: string; records: string[]; commit: boolean } | undefined;

	/** A boundary at session leaf `leafId` returned `drafts` (its records are what must appear). */
	propose(leafId: string | null, drafts: readonly SessionBoundaryDraft[]): void {
		const own = ownRecords(drafts as readonly Recordish[]);
		const commit = own.some((d) => (d.data as { op?: unknown } | undefined)?.op === "commit");
		const records = own.map((d) => JSON.stringify(d.data));
		this.#pending = leafId !== null && records.length > 0 ? { leafId, records, commit } : undefined;
	}

	/**
	 * Whether the last proposal reached the session: undefined when it did (or cannot be told: the
	 * session moved elsewhere, which rebuilds anyway), else whether it held a commit, and what to say.
	 */
	check(sm: SessionWalk): { commit: boolean; message: string } | undefined {
		const p = this.#pending;
		if (!p) return undefined;
		// Asked only after the boundary returned: Pi appends its entries before anything else runs, so a
		// leaf that did not move means none of them was appended.
		const added = entriesSince(sm, p.leafId);
		this.#pending = undefined;
		if (!added) return undefined;
		const found = new Set(ownRecords(added as readonly Recordish[]).map((e) => JSON.stringify(e.data)));
		const missing = p.records.filter((r) => !found.has(r)).length;
		if (missing === 0) return undefined;
		return {
			commit: p.commit,
			message:
				`${missing} of the ${p.records.length} records pi-fold proposed at the last turn boundary were not appended ` +
				"(an extension after pi-fold replaced the boundary's entries, Pi refused them, or the disk was full)" +
				`${p.commit ? ": its commit did not happen; the marks stay pending" : ""}; rebuilt from the session`,
		};
	}
}
