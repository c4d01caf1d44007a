// What a commit, an expand and a refold send to Pi: batches of `context_edit` drafts computed from
// the lattice's state. Pure: no session access, nothing thrown; a batch that would leave
// the window provider-invalid is refused here rather than handed to Pi, which checks only targets
// (it accepts an orphaned tool result that a real provider would then reject).
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import {
	type ContextEditableContent,
	type ContextEditEntryDraft,
	type ProjectedSessionEntry,
	type SessionEntry,
	sessionEntryToContextMessages,
} from "@earendil-works/pi-coding-agent";
import type { FoldView, LatticeEntry } from "../lattice/index.ts";
import { callsOpenedBy } from "../session/context-entries.ts";
import { samePlainValue } from "../values/plain-value.ts";
import { type FoldId, isPiFoldNotice, type Outcome } from "../vocabulary.ts";
import { pairingIssues } from "./pairing.ts";

/** The lattice's context: its entries and, in the same order, the Pi entries behind them. */
interface DraftContext {
	readonly entries: readonly LatticeEntry[];
	readonly sources: readonly SessionEntry[];
}

/** The part of a lattice an expand reads: folds by id (their state after the expand). */
interface FoldLookup {
	get(id: FoldId): FoldView | undefined;
}

type Drafts = Outcome<{ drafts: ContextEditEntryDraft[] }>;

type Role = "user" | "assistant" | "toolResult" | "custom";

/** The role a `context_edit` may target, or undefined: Pi rejects the whole batch for any other target. */
export function editableRole(entry: SessionEntry): Role | undefined {
	if (entry.type === "custom_message") return "custom";
	if (entry.type !== "message") return undefined;
	const role = entry.message.role;
	return role === "user" || role === "assistant" || role === "toolResult" ? role : undefined;
}

/** A brief as replacement content: a string where Pi keeps strings (user, custom), else one text block. */
export function briefContent(role: Role, brief: string): ContextEditableContent {
	return role === "user" || role === "custom" ? brief : [{ type: "text", text: brief }];
}

/** The entry's own content, as Pi built it before any edit: restoring it shows the original message. */
export function originalContent(entry: SessionEntry): ContextEditableContent | undefined {
	const message = sessionEntryToContextMessages(entry)[0] as { content?: ContextEditableContent } | undefined;
	return message?.content === undefined ? undefined : structuredClone(message.content);
}

class DraftRefusal extends Error {}

function refuseDraft(reason: string): never {
	throw new DraftRefusal(reason);
}

function answer(op: string, build: () => ContextEditEntryDraft[]): Drafts {
	try {
		return { ok: true, drafts: build() };
	} catch (err) {
		const why = err instanceof DraftRefusal ? err.message : `internal error: ${String(err)}`;
		return { ok: false, reason: `${op}: ${why}` };
	}
}

/** Positions [start, end) of the context, checked against it. */
function spanSources(fold: FoldView, context: DraftContext): SessionEntry[] {
	const { start, end } = fold;
	if (context.entries.length !== context.sources.length) {
		refuseDraft(`the context has ${context.entries.length} lattice entries but ${context.sources.length} sources`);
	}
	if (
		!(Number.isInteger(start) && Number.isInteger(end) && start >= 0 && start < end && end <= context.entries.length)
	) {
		refuseDraft(`fold ${fold.id} spans [${start}, ${end}), outside the context's ${context.entries.length} entries`);
	}
	const sources = context.sources.slice(start, end);
	sources.forEach((s, i) => {
		if (s.id !== context.entries[start + i].id) refuseDraft(`context source ${s.id} is not lattice entry ${i + start}`);
	});
	return sources;
}

function toolLinks(entry: SessionEntry): { calls: string[]; result?: string } {
	if (entry.type !== "message") return { calls: [] };
	const m = entry.message;
	if (m.role === "toolResult") return { calls: [], result: m.toolCallId };
	return { calls: callsOpenedBy(m) };
}

/** A span must hold every tool call it makes together with its result, and no result without its call. */
function assertWholeBatches(fold: FoldView, sources: readonly SessionEntry[]): void {
	const calls = new Set<string>();
	const results = new Set<string>();
	for (const s of sources) {
		const links = toolLinks(s);
		for (const c of links.calls) calls.add(c);
		if (links.result !== undefined) results.add(links.result);
	}
	for (const c of calls) if (!results.has(c)) refuseDraft(`fold ${fold.id} holds tool call ${c} but not its result`);
	for (const r of results) if (!calls.has(r)) refuseDraft(`fold ${fold.id} holds the result of ${r} but not its call`);
}

