// What Pi shows against what the folds say. A commit is several session lines (marks, the
// context_edit entries, the commit record, the receipt) appended one at a time; a crash, a full
// disk or /tree navigation can leave a branch with some of a batch's edits and no commit record.
// Pi then hides entries no committed fold accounts for, possibly a tool call without its result.
// On every open this compares, entry by entry, the window the lattice describes with the window Pi
// projects, and turns each difference into an edit that restores the lattice's view: a folded
// entry shows its fold's brief or nothing, any other entry its own content. Pure: nothing thrown.
import type {
	ContextEditableContent,
	ContextEditEntryDraft,
	ProjectedSessionEntry,
	SessionEntry,
} from "@earendil-works/pi-coding-agent";
import type { FoldLattice } from "../lattice/index.ts";
import { samePlainValue } from "../values/plain-value.ts";
import { isPiFoldNotice } from "../vocabulary.ts";
import { briefContent, editableRole, originalContent } from "./drafts.ts";

interface WindowRepair {
	/** One edit per entry Pi shows differently from the lattice, in context order. */
	drafts: ContextEditEntryDraft[];
	/** Why, one line per entry: what Pi shows and what the folds say. */
	reasons: string[];
}

type Want = { show: "omitted" } | { show: "content"; content: ContextEditableContent; what: string };

/** What the lattice says each editable entry of the window must show, by entry id. */
function latticeView(lattice: FoldLattice, sources: readonly SessionEntry[]): Map<string, Want> {
	const want = new Map<string, Want>();
	for (const item of lattice.window()) {
		if (item.type === "raw") continue; // raw unless an edit says otherwise: checked below
		const fold = lattice.get(item.id);
		if (!fold) continue;
		let first = true;
		for (const s of sources.slice(fold.start, fold.end)) {
			const role = editableRole(s);
			if (!role) continue;
			want.set(
				s.id,
				first
					? { show: "content", content: briefContent(role, fold.brief), what: `the brief of ${fold.id}` }
					: { show: "omitted" },
			);
			first = false;
		}
	}
	return want;
}

/** What Pi shows for an entry, in words: nothing, a brief (naming its fold), or other content. */
function shownAs(messages: readonly unknown[]): string {
	if (messages.length === 0) return "nothing";
	const c = (messages[0] as { content?: unknown }).content;
	const text = typeof c === "string" ? c : Array.isArray(c) ? ((c[0] as { text?: unknown })?.text ?? "") : "";
	return typeof text === "string" && text.startsWith("[pi-fold ") ? `a brief (${text.slice(9, 20)})` : "other content";
}

/**
 * The edits that make Pi's projection of the context show what the lattice describes, or none.
 * `edited`: ids of entries some context_edit on the branch targets; every other entry shows its
 * own content in Pi's projection, so only those and the lattice's folded entries are compared.
 */
export function windowRepair(
	lattice: FoldLattice,
	sources: readonly SessionEntry[],
	projection: readonly ProjectedSessionEntry[],
	edited: ReadonlySet<string>,
): WindowRepair {
	const want = latticeView(lattice, sources);
	const shown = new Map(projection.map((pe) => [pe.sourceEntry.id, pe.messages]));
	const out: WindowRepair = { drafts: [], reasons: [] };
	for (const s of sources) {
		const w = want.get(s.id);
		if (w === undefined && !edited.has(s.id)) continue;
		// Outside a fold, pi-fold's own notices may show or be hidden (a later commit hides them): either is right.
		if (w === undefined && isPiFoldNotice(s)) continue;
		const role = editableRole(s);
		const messages = shown.get(s.id);
		if (!role || messages === undefined) continue;
		if (w?.show === "omitted") {
			if (messages.length === 0) continue;
			out.drafts.push({ type: "context_edit", targetId: s.id, replacement: null });
			out.reasons.push(`entry ${s.id} shows ${shownAs(messages)}; the folds hide it`);
			continue;
		}
		const content = w?.show === "content" ? w.content : originalContent(s);
		if (content === undefined) continue;
		const normalised =
			typeof content === "string" && (role === "assistant" || role === "toolResult")
				? [{ type: "text", text: content }]
				: content;
		if (messages.length === 1 && samePlainValue((messages[0] as { content?: unknown }).content, normalised)) continue;
		out.drafts.push({ type: "context_edit", targetId: s.id, replacement: { content: structuredClone(content) } });
		out.reasons.push(
			`entry ${s.id} shows ${shownAs(messages)}; the folds show ${w?.show === "content" ? w.what : "its own content"}`,
		);
	}
	return out;
}

/**
 * Ids of the entries a context_edit among `entries` (Pi's context entries) targets. After a Pi
 * compaction (its entry first, then what it kept, then what came after it) only the edits appended
 * since count: those before it belong to folds that may not have survived it (a fold whose start
 * was summarised is no longer in the lattice), and Pi's projection of what they hid, whole tool
 * batches, is taken as it is rather than shown again.
 */
export function editedTargets(entries: readonly SessionEntry[]): Set<string> {
	const out = new Set<string>();
	const compaction = entries[0]?.type === "compaction" ? entries[0] : undefined;
	let since: Set<string> | undefined;
	if (compaction) {
		// The entries after it chain back to it; a chain that never meets it means nothing came after.
		const byId = new Map(entries.map((e) => [e.id, e]));
		const chain = new Set<string>();
		let e = entries.at(-1);
		while (e && e.id !== compaction.id) {
			chain.add(e.id);
			e = e.parentId ? byId.get(e.parentId) : undefined;
		}
		since = e ? chain : new Set();
	}
	for (const e of entries) if (e.type === "context_edit" && (!since || since.has(e.id))) out.add(e.targetId);
	return out;
}
