// What the fold editor shows besides the map itself: the answer to the last gesture, a preview of
// a row's text (read through the operations, never touching the window), the list's colours, and
// session text made safe for the terminal.
import type { Theme } from "@earendil-works/pi-coding-agent";
import {
	replaceControlCharacters,
	type SelectListTheme,
	stripTerminalSequences,
	wrapTextWithAnsi,
} from "@earendil-works/pi-tui";
import type { FoldActions } from "../operations/actions.ts";
import type { Outcome } from "../vocabulary.ts";
import type { EditorRow } from "./editor-model.ts";

export type Paint = Pick<Theme, "fg" | "bold">;

/** Session text drawn in the terminal: its own escape codes and control characters out. */
export function printable(text: string): string {
	return replaceControlCharacters(stripTerminalSequences(text));
}

/** The last gesture's answer, whole and wrapped: a refusal cut at the edge would hide its reason. */
export function messageLines(message: { text: string; error: boolean }, width: number, theme: Paint): string[] {
	const colour = message.error ? "error" : "success";
	const lines = message.text.split("\n").flatMap((l) => wrapTextWithAnsi(printable(l), Math.max(10, width)));
	return lines.map((l) => theme.fg(colour, l));
}

/** A preview's title, then at most `shown` of its wrapped lines, then how many more there are. */
export function previewLines(
	preview: { title: string; text: string },
	shown: number,
	width: number,
	theme: Paint,
): string[] {
	const wrapped = preview.text.split("\n").flatMap((l) => wrapTextWithAnsi(printable(l), Math.max(10, width - 2)));
	const out = [theme.fg("accent", preview.title), ...wrapped.slice(0, shown).map((l) => `  ${l}`)];
	if (wrapped.length > shown) out.push(theme.fg("dim", `  … ${wrapped.length - shown} more lines`));
	return out;
}

export function listTheme(theme: Paint): SelectListTheme {
	return {
		selectedPrefix: (t) => theme.fg("accent", t),
		selectedText: (t) => theme.fg("accent", t),
		description: (t) => theme.fg("muted", t),
		scrollInfo: (t) => theme.fg("dim", t),
		noMatch: (t) => theme.fg("muted", t),
	};
}

/** The first `bytes` of a row's text: a fold's verified source (peek, no tool result), a raw row's entries. */
export function previewOf(
	actions: FoldActions,
	row: EditorRow,
	bytes: number,
): Outcome<{ title: string; text: string }> {
	if (row.fold) {
		const r = actions.peek(row.fold.id, { bytes });
		if (!r.ok) return r;
		const source = r.verifiedBy === "store" ? "the fold store" : "the session";
		const title = `${row.fold.id}: bytes ${r.slice.start}..${r.slice.end} of ${r.slice.total}, verified by SHA-256 from ${source}`;
		return { ok: true, title, text: r.slice.text };
	}
	const r = actions.rawEntries(row.start, row.entryIds.length, bytes);
	if (!r.ok) return r;
	const { slice } = r;
	return {
		ok: true,
		title: `${row.entryIds.length} raw entries: bytes 0..${slice.end} of ${slice.total}`,
		text: slice.text,
	};
}