/** One fold shown collapsed: its brief on the first editable entry, every other editable entry omitted. */
function collapsedDrafts(fold: FoldView, context: DraftContext): ContextEditEntryDraft[] {
	const sources = spanSources(fold, context);
	assertWholeBatches(fold, sources);
	if (fold.brief === "") refuseDraft(`fold ${fold.id} has no brief`);
	const drafts: ContextEditEntryDraft[] = [];
	for (const s of sources) {
		const role = editableRole(s);
		if (role === undefined) continue;
		const replacement = drafts.length === 0 ? { content: briefContent(role, fold.brief) } : null;
		drafts.push({ type: "context_edit", targetId: s.id, replacement });
	}
	if (drafts.length === 0) refuseDraft(`fold ${fold.id} covers no editable entry`);
	return drafts;
}

/** A commit: each newly committed fold collapses to its brief. Folds must be disjoint. */
export function commitDrafts(folds: readonly FoldView[], context: DraftContext): Drafts {
	return answer("commit", () => {
		const drafts = folds.flatMap((f) => {
			if (f.state !== "committed") refuseDraft(`fold ${f.id} is ${f.state}, not committed`);
			return collapsedDrafts(f, context);
		});
		const seen = new Set<string>();
		for (const d of drafts) {
			if (seen.has(d.targetId)) refuseDraft(`two folds of one commit both cover entry ${d.targetId}`);
			seen.add(d.targetId);
		}
		return drafts;
	});
}

/**
 * pi-fold's own notices (receipts, the overflow and unbriefed notices) that `projection` still
 * shows, that no draft of `drafts` touches and no fold holds (`raw`), hidden: each says what one
 * commit did and leaves the window with the next, so they never pile up. The commit rewrites the
 * window anyway.
 */
export function staleNoticeDrafts(
	drafts: readonly ContextEditEntryDraft[],
	projection: readonly ProjectedSessionEntry[],
	raw: (entryId: string) => boolean,
): ContextEditEntryDraft[] {
	const touched = new Set(drafts.map((d) => d.targetId));
	// Only a notice shown as itself: one inside a fold is the fold's (its brief may sit on it).
	return projection
		.filter((pe) => {
			const id = pe.sourceEntry.id;
			return pe.messages.length > 0 && isPiFoldNotice(pe.sourceEntry) && !touched.has(id) && raw(id);
		})
		.map((pe) => ({ type: "context_edit", targetId: pe.sourceEntry.id, replacement: null }));
}

/** A refold: the expanded fold collapses to its brief again (the lattice has refolded it). */
export function refoldDrafts(fold: FoldView, context: DraftContext): Drafts {
	return commitDrafts([fold], context);
}

/**
 * An expand: the fold (now expanded in the lattice) shows its direct children. A leaf gets its
 * original content back; a committed child collapses to its own brief; an expanded child (hidden
 * behind the parent until now) shows its own children the same way.
 */
export function expandDrafts(foldId: FoldId, lattice: FoldLookup, context: DraftContext): Drafts {
	return answer("expand", () => {
		const fold = lattice.get(foldId);
		if (!fold) refuseDraft(`unknown fold ${foldId}`);
		if (fold.state !== "expanded") refuseDraft(`fold ${foldId} is ${fold.state}: expand it in the lattice first`);
		const byId = new Map(context.sources.map((s) => [s.id, s]));
		const drafts: ContextEditEntryDraft[] = [];
		const show = (f: FoldView): void => {
			for (const child of f.children) {
				if (child.type === "leaf") {
					const entry = byId.get(child.entryId) ?? refuseDraft(`leaf ${child.entryId} is not in the context`);
					if (editableRole(entry) === undefined) continue;
					const content = originalContent(entry) ?? refuseDraft(`leaf ${entry.id} has no message content`);
					drafts.push({ type: "context_edit", targetId: entry.id, replacement: { content } });
					continue;
				}
				const sub = lattice.get(child.id) ?? refuseDraft(`unknown child fold ${child.id} of ${f.id}`);
				if (sub.state === "committed") drafts.push(...collapsedDrafts(sub, context));
				else if (sub.state === "expanded") show(sub);
				else refuseDraft(`child ${sub.id} of ${f.id} is ${sub.state}`);
			}
		};
		spanSources(fold, context);
		show(fold);
		return drafts;
	});
}

// ---- validation against the current projection ----

