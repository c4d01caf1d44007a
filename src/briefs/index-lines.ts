// A consolidation's index: one line per child saying what that child holds, in the terms of the
// child's own brief, so the window still says where things are two levels in. For a tool batch,
// each call's name, principal argument and the first words of its result; for a chapter, its
// opening and last note; for a nested consolidation, its whole range: tools with counts, the
// distinct principal arguments factored (`core/{a,b}.js`, `stage={1..11}`), first and last notes.
// Every line also says the labels of its child's other notes ("also Stage 3, Stage 4"), word for
// word, so each step of the work stays named however deep it is folded.
// Lines share the brief's budget fairly (max-min), so every child gets a useful line; the same
// children give the same bytes.
import type { FoldId, FoldKind } from "../fold-types.ts";
import { clip, codePointLength, count, fairShares, headOf, keepEnds, oneLine } from "../values/text-fit.ts";
import { principalArgs, principalText } from "./call-args.ts";
import { labelsOf, saysLabel } from "./note-labels.ts";
import { asItIs, GroupsState, growAll, type IndexCall, type Naming, toolName } from "./tool-groups.ts";

interface IndexSpan {
	calls: readonly IndexCall[];
	/** Assistant notes, in order. */
	notes: readonly string[];
	/** The first user text. */
	opening?: string;
}

export interface IndexChild {
	id: FoldId;
	kind: FoldKind;
	/** Entries the child covers, and folds directly under it (a consolidation). */
	entries: number;
	folds: number;
	span: IndexSpan;
	/** The agent's own brief of the child (first line), shown as its note. */
	supplied?: string;
}

/** `"first note" … "last note"` within `n` (an agent's brief, or a chapter's opening, first). */
function notesText(child: IndexChild, n: number): string {
	const first = child.supplied ?? (child.kind === "chapter" ? child.span.opening : undefined) ?? child.span.notes[0];
	const last = child.span.notes.length > 0 ? child.span.notes[child.span.notes.length - 1] : undefined;
	const both = [first, last]
		.filter((t): t is string => t !== undefined && oneLine(t) !== "")
		.map(oneLine)
		.filter((t, i, all) => all.indexOf(t) === i);
	// Too little room for two useful notes: the first alone says where the span starts.
	const picked = both.length === 2 && n < 40 ? both.slice(0, 1) : both;
	if (picked.length === 0 || n < 12) return "";
	const frame = picked.length === 2 ? 7 : 2;
	const shares = fairShares(
		picked.map((t) => codePointLength(t)),
		n - frame,
	);
	if (shares.some((s) => s < 4)) return "";
	return picked.map((t, i) => `"${clip(t, shares[i])}"`).join(" … ");
}

function headOfChild(c: IndexChild): string {
	switch (c.kind) {
		case "tool-batch":
			return `${c.id} batch`;
		case "chapter":
			return `${c.id} chapter, ${c.entries} entries`;
		case "consolidation":
			return `${c.id} consolidation of ${c.folds} folds, ${c.entries} entries`;
		default:
			return `${c.id} ${c.kind}`;
	}
}

/** The first words of a call's result, on one line. */
function resultHead(c: IndexCall, n: number): string {
	if (!c.result) return "no result";
	const err = c.result.isError ? "ERROR " : "";
	if (c.result.chars === 0) return `${err}empty`;
	return `${err}"${clip(headOf(c.result.text, 4 * n + 64), Math.max(1, n - err.length - 2))}"`;
}

/** The first words of a result an index line shows, at most. */
const RESULT_HEAD = 40;

/** A tool batch call by call, `name principal → "first words"`, when it fits `n`; else undefined. */
function perCallText(calls: readonly IndexCall[], n: number, naming: Naming): string | undefined {
	if (calls.length === 0 || calls.length > 8) return undefined;
	const bare = calls.map((c) => {
		const p = principalArgs(c.input)[0];
		return `${toolName(c.name)}${p ? ` ${naming(principalText(p))}` : ""}`;
	});
	const sep = "; ";
	const fixed = bare.reduce((s, b) => s + codePointLength(b) + " → ".length, 0) + sep.length * (calls.length - 1);
	const room = n - fixed;
	// Each result needs a few words to be worth showing; else the grouped form says more per character.
	if (room < 14 * calls.length) return undefined;
	const shares = fairShares(
		calls.map((c) => Math.min(RESULT_HEAD, (c.result?.chars ?? 0) + 8)),
		room,
	);
	return calls.map((c, i) => `${bare[i]} → ${resultHead(c, shares[i])}`).join(sep);
}

