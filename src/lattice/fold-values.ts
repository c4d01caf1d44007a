// The fold vocabulary as values a reader checks against: the kinds, states and provenances of
// src/fold-types.ts as lists and guards, and the rules a brief's text keeps to.
// The Record types make the compiler fail if fold-types.ts gains or loses a member.
import { BRIEF_MAX_CHARS, type BriefProvenance, type FoldKind, type FoldState } from "../fold-types.ts";
import { refuse, show } from "./outcome.ts";

const KINDS: Record<FoldKind, true> = { "tool-batch": true, chapter: true, consolidation: true, peek: true };
const STATES: Record<FoldState, true> = { pending: true, committed: true, expanded: true };
const PROVENANCES: Record<BriefProvenance, true> = { deterministic: true, supplied: true };

export const FOLD_KINDS = Object.keys(KINDS) as readonly FoldKind[];
export const FOLD_STATES = Object.keys(STATES) as readonly FoldState[];
export const BRIEF_PROVENANCES = Object.keys(PROVENANCES) as readonly BriefProvenance[];

export { BRIEF_MAX_CHARS };

/** A brief's length in characters (Unicode code points, so an emoji counts once). */
export function briefLength(text: string): number {
	let n = 0;
	for (const _ of text) n++;
	return n;
}

export function isFoldKind(value: unknown): value is FoldKind {
	return typeof value === "string" && Object.hasOwn(KINDS, value);
}

export function isFoldState(value: unknown): value is FoldState {
	return typeof value === "string" && Object.hasOwn(STATES, value);
}

export function isProvenance(value: unknown): value is BriefProvenance {
	return typeof value === "string" && Object.hasOwn(PROVENANCES, value);
}

/** The kind a mark may take: any but "consolidation", which only `consolidate` makes. */
export function markKind(value: unknown): FoldKind {
	if (!isFoldKind(value)) refuse(`unknown fold kind ${show(value)}: one of ${FOLD_KINDS.join(", ")}`);
	if (value === "consolidation") refuse(`a mark cannot be of kind "consolidation": only consolidate makes those`);
	return value;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * `text` as well-formed Unicode: every unpaired UTF-16 surrogate (valid in JSON and JS strings,
 * not encodable as UTF-8) becomes U+FFFD. The code point count stays the same. `replaced` says how
 * many were replaced, so a caller can say so.
 */
export function wellFormedText(text: string): { text: string; replaced: number } {
	let replaced = 0;
	const out = text.replace(LONE_SURROGATE, () => {
		replaced++;
		return "\uFFFD";
	});
	return { text: out, replaced };
}

/**
 * A brief as given: a string of 1..2000 characters that is not all whitespace, kept verbatim except
 * that unpaired surrogates become U+FFFD (a brief is stored as UTF-8, which cannot carry them).
 */
export function briefText(value: unknown): string {
	if (typeof value !== "string") refuse(`a brief must be a string, got ${show(value)}`);
	const length = briefLength(value);
	if (value.trim() === "") {
		refuse(
			`the brief is ${length === 0 ? "empty" : "only whitespace"}: a brief has 1 to ${BRIEF_MAX_CHARS} characters`,
		);
	}
	if (length > BRIEF_MAX_CHARS) refuse(`the brief has ${length} characters, over the cap of ${BRIEF_MAX_CHARS}`);
	return wellFormedText(value).text;
}