/** A projected message with its content replaced, as Pi projects an edited entry (strings normalised). */
function replaced(entry: SessionEntry, role: Role, content: ContextEditableContent): AgentMessage {
	const original = sessionEntryToContextMessages(entry)[0];
	const normalised =
		typeof content === "string" && (role === "assistant" || role === "toolResult")
			? [{ type: "text" as const, text: content }]
			: content;
	return { ...original, content: normalised } as AgentMessage;
}

/**
 * The projection after `drafts` are appended (Pi applies edits in order: the last one for an entry
 * wins). Drafts for entries that are not in it, or not editable, change nothing here.
 */
export function projectionWith(
	drafts: readonly ContextEditEntryDraft[],
	projection: readonly ProjectedSessionEntry[],
): ProjectedSessionEntry[] {
	const byTarget = new Map(drafts.map((d) => [d.targetId, d]));
	return projection.map((pe) => {
		const d = byTarget.get(pe.sourceEntry.id);
		const role = d && editableRole(pe.sourceEntry);
		if (!d || !role) return pe;
		return { ...pe, messages: d.replacement === null ? [] : [replaced(pe.sourceEntry, role, d.replacement.content)] };
	});
}

/**
 * The drafts that change what `projection` shows: one that would leave its target as it is shown
 * now (an entry a folded child already hides, a brief already in place) is left out, so a batch
 * appends an edit only where the window changes and the session file grows with what changed.
 */
export function changedOnly(
	drafts: readonly ContextEditEntryDraft[],
	projection: readonly ProjectedSessionEntry[],
): ContextEditEntryDraft[] {
	const shown = new Map(projection.map((pe) => [pe.sourceEntry.id, pe]));
	return drafts.filter((d) => {
		const pe = shown.get(d.targetId);
		const role = pe && editableRole(pe.sourceEntry);
		if (!pe || !role) return true; // not ours to judge: validation names it
		if (d.replacement === null) return pe.messages.length > 0;
		const now = pe.messages.length === 1 ? (pe.messages[0] as { content?: unknown }).content : undefined;
		const next = (replaced(pe.sourceEntry, role, d.replacement.content) as { content?: unknown }).content;
		return now === undefined || !samePlainValue(now, next);
	});
}

/**
 * The window the drafts would produce over `projection` (e.g. `sessionManager.buildSessionProjection()
 * .entries` or a boundary's `context.contextEntries`), or the reasons Pi would refuse them.
 */
export function applyDrafts(
	drafts: readonly ContextEditEntryDraft[],
	projection: readonly ProjectedSessionEntry[],
): Outcome<{ messages: AgentMessage[] }> {
	const problems: string[] = [];
	const byTarget = new Map<string, ContextEditEntryDraft>();
	for (const d of drafts) {
		if (byTarget.has(d.targetId)) problems.push(`two drafts target entry ${d.targetId}`);
		byTarget.set(d.targetId, d);
	}
	const seen = new Set<string>();
	const messages = projection.flatMap((pe) => {
		const d = byTarget.get(pe.sourceEntry.id);
		if (!d) return pe.messages;
		seen.add(d.targetId);
		const role = editableRole(pe.sourceEntry);
		if (role === undefined) {
			problems.push(`entry ${d.targetId} (${pe.sourceEntry.type}) is not editable`);
			return pe.messages;
		}
		return d.replacement === null ? [] : [replaced(pe.sourceEntry, role, d.replacement.content)];
	});
	for (const id of byTarget.keys()) if (!seen.has(id)) problems.push(`entry ${id} is not in the current context`);
	return problems.length > 0 ? { ok: false, reason: problems.join("; ") } : { ok: true, messages };
}

/** Refuse drafts that Pi would reject or that would leave a call without its result (or the reverse). */
export function validateDrafts(
	drafts: readonly ContextEditEntryDraft[],
	projection: readonly ProjectedSessionEntry[],
): Outcome<{ messages: AgentMessage[] }> {
	const applied = applyDrafts(drafts, projection);
	if (!applied.ok) return { ok: false, reason: `drafts refused: ${applied.reason}` };
	// Only what the drafts break counts: a window may already hold an unanswered call (a session
	// cut by a crash or a compaction), which Pi repairs on send and no fold can fix or worsen.
	const before = new Set(pairingIssues(projection.flatMap((pe) => pe.messages)).map((p) => p.key));
	const problems = pairingIssues(applied.messages).filter((p) => !before.has(p.key));
	if (problems.length > 0) {
		return { ok: false, reason: `drafts would break tool pairing: ${problems.map((p) => p.text).join("; ")}` };
	}
	return applied;
}