/** Notes as index lines first show them: short, so every child can have them; and at most. */
const SHORT_NOTES = 48;
const MIN_NOTES = 24;
const LONG_NOTES = 120;

/** One child's line as it grows: its tool groups, its notes' room, a call-by-call form at the end. */
class ChildLine {
	readonly child: IndexChild;
	readonly head: string;
	readonly tools: GroupsState;
	readonly naming: Naming;
	notes = 0;
	perCall: string | undefined;
	/** The labels of the child's notes ("Stage 7"): every line says each one its notes do not. */
	readonly labels: readonly string[];
	/** The notes part for the room it was last given: lengths are asked for at every step of a round. */
	#notesFor: { room: number; text: string } | undefined;

	constructor(child: IndexChild, naming: Naming) {
		this.child = child;
		this.head = `- ${headOfChild(child)}`;
		this.naming = naming;
		this.tools = new GroupsState(child.span.calls, naming);
		this.labels = labelsOf(child.span.notes);
	}

	#notes(): string {
		if (this.#notesFor?.room !== this.notes) {
			const notes = this.notes > 0 ? notesText(this.child, this.notes) : "";
			const unsaid = this.labels.filter((l) => !saysLabel(notes, l)).join(", ");
			const text = unsaid === "" ? notes : notes === "" ? unsaid : `${notes}, also ${unsaid}`;
			this.#notesFor = { room: this.notes, text };
		}
		return this.#notesFor.text;
	}

	text(): string {
		const tools = this.perCall ?? (this.tools.groups.length > 0 ? this.tools.text() : "");
		const notes = this.#notes();
		const parts = [tools, notes === "" ? "" : `notes ${notes}`].filter((p) => p !== "");
		return parts.length === 0 ? this.head : `${this.head}: ${parts.join("; ")}`;
	}

	get length(): number {
		return codePointLength(this.text());
	}
}

/** One child's index line in at most `n` code points (the smallest useful line names it). */
function childLine(child: IndexChild, n: number): string {
	return indexLines([child], n)[0] ?? "";
}

/** What a fold holds, as its index line says it, without the line's id and kind: `n` code points at most. */
export function childSummary(child: IndexChild, n: number): string {
	const head = `- ${headOfChild(child)}`;
	const line = childLine(child, n + head.length + 2);
	return line.startsWith(`${head}: `) ? line.slice(head.length + 2) : "";
}

/**
 * Index lines for children (and raw runs, already one line each) within `n` code points, built
 * up in rounds so every child gets a useful line: each child's id, kind, tools by name and note
 * labels (children that cannot get a useful line are left out from the middle, counted); then
 * each child's most used principal argument; then short first/last notes; then more principal
 * arguments, those naming the most calls per character first, across all children; then what
 * room is left goes to longer notes and, for small tool batches, each call's first words of result.
 */
export function indexLines(items: readonly (IndexChild | string)[], n: number, naming: Naming = asItIs): string[] {
	return indexLinesNaming(items, n, naming).lines;
}

