// The active branch of a session file as Pi reopens it, read without Pi and without writing: from
// the last entry in file order back up its parents to the root. A legacy file (format 1) has no
// entry ids and no branches: its entries are one line, named here by their line in the file.

import { branchOf } from "../replay/session-folds.ts";
import type { CheckedSession } from "../replay/session-lines.ts";
import { type JournalOp, parseJournalOp } from "../session/journal.ts";
import { RECORD_TYPE } from "../vocabulary.ts";

/** A session entry, loosely: what the view reads of it. */
export type BranchEntry = Record<string, unknown> & { type: string; id: string; parentId: string | null };

/** One of pi-fold's records on the branch, and where it stands. */
export interface JournalStep {
	position: number;
	entry: BranchEntry;
	op: JournalOp;
}

export interface SessionBranch {
	sessionId: string;
	entries: BranchEntry[];
	/** Branch position of each entry id. */
	position: Map<string, number>;
	journal: JournalStep[];
	/** pi-fold records that could not be read (a newer format, a damaged line). */
	unreadable: number;
}

export function sessionBranch(checked: CheckedSession): SessionBranch {
	const header = checked.entries[0] as unknown as Record<string, unknown>;
	const all = checked.entries.slice(1) as unknown as BranchEntry[];
	const legacy = all.every((e) => typeof e.id !== "string");
	const entries = legacy
		? all.map((e, i): BranchEntry => ({ ...e, id: `line-${i + 2}`, parentId: i === 0 ? null : `line-${i + 1}` }))
		: branchOf(all, new Map(all.filter((e) => typeof e.id === "string").map((e) => [e.id, e])));
	const position = new Map(entries.map((e, i) => [e.id, i]));
	const journal: JournalStep[] = [];
	let unreadable = 0;
	entries.forEach((entry, i) => {
		if (entry.type !== "custom" || entry.customType !== RECORD_TYPE) return;
		const parsed = parseJournalOp(entry.data);
		if (parsed.ok) journal.push({ position: i, entry, op: parsed.op });
		else unreadable++;
	});
	return { sessionId: String(header.id), entries, position, journal, unreadable };
}

/** The message an entry puts in a request, for the estimator (undefined: it puts none). */
export function messageOf(entry: BranchEntry): unknown {
	if (entry.type === "message") return entry.message;
	if (entry.type === "custom_message") return { role: "user", content: entry.content };
	if (entry.type === "branch_summary" || entry.type === "compaction")
		return { role: "user", content: String(entry.summary ?? "") };
	return undefined;
}

/** The usage a provider reported for an assistant message's request: its prompt tokens. */
export function billedPrompt(entry: BranchEntry): number | undefined {
	const m = entry.message as { role?: string; usage?: Record<string, unknown> } | undefined;
	if (entry.type !== "message" || m?.role !== "assistant" || !m.usage) return undefined;
	const n = (k: string) => (typeof m.usage?.[k] === "number" ? (m.usage[k] as number) : 0);
	const total = n("input") + n("cacheRead") + n("cacheWrite");
	return total > 0 ? total : undefined;
}

export const isAssistant = (e: BranchEntry) =>
	e.type === "message" && (e.message as { role?: string } | undefined)?.role === "assistant";
