// What a peek shows before its first slice: the fold's contents with byte offsets into its text
// view, so the next call can go straight to the right place. A consolidation lists its children;
// any other fold lists its entries (role, tool, principal argument, the first words of a note) and
// the nested folds it holds. A child fold's line says what it holds as an index line does, sized
// to the line (so the labels of its notes, "Stage 7", survive where a clipped brief line lost them).

import { principalArgs, principalText } from "../briefs/call-args.ts";
import type { FoldView } from "../lattice/index.ts";
import type { SourceView } from "../session/fold-source.ts";
import { clip, count } from "../values/text-fit.ts";
import type { ReadonlyLattice } from "./view.ts";

/** Lines of contents at most (the rest is counted). */
const CONTENTS_MAX_LINES = 48;
const LINE_CHARS = 160;

export interface ContentsLine {
	/** Where the item starts in the fold's text view, and how many bytes it spans. */
	offset: number;
	bytes: number;
	text: string;
}

type Loose = Record<string, unknown>;

/** An entry's one-line description from its canonical JSON. */
function entryLabel(canonical: string): string {
	let e: Loose;
	try {
		e = JSON.parse(canonical) as Loose;
	} catch {
		return "entry (unreadable)";
	}
	const m = (e.message ?? {}) as Loose;
	const id = String(e.id ?? "?");
	const role = e.type === "message" ? String(m.role ?? "?") : String(e.type ?? "?");
	const blocks = Array.isArray(m.content) ? (m.content as Loose[]) : [];
	if (role === "toolResult")
		return `entry ${id} toolResult ${String(m.toolName ?? "?")}${m.isError === true ? " (error)" : ""}`;
	if (role === "assistant") {
		const calls = blocks
			.filter((b) => b.type === "toolCall")
			.map((b) => {
				const p = principalArgs(b.arguments)[0];
				return `${String(b.name)}${p ? ` ${principalText(p)}` : ""}`;
			});
		const note = blocks.find((b) => b.type === "text" && typeof b.text === "string" && b.text.trim() !== "");
		const said = note ? ` "${clip(String(note.text), 48)}"` : "";
		return `entry ${id} assistant${said}${calls.length > 0 ? ` → ${calls.join("; ")}` : ""}`;
	}
	const text = typeof m.content === "string" ? m.content : blocks.find((b) => b.type === "text")?.text;
	return `entry ${id} ${role}${typeof text === "string" ? ` "${clip(text, 48)}"` : ""}`;
}

/** What a child fold holds, in the words of an index line, within `n` code points ("" when nothing fits). */
export type ChildSummary = (id: FoldView["id"], n: number) => string;

/** `@123456 +12345 ` before each line's text, at most. */
const OFFSETS_CHARS = 16;

/**
 * The contents of `fold`'s text view (`view`, as peek builds it) with offsets: its direct children
 * in order, a child fold as one line (`summary` of it), a raw entry as one line. `leaves` are the
 * canonical texts of the fold's entries, in order.
 */
export function peekContents(
	fold: FoldView,
	view: SourceView,
	leaves: readonly string[],
	lattice: ReadonlyLattice,
	summary: ChildSummary,
): ContentsLine[] {
	const end = (k: number) =>
		k + 1 < view.offsets.length ? view.offsets[k + 1] - 2 : view.offsets[k] + byteLength(view.partTexts[k]);
	const childText = (child: FoldView) => {
		const head = `${child.id} ${child.kind}, ${count(child.end - child.start)} entries`;
		const said = summary(child.id, LINE_CHARS - OFFSETS_CHARS - head.length - 2);
		return said === "" ? head : `${head}: ${said}`;
	};
	// The direct child fold holding a lattice position, if any.
	const kids = fold.children.flatMap((c) => {
		const sub = c.type === "fold" ? lattice.get(c.id) : undefined;
		return sub ? [sub] : [];
	});
	const childAt = (position: number) => kids.find((k) => k.start <= position && position < k.end);
	const owner = (k: number): FoldView | undefined => {
		const part = view.parts[k];
		if ("leaf" in part) return childAt(fold.start + part.leaf);
		const named = /(f[0-9a-f]{10})/.exec(part.marker)?.[1];
		const sub = named ? lattice.get(named as FoldView["id"]) : undefined;
		return sub ? childAt(sub.start) : undefined;
	};
	const out: ContentsLine[] = [];
	let k = 0;
	while (k < view.parts.length) {
		const child = owner(k);
		if (!child) {
			const part = view.parts[k];
			if ("leaf" in part)
				out.push({ offset: view.offsets[k], bytes: end(k) - view.offsets[k], text: entryLabel(leaves[part.leaf]) });
			k++;
			continue;
		}
		let last = k;
		while (last + 1 < view.parts.length && owner(last + 1)?.id === child.id) last++;
		out.push({ offset: view.offsets[k], bytes: end(last) - view.offsets[k], text: childText(child) });
		k = last + 1;
	}
	return out;
}

function byteLength(s: string): number {
	return new TextEncoder().encode(s).length;
}

/** Contents as lines, `@offset +bytes what`, at most CONTENTS_MAX_LINES (the rest counted). */
export function contentsText(lines: readonly ContentsLine[]): string[] {
	const shown = lines.length > CONTENTS_MAX_LINES ? lines.slice(0, CONTENTS_MAX_LINES - 1) : lines;
	const out = shown.map((l) => clip(`@${l.offset} +${l.bytes} ${l.text}`, LINE_CHARS));
	if (shown.length < lines.length) {
		const rest = lines.slice(shown.length);
		out.push(`… ${count(rest.length)} more, from @${rest[0].offset} (peek there to see them)`);
	}
	return out;
}
