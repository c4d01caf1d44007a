// Window edits asked for between boundaries (the agent's expand/refold from a tool call, a person's
// /fold-editor Enter) are staged and committed at the next boundary in one batch: a tool's
// execute runs before its turn's turn_end, so the very next request shows them. Also here: what a
// peek asked for its own result (marked for the next commit, or pinned), done once the model has
// seen that result.
import type { ContextEditEntryDraft, ProjectedSessionEntry } from "@earendil-works/pi-coding-agent";
import { changedOnly, expandDrafts, refoldDrafts, validateDrafts } from "../edits/drafts.ts";
import type { FoldLattice } from "../lattice/index.ts";
import type { ContextEntries } from "../session/context-entries.ts";
import type { JournalOp } from "../session/journal.ts";
import type { PeekFollowUp, StagedEdit } from "../session/staged.ts";

/** Apply one staged edit to `lattice` (in place); the reason when the lattice refuses it. */
function applyStaged(lattice: FoldLattice, edit: StagedEdit): string | undefined {
	const r = edit.op === "expand" ? lattice.expand(edit.id) : lattice.refold(edit.id);
	return r.ok ? undefined : r.reason;
}

/** `base` with the staged edits applied, on a copy; edits the lattice refuses are skipped. */
export function stagedLattice(base: FoldLattice, staged: readonly StagedEdit[]): FoldLattice {
	if (staged.length === 0) return base;
	const work = base.clone();
	for (const edit of staged) applyStaged(work, edit);
	return work;
}

interface StagedBatch {
	lattice: FoldLattice;
	drafts: ContextEditEntryDraft[];
	ops: JournalOp[];
	problems: string[];
}

/** Later drafts win (as Pi applies them in order): keep one per target, the last, in its place. */
function lastPerTarget(drafts: readonly ContextEditEntryDraft[]): ContextEditEntryDraft[] {
	const last = new Map<string, number>();
	drafts.forEach((d, i) => {
		last.set(d.targetId, i);
	});
	return drafts.filter((d, i) => last.get(d.targetId) === i);
}

/**
 * The batch for staged edits over the boundary's projection. Each edit is applied on its own copy
 * first, so one that no longer applies is dropped alone; the whole batch is then checked against
 * the projection (Pi's acceptance and tool pairing), and refused whole if it fails.
 */
export function stagedBatch(
	base: FoldLattice,
	context: ContextEntries,
	projection: readonly ProjectedSessionEntry[],
	staged: readonly StagedEdit[],
): StagedBatch | undefined {
	if (staged.length === 0) return undefined;
	let lattice = base;
	const drafts: ContextEditEntryDraft[] = [];
	const ops: JournalOp[] = [];
	const problems: string[] = [];
	for (const edit of staged) {
		const work = lattice.clone();
		const refused = applyStaged(work, edit);
		if (refused) {
			problems.push(`staged ${edit.op} ${edit.id} dropped: ${refused}`);
			continue;
		}
		const fold = work.get(edit.id);
		const made =
			edit.op === "expand"
				? expandDrafts(edit.id, work, context)
				: fold
					? refoldDrafts(fold, context)
					: { ok: false as const, reason: `unknown fold ${edit.id}` };
		if (!made.ok) {
			problems.push(`staged ${edit.op} ${edit.id} dropped: ${made.reason}`);
			continue;
		}
		lattice = work;
		drafts.push(...made.drafts);
		ops.push({ v: 1, op: edit.op, id: edit.id });
	}
	if (ops.length === 0) return { lattice: base, drafts: [], ops: [], problems };
	const batch = changedOnly(lastPerTarget(drafts), projection);
	const checked = validateDrafts(batch, projection);
	if (!checked.ok) {
		problems.push(`staged edits dropped: ${checked.reason}`);
		return { lattice: base, drafts: [], ops: [], problems };
	}
	return { lattice, drafts: batch, ops, problems };
}

/**
 * The span of the tool batch holding `toolCallId` — its assistant entry and the results right
 * after it — if it is complete and lies wholly before `seen` (the model has read it).
 */
function peekBatchSpan(
	context: ContextEntries,
	toolCallId: string,
	seen: number,
): { from: string; to: string; ids: string[] } | undefined {
	const entries = context.entries;
	let p = Math.min(seen, entries.length) - 1;
	while (p >= 0 && !entries[p].toolCallIds?.includes(toolCallId)) p--;
	if (p < 0) return undefined;
	const calls = new Set(entries[p].toolCallIds);
	let end = p + 1;
	while (end < seen && entries[end].role === "toolResult" && calls.delete(entries[end].toolCallId ?? "")) end++;
	if (calls.size > 0) return undefined;
	const ids = entries.slice(p, end).map((e) => e.id);
	return { from: ids[0], to: ids[ids.length - 1], ids };
}

/**
 * Carry out the peeks whose results the model has now seen (entries before `messageEntryId`): the
 * batch holding each is marked "peek" for the next commit, or pinned (`ephemeral: false`), applied
 * in order on copies of `lattice`. Peeks not visible yet wait; one gone from the context is dropped.
 */
export function peekFollowUps(
	lattice: FoldLattice,
	context: ContextEntries,
	peeks: readonly PeekFollowUp[],
	messageEntryId: string,
): { lattice: FoldLattice; ops: JournalOp[]; waiting: PeekFollowUp[]; problems: string[] } {
	let seen = context.entries.length - 1;
	while (seen >= 0 && context.entries[seen].id !== messageEntryId) seen--;
	if (seen < 0) seen = context.entries.length;
	const waiting: PeekFollowUp[] = [];
	const ops: JournalOp[] = [];
	const problems: string[] = [];
	for (const peek of peeks) {
		const span = peekBatchSpan(context, peek.toolCallId, seen);
		if (!span) {
			waiting.push(peek);
			continue;
		}
		const work = lattice.clone();
		if (peek.ephemeral) {
			// Already inside a mark or fold (a frontier cut got there first): nothing to do.
			if (span.ids.some((id) => work.foldOf(id) !== null)) continue;
			const r = work.mark(span.from, span.to, "peek");
			if (!r.ok) {
				problems.push(r.reason);
				continue;
			}
			ops.push({ v: 1, op: "mark", id: r.id, kind: "peek", from: span.from, to: span.to });
		} else {
			const r = work.pin(span.ids);
			if (!r.ok) {
				problems.push(r.reason);
				continue;
			}
			ops.push({ v: 1, op: "pin", entryIds: span.ids });
		}
		lattice = work;
	}
	return {
		lattice,
		ops,
		waiting: waiting.filter((p) => context.entries.some((e) => e.toolCallIds?.includes(p.toolCallId))),
		problems,
	};
}
