// What each request of a session carried, rebuilt from the session file alone: the entries before
// the request as Pi projects them (the latest compaction's summary and what it kept, context edits
// applied), each weighed by the core's estimator and sorted into raw, pending (under a staged
// mark), folded (a brief shown for a span) and hidden (kept out: folded away or compacted).
import type { PiFoldCore } from "../../bindings/index.ts";
import { estimateMessages } from "../meter/estimate.ts";
import { RECEIPT_TYPE } from "../vocabulary.ts";
import { billedPrompt, isAssistant, messageOf, type SessionBranch } from "./session-branch.ts";
import type { CommitMark, RequestPoint } from "./view-data.ts";

interface Edit {
	/** Tokens of the replacement, or null when the edit hides the entry. */
	tokens: number | null;
	/** The replacement is the original content (an expand). */
	original: boolean;
}

export interface WindowHistory {
	requests: RequestPoint[];
	commits: CommitMark[];
	/** Estimated tokens of each branch entry as written (0 for entries that put no message). */
	tokens: number[];
}

const contentOf = (message: unknown) => JSON.stringify((message as { content?: unknown } | undefined)?.content ?? null);

export function windowHistory(branch: SessionBranch, core: PiFoldCore): WindowHistory {
	const { entries, position } = branch;
	const messages = entries.map(messageOf);
	const weighed = estimateMessages(
		core,
		messages.map((m) => m ?? { role: "user", content: "" }),
	);
	const tokens = entries.map((_, i) => (messages[i] === undefined ? 0 : weighed[i]));
	const editEntries = entries.filter((e) => e.type === "context_edit");
	const editTokens = estimateMessages(
		core,
		editEntries.map((e) => {
			const target = entries[position.get(String(e.targetId)) ?? -1];
			const role = (messageOf(target ?? e) as { role?: string } | undefined)?.role ?? "user";
			const replacement = e.replacement as { content?: unknown } | null;
			return { role, content: replacement?.content ?? "" };
		}),
	);
	const edits = new Map<string, Edit>();
	const marks = new Map<string, [number, number]>();
	let journalAt = 0;
	let editAt = 0;
	let compaction = -1;
	const requests: RequestPoint[] = [];
	const commits: CommitMark[] = [];
	entries.forEach((e, p) => {
		if (e.type === "context_edit") {
			const target = entries[position.get(String(e.targetId)) ?? -1];
			const replacement = e.replacement as { content?: unknown } | null;
			const original =
				replacement !== null && target !== undefined && contentOf(replacement) === contentOf(messageOf(target));
			edits.set(String(e.targetId), { tokens: replacement === null ? null : editTokens[editAt], original });
			editAt++;
		}
		if (e.type === "compaction") compaction = p;
		if (e.type === "custom_message" && e.customType === RECEIPT_TYPE) receipt(commits[commits.length - 1], e.details);
		for (; journalAt < branch.journal.length && branch.journal[journalAt].position === p; journalAt++) {
			const { op } = branch.journal[journalAt];
			if (op.op === "mark") marks.set(op.id, [position.get(op.from) ?? -1, position.get(op.to) ?? -1]);
			else if (op.op === "unmark") marks.delete(op.id);
			else if (op.op === "commit") {
				for (const f of op.folds) marks.delete(f.id);
				commits.push({ request: requests.length, entryId: e.id, folds: op.folds.map((f) => f.id) });
			} else if (op.op === "consolidate") commits[commits.length - 1]?.folds.push(op.fold.id);
		}
		if (!isAssistant(e)) return;
		requests.push(requestAt(branch, p, tokens, edits, [...marks.values()], compaction));
	});
	budgets(requests, commits);
	return { requests, commits, tokens };
}

const count = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : undefined);

/** A commit's receipt (written right after it): the sizes and budget it reports. */
function receipt(commit: CommitMark | undefined, details: unknown): void {
	if (!commit || commit.budget !== undefined) return;
	const d = (details ?? {}) as Record<string, unknown>;
	const [before, after, budget] = [count(d.before), count(d.after), count(d.budget)];
	if (before !== undefined) commit.before = before;
	if (after !== undefined) commit.after = after;
	if (budget !== undefined) commit.budget = budget;
}

/** Each request's serving budget: the latest receipt's at or before it (the first one's before any). */
function budgets(requests: RequestPoint[], commits: readonly CommitMark[]): void {
	const known = commits.filter((c) => c.budget !== undefined);
	if (known.length === 0) return;
	let k = 0;
	requests.forEach((r, i) => {
		while (k + 1 < known.length && known[k + 1].request <= i) k++;
		r.budget = known[k].budget;
	});
}

/** The request answered by the assistant entry at position `p`. */
function requestAt(
	branch: SessionBranch,
	p: number,
	tokens: readonly number[],
	edits: ReadonlyMap<string, Edit>,
	marks: readonly [number, number][],
	compaction: number,
): RequestPoint {
	const point: RequestPoint = { entryId: branch.entries[p].id, raw: 0, pending: 0, folded: 0, summary: 0, hidden: 0 };
	const kept = compaction < 0 ? 0 : keptFrom(branch, compaction);
	for (let q = 0; q < p; q++) {
		const e = branch.entries[q];
		const t = tokens[q];
		if (t === 0) continue;
		if (e.type === "compaction") {
			if (q === compaction) point.summary += t;
			continue;
		}
		if (e.type === "branch_summary") {
			point.summary += t;
			continue;
		}
		if (compaction >= 0 && q < compaction && q < kept) {
			point.hidden += t;
			continue;
		}
		const edit = edits.get(e.id);
		if (edit && !edit.original) {
			point.hidden += t;
			point.folded += edit.tokens ?? 0;
		} else if (marks.some(([from, to]) => from <= q && q <= to)) point.pending += t;
		else point.raw += t;
	}
	const billed = billedPrompt(branch.entries[p]);
	if (billed !== undefined) point.billed = billed;
	return point;
}

/** Where the compaction at `c` keeps the branch from: its first kept entry (an index in a legacy file). */
function keptFrom(branch: SessionBranch, c: number): number {
	const e = branch.entries[c];
	if (typeof e.firstKeptEntryId === "string") return branch.position.get(e.firstKeptEntryId) ?? c;
	if (typeof e.firstKeptEntryIndex === "number") return e.firstKeptEntryIndex;
	return c;
}
