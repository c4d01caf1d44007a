// pi-fold's session records: every lattice change is one Pi custom entry ("pi-fold"), so the
// lattice of any branch is rebuilt by replaying the records on that branch in order, through the
// same validated operations that made them. Records are plain JSON; each carries `v`.
import type { SessionBoundaryDraft } from "@earendil-works/pi-coding-agent";
import { type BriefProvenance, type FoldKind, isFoldId, isHexHash } from "../fold-types.ts";
import { BRIEF_PROVENANCES, FOLD_KINDS, isFoldKind, isProvenance } from "../lattice/fold-values.ts";
import { MAX_BRIEF_CHARS } from "../store/index.ts";
import { RECORD_TYPE } from "../vocabulary.ts";

/** The record format this build writes and reads. A newer one is reported and skipped. */
export const JOURNAL_VERSION = 1;

/** One committed fold: its record in the store, and the brief it shows. */
export interface CommittedFold {
	id: string;
	record: string;
	brief: string;
	provenance: BriefProvenance;
}

export type JournalOp =
	| { v: 1; op: "mark"; id: string; kind: FoldKind; from: string; to: string }
	| { v: 1; op: "brief"; id: string; text: string }
	| { v: 1; op: "unmark"; id: string }
	| { v: 1; op: "reboundary"; from: string; to: string }
	| { v: 1; op: "pin"; entryIds: string[] }
	| { v: 1; op: "unpin"; entryIds: string[] }
	| { v: 1; op: "commit"; folds: CommittedFold[] }
	| { v: 1; op: "expand"; id: string }
	| { v: 1; op: "refold"; id: string }
	| { v: 1; op: "consolidate"; roots: string[]; maxGap: number; fold: CommittedFold };

/** A record as a draft Pi appends at a boundary, in the same batch as the edits it describes. */
export function recordDraft(op: JournalOp): SessionBoundaryDraft {
	return { type: "custom", customType: RECORD_TYPE, data: op };
}

/** A brief in a record is checked as the store checks it (UTF-16 units); the lattice holds it to the real cap. */
const MAX_BRIEF = MAX_BRIEF_CHARS;

export type Parsed = { ok: true; op: JournalOp } | { ok: false; reason: string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isEntryId = (v: unknown): v is string => typeof v === "string" && v.length > 0 && v.length <= 256;

function committed(v: unknown, at: string): string | undefined {
	if (!isObject(v)) return `${at} is not an object`;
	if (!isFoldId(v.id)) return `${at}.id is not a fold id`;
	if (!isHexHash(v.record)) return `${at}.record is not a sha256 hex`;
	if (typeof v.brief !== "string" || v.brief.length > MAX_BRIEF)
		return `${at}.brief is not a string of <= ${MAX_BRIEF} chars`;
	if (!isProvenance(v.provenance)) return `${at}.provenance is not one of ${BRIEF_PROVENANCES.join(", ")}`;
	return undefined;
}

/** Check one record's data exactly; anything else is reported with what was wrong. */
export function parseJournalOp(data: unknown): Parsed {
	if (!isObject(data)) return { ok: false, reason: "record data is not an object" };
	if (data.v !== JOURNAL_VERSION) {
		const what = typeof data.v === "number" && data.v > JOURNAL_VERSION ? "a newer" : "an unknown";
		return {
			ok: false,
			reason: `${what} record format v=${JSON.stringify(data.v)} (this pi-fold reads v=${JOURNAL_VERSION})`,
		};
	}
	const bad = (why: string): Parsed => ({ ok: false, reason: `${String(data.op)} record: ${why}` });
	const foldId = (k: string) => isFoldId(data[k]);
	switch (data.op) {
		case "mark":
			if (!foldId("id")) return bad("id is not a fold id");
			if (!isFoldKind(data.kind)) return bad(`kind is not one of ${FOLD_KINDS.join(", ")}`);
			if (!isEntryId(data.from) || !isEntryId(data.to)) return bad("from/to are not entry ids");
			break;
		case "brief":
			if (!foldId("id")) return bad("id is not a fold id");
			if (typeof data.text !== "string" || data.text.length > MAX_BRIEF) return bad("text is not a brief");
			break;
		case "unmark":
		case "expand":
		case "refold":
			if (!foldId("id")) return bad("id is not a fold id");
			break;
		case "reboundary":
			if (!isEntryId(data.from) || !isEntryId(data.to)) return bad("from/to are not entry ids");
			break;
		case "pin":
		case "unpin":
			if (!Array.isArray(data.entryIds) || data.entryIds.length === 0 || !data.entryIds.every(isEntryId)) {
				return bad("entryIds is not a non-empty list of entry ids");
			}
			break;
		case "commit": {
			if (!Array.isArray(data.folds) || data.folds.length === 0) return bad("folds is not a non-empty list");
			for (const [i, f] of data.folds.entries()) {
				const why = committed(f, `folds[${i}]`);
				if (why) return bad(why);
			}
			break;
		}
		case "consolidate": {
			if (!Array.isArray(data.roots) || data.roots.length < 2 || !data.roots.every(isFoldId)) {
				return bad("roots is not a list of two or more fold ids");
			}
			if (!Number.isInteger(data.maxGap) || (data.maxGap as number) < 0) return bad("maxGap is not a count");
			const why = committed(data.fold, "fold");
			if (why) return bad(why);
			break;
		}
		default:
			return { ok: false, reason: `unknown record op ${JSON.stringify(data.op)}` };
	}
	return { ok: true, op: data as unknown as JournalOp };
}
