// The labels an agent's notes open with ("Stage 7: …", "[Step 3] …", "Task 12b: …"): a lead of
// three words at most with a number in it, the agent's own address for a piece of its work. A
// brief that cannot quote every note still writes every label, word for word, so the window keeps
// saying where each step of the work is folded (a turn that says "as in stage 7" finds the fold).
import { codePointLength, oneLine } from "../values/text-fit.ts";

/** A label is at most this long and this many words: longer leads are prose, not addresses. */
const LABEL_MAX_CHARS = 32;
const LABEL_MAX_WORDS = 3;

const BRACKETED = /^\[([^\]\n]{1,32})\]/;
const BEFORE_COLON = /^([^:\n]{1,32}):(?:\s|$)/;

/** The label a note opens with, or undefined (no short, numbered lead before a colon or in brackets). */
export function noteLabel(note: string): string | undefined {
	const text = oneLine(note).replace(/^[#>*\s-]+/, "");
	const m = BRACKETED.exec(text) ?? BEFORE_COLON.exec(text);
	const lead = m?.[1].trim();
	if (!lead || codePointLength(lead) > LABEL_MAX_CHARS) return undefined;
	if (lead.split(/\s+/).length > LABEL_MAX_WORDS || !/\p{Nd}/u.test(lead)) return undefined;
	// A sentence that ends inside the lead is prose ("WP1 complete. Now WP2"), not a label.
	if (/[.!?;]\s/.test(lead)) return undefined;
	return lead;
}

/** The distinct labels of `notes`, in order. */
export function labelsOf(notes: readonly string[]): string[] {
	return distinctLabels(notes.map(noteLabel));
}

/** The distinct labels among `labels` (a note's, or undefined for a note without one), in order. */
export function distinctLabels(labels: readonly (string | undefined)[]): string[] {
	return [...new Set(labels.filter((l): l is string => l !== undefined))];
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Whether `text` says `label` as a whole (so "Stage 1" is not said by "Stage 12"). */
export function saysLabel(text: string, label: string): boolean {
	return new RegExp(`(?<![\\p{L}\\p{Nd}])${escapeRe(label)}(?![\\p{L}\\p{Nd}])`, "u").test(text);
}

/** `Stage 2, Stage 3, …` in at most `n` code points: whole labels only, then "…" for the rest. */
export function labelsText(labels: readonly string[], n: number): string {
	const all = labels.join(", ");
	if (codePointLength(all) <= n) return all;
	let out = "";
	for (const l of labels) {
		const next = out === "" ? l : `${out}, ${l}`;
		if (codePointLength(next) + 3 > n) break;
		out = next;
	}
	return out === "" ? "" : `${out}, …`;
}