/** indexLines, and how many of the children's calls the lines leave without their principal argument. */
export function indexLinesNaming(
	items: readonly (IndexChild | string)[],
	n: number,
	naming: Naming = asItIs,
): { lines: string[]; unnamed: number } {
	const callsOf = (it: IndexChild | string) => (typeof it === "string" ? 0 : it.span.calls.length);
	const all = items.reduce((sum, it) => sum + callsOf(it), 0);
	if (items.length === 0 || n <= 0) return { lines: [], unnamed: all };
	// A useful line names the child and (when it made calls) its most used principal argument.
	const useful = items.map((it) => {
		if (typeof it === "string") return Math.min(codePointLength(it), 80);
		const line = new ChildLine(it, naming);
		const b = line.tools.best(Number.MAX_SAFE_INTEGER);
		return line.length + (b?.cost ?? 0);
	});
	const prefix = [0];
	for (const u of useful) prefix.push(prefix[prefix.length - 1] + u + 1);
	// Past what fits, keep the first and the last children (where the span starts and ends).
	const cost = (k: number) => {
		const first = Math.ceil(k / 2);
		const last = k - first;
		const marked = k < items.length ? 40 : 0;
		return prefix[first] + (prefix[items.length] - prefix[items.length - last]) + marked;
	};
	let shown = items.length;
	while (shown > 1 && cost(shown) > n) shown--;
	const { picked, firstCount } = keepEnds(items, shown);
	const skipped = items.length - shown;
	const marker = skipped > 0 ? `[… ${count(skipped)} children omitted …]` : "";
	const room = n - (marker ? codePointLength(marker) + 1 : 0) - (picked.length - 1);
	const lines = picked.map((it) => (typeof it === "string" ? it : new ChildLine(it, naming)));
	const len = (l: string | ChildLine) => (typeof l === "string" ? codePointLength(l) : l.length);
	let left = room - lines.reduce((s, l) => s + len(l), 0);
	const children = lines.filter((l): l is ChildLine => typeof l !== "string");
	if (left < 0) {
		// Even bare lines do not fit: each gets an even share, clipped.
		const shares = fairShares(
			lines.map((l) => len(l)),
			room,
		);
		const out = lines.map((l, i) => clip(typeof l === "string" ? l : l.text(), shares[i]));
		if (marker) out.splice(firstCount, 0, marker);
		return { lines: out, unnamed: all };
	}
	// Round 2: each child's most used principal argument, in order, so every line names one.
	for (const c of children) {
		const b = c.tools.best(left);
		if (!b) continue;
		c.tools.grow(b.i);
		left -= b.cost;
	}
	// Round 3: short notes, in order, while they fit (else the first note's start, where it fits).
	left = shortNotes(children, left);
	// Round 4: more principal arguments across all children (a line's length is its parts' sum).
	left = growAll(
		children.map((c) => c.tools),
		left,
	);
	// Round 5: what is left, evenly, to the first words of each call's result and to longer notes.
	spendTheRest(children, left);
	const out = lines.map((l) => (typeof l === "string" ? clip(l, Math.max(1, codePointLength(l))) : l.text()));
	if (marker) out.splice(firstCount, 0, marker);
	// Calls of omitted children, and those a line counts without naming them.
	const shownCalls = children.reduce((sum, c) => sum + c.child.span.calls.length, 0);
	const unnamed = all - shownCalls + children.reduce((sum, c) => sum + (c.perCall ? 0 : c.tools.unnamed), 0);
	return { lines: out, unnamed };
}

/** Each child's short notes, in order, while they fit (else the first note's start); returns what is left. */
function shortNotes(children: readonly ChildLine[], left: number): number {
	for (const c of children) {
		for (const room of [SHORT_NOTES, MIN_NOTES]) {
			const before = c.length;
			c.notes = room;
			const cost = c.length - before;
			if (cost <= left) {
				left -= cost;
				break;
			}
			c.notes = 0;
		}
	}
	return left;
}

/**
 * `left`, shared evenly, to the first words of each call's result (small tool batches) and to
 * longer notes; a brief stays no longer than what it has to say.
 */
function spendTheRest(children: readonly ChildLine[], left: number): void {
	const perCallWant = (c: ChildLine) =>
		c.child.kind === "tool-batch" && c.tools.complete
			? Math.max(
					0,
					codePointLength(perCallText(c.child.span.calls, 100_000, c.naming) ?? "") - codePointLength(c.tools.text()),
				)
			: 0;
	const wants = children.map(
		(c) =>
			perCallWant(c) +
			Math.max(0, codePointLength(notesText(c.child, LONG_NOTES)) - codePointLength(notesText(c.child, c.notes))),
	);
	const extra = fairShares(wants, left);
	children.forEach((c, i) => {
		if (extra[i] <= 0) return;
		const budget = c.length + extra[i];
		if (perCallWant(c) > 0) {
			const per = perCallText(c.child.span.calls, codePointLength(c.tools.text()) + extra[i], c.naming);
			if (per !== undefined) c.perCall = per;
			if (c.length > budget) c.perCall = undefined;
		}
		const notesBefore = c.notes;
		c.notes = Math.min(LONG_NOTES, Math.max(c.notes, c.notes + budget - c.length));
		if (c.length > budget) c.notes = notesBefore;
	});
}
