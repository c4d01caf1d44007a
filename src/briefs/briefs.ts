// Deterministic briefs: written from the span itself, no model call, at most BRIEF_MAX_CHARS
// code points, always naming the fold id and how to read it back. The same fold and entries give
// the same text, byte for byte: a brief enters the window and the prompt cache.
//
// Budgets are shared fairly (max-min): a 2 MB result or a long note cannot starve the rest.
import type { FoldId, FoldKind } from "../fold-types.ts";
import type { FoldChild, FoldLattice, FoldLeaf, FoldView } from "../lattice/index.ts";
import { wellFormedText } from "../lattice/index.ts";
import {
	clip,
	clipMiddle,
	codePointLength,
	count,
	fairShares,
	headOf,
	headTail,
	keepEnds,
	oneLine,
} from "../values/text-fit.ts";
import { BRIEF_MAX_CHARS, errorMessage, FOLD_TOOL_NAME } from "../vocabulary.ts";
import { principalArgs, principalKey, principalText } from "./call-args.ts";
import { type IndexChild, indexLinesNaming } from "./index-lines.ts";
import { distinctLabels, labelsText, noteLabel } from "./note-labels.ts";
import { declareRoot, sharedRoot, underRoot } from "./path-root.ts";
import { type CallInfo, callsAcross, type EntryLookup, indexChild, readSpan, type SpanContent } from "./span.ts";
import { toolGroupsText } from "./tool-groups.ts";

/** The fixed last line of every brief: how to read the fold back. */
export function readBackSuffix(id: FoldId): string {
	return `\nRead back: ${FOLD_TOOL_NAME} {"action":"peek","id":"${id}"}`;
}

/** What a brief is written from: the fold's shape and every entry it covers, in order. */
interface BriefFold {
	id: FoldId;
	kind: FoldKind;
	children: readonly FoldChild[];
	leaves: readonly FoldLeaf[];
}

interface BriefOptions {
	/** Cap in code points (default and maximum BRIEF_MAX_CHARS). */
	limit?: number;
	/** A child fold of a consolidation (its kind, shape and brief). */
	childFold?: (id: FoldId) => Pick<FoldView, "kind" | "brief" | "provenance" | "children"> | undefined;
	/** Every entry a child fold covers: its index line summarises them. */
	childLeaves?: (id: FoldId) => readonly FoldLeaf[] | undefined;
}

// ---- pieces ----

/** `read ×3, bash, edit ×2`: tool names in first-use order. */
function toolTally(calls: readonly CallInfo[]): string {
	const tally = new Map<string, number>();
	for (const c of calls) tally.set(c.name, (tally.get(c.name) ?? 0) + 1);
	return [...tally].map(([name, n]) => (n > 1 ? `${clip(name, 40)} ×${n}` : clip(name, 40))).join(", ");
}

function resultLabel(c: CallInfo): string {
	if (!c.result) return " → no result";
	const err = c.result.isError ? "ERROR, " : "";
	const img = c.result.images > 0 ? `, ${c.result.images} image${c.result.images > 1 ? "s" : ""}` : "";
	return ` → ${err}${count(c.result.chars)} chars${img}`;
}

/** One call in at most `n` code points: name, arguments, and the result's head and tail as room allows. */
function callLine(c: CallInfo, k: number, n: number): string {
	const prefix = `${k}. ${clip(c.name, 40)} `;
	const label = resultLabel(c);
	const room = n - codePointLength(prefix) - codePointLength(label);
	if (room <= 0) return clip(`${prefix}${label}`, n);
	const hasText = c.result !== undefined && c.result.chars > 0;
	const argsWant = codePointLength(c.args);
	if (!hasText || room < 48) return `${prefix}${clipMiddle(c.args, room)}${label}`;
	const resultWant = c.result!.chars + 2;
	// Arguments get at most a third when the result needs the room: the result is what was learnt;
	// but never less than names the principal argument, which comes first (cut the rest from the end).
	const principal = principalLead(c);
	const [share, resultShare] = fairShares([Math.min(argsWant, Math.ceil(room / 3)), resultWant], room);
	const argsShare = Math.min(argsWant, Math.max(share, principal + 1), room - 1);
	const argsRoom = argsShare + Math.max(0, room - argsShare - resultShare);
	const args = argsRoom < principal ? clipMiddle(c.args, argsRoom) : clip(c.args, argsRoom);
	const rest = room - codePointLength(args);
	const body = headTail(c.result!.text, rest - 2, c.result!.chars);
	return `${prefix}${args}${label}${body === "" ? "" : `: ${body}`}`;
}

/** Code points of `key=value` that name a call's principal argument, at the head of its arguments text. */
function principalLead(c: CallInfo): number {
	const p = principalArgs(c.input)[0];
	if (!p) return 0;
	const key = principalKey(c.input);
	return p.number === undefined ? codePointLength(`${p.key}=${key}`) : codePointLength(key);
}

/** The smallest useful call line: number, name, result size. */
const MIN_CALL_LINE = 32;

/** Calls, fairly sharing `budget`; past what fits, a tally line names the rest. */
function callLines(calls: readonly CallInfo[], budget: number): string[] {
	if (calls.length === 0) return [];
	let shown = calls.length;
	const fits = (k: number) => k * (MIN_CALL_LINE + 1) + (k < calls.length ? 80 : 0) <= budget;
	while (shown > 0 && !fits(shown)) shown--;
	const rest = calls.slice(shown);
	const restLine = rest.length > 0 ? clip(`… and ${rest.length} more calls: ${toolTally(rest)}`, 80) : "";
	const room = budget - (restLine ? codePointLength(restLine) + 1 : 0) - shown; // one newline per line
	const demands = calls.slice(0, shown).map((c) => {
		const want = 8 + codePointLength(c.name) + codePointLength(c.args) + resultLabel(c).length;
		return want + (c.result ? c.result.chars + 40 : 0);
	});
	const shares = fairShares(demands, room);
	const lines = calls.slice(0, shown).map((c, i) => callLine(c, i + 1, shares[i]));
	if (restLine) lines.push(restLine);
	return lines;
}

/** Notes in order, each shortened evenly; past what fits, the middle ones are named, not shown. */
function noteLines(notes: readonly string[], budget: number, bullet = "- "): string[] {
	if (notes.length === 0 || budget <= 0) return [];
	const minNote = bullet.length + 24;
	// Keep the first and the last notes (how the work started and where it ended). The marker of
	// those left out says all their labels when fewer notes make room for them (a label names a
	// step in a few characters, a note needs more); else as many as fit beside the first and last.
	const labels = notes.map(noteLabel);
	const notesFit = (shown: number) => shown * (minNote + 1);
	let shown = Math.min(notes.length, Math.floor(budget / (minNote + 1)));
	while (shown > 0 && notesFit(shown) + codePointLength(omittedNotes(labels, shown, budget)) + 1 > budget) shown--;
	if (shown === 0) shown = Math.min(2, notes.length, Math.floor((budget - 40) / (minNote + 1)));
	if (shown <= 0) return [];
	const { picked, firstCount } = keepEnds(notes, shown);
	const marker = omittedNotes(labels, shown, budget - notesFit(shown) - 1);
	const room = budget - (marker ? codePointLength(marker) + 1 : 0) - picked.length * (bullet.length + 1);
	const shares = fairShares(
		picked.map((t) => Math.min(codePointLength(t), 4 * budget)),
		room,
	);
	const lines = picked.map((t, i) => `${bullet}${clip(t, shares[i])}`);
	if (marker) lines.splice(firstCount, 0, marker);
	return lines;
}

/**
 * `[… 5 notes omitted: Stage 3, Stage 4]` for the notes keepEnds leaves out of `shown` (given by
 * their labels), in at most `n` code points once the frame fits ("" when none is left out).
 */
function omittedNotes(labels: readonly (string | undefined)[], shown: number, n: number): string {
	const skipped = labels.length - shown;
	if (skipped <= 0) return "";
	const first = Math.ceil(shown / 2);
	const frame = `[… ${skipped} notes omitted …]`;
	const text = labelsText(distinctLabels(labels.slice(first, first + skipped)), n - codePointLength(frame) - 2);
	return text === "" ? frame : `[… ${skipped} notes omitted: ${text}]`;
}

/** `user 1 (340 chars), assistant 2 (1,200 chars)` for raw leaves of a consolidation. */
function rawSummary(span: SpanContent): string {
	const parts = [...span.roles].map(([role, r]) => `${role} ${r.n} (${count(r.chars)} chars)`);
	if (span.missing > 0) parts.push(`${span.missing} unavailable`);
	return `raw: ${parts.join(", ")}`;
}

// ---- one writer per kind ----

type Writer = (fold: BriefFold, entriesById: EntryLookup, budget: number, opts: BriefOptions) => string[];

const toolBatch: Writer = (fold, entriesById, budget) => {
	const span = readSpan(fold.leaves, entriesById);
	const errors = span.calls.filter((c) => c.result?.isError).length;
	const head = `[pi-fold ${fold.id}] tool batch: ${span.calls.length} call${span.calls.length === 1 ? "" : "s"} (${toolTally(span.calls)})${errors > 0 ? `, ${errors} failed` : ""}`;
	const header = clip(head, Math.min(240, budget));
	const room = budget - codePointLength(header) - 1;
	const notesText = span.notes.map(oneLine).join(" | ");
	const notesWant = notesText === "" ? 0 : codePointLength(notesText) + 8;
	const callsWant = span.calls.reduce((n, c) => n + 60 + codePointLength(c.args) + (c.result?.chars ?? 0), 0);
	// Notes get a fair share but never more than a third: the calls are the batch.
	const [notesShare] = fairShares([Math.min(notesWant, Math.ceil(room / 3)), callsWant], room);
	const lines = [header];
	const showNotes = notesText !== "" && notesShare - 8 >= Math.min(6, codePointLength(notesText));
	if (showNotes) lines.push(`Notes: ${clip(notesText, notesShare - 8)}`);
	const used = showNotes ? codePointLength(lines[1]) + 1 : 0;
	lines.push(...callLines(span.calls, room - used));
	if (span.missing > 0) lines.push(`(${span.missing} entries unavailable)`);
	return lines;
};

const chapter: Writer = (fold, entriesById, budget) => {
	const span = readSpan(fold.leaves, entriesById);
	const calls = span.calls.length > 0 ? `, ${span.calls.length} tool calls (${toolTally(span.calls)})` : "";
	const header = clip(`[pi-fold ${fold.id}] chapter: ${fold.leaves.length} entries${calls}`, Math.min(240, budget));
	const room = budget - codePointLength(header) - 1;
	const opening = span.opening === undefined ? "" : oneLine(span.opening);
	// The opening gets up to a third; the notes share the rest evenly.
	const openShare = opening === "" ? 0 : Math.min(codePointLength(opening) + 10, Math.ceil(room / 3));
	const lines = [header];
	// Shown whenever it fits whole or a useful part of it does.
	const showOpening = opening !== "" && openShare - 10 >= Math.min(6, codePointLength(opening));
	if (showOpening) lines.push(`Opening: ${clip(opening, openShare - 10)}`);
	let used = showOpening ? codePointLength(lines[1]) + 1 : 0;
	// The calls by tool with their principal arguments: at least a third of what is left, and all
	// the notes do not need (short notes leave room to name every call).
	const notesWant = span.notes.reduce((n, t) => n + codePointLength(t) + 3, 7);
	const tools = toolGroupsText(span.calls, Math.max(Math.ceil((room - used) / 3), room - used - notesWant) - 7);
	if (tools !== "") {
		lines.push(`Tools: ${tools}`);
		used += codePointLength(tools) + 8;
	}
	const notes = noteLines(span.notes, room - used - 7);
	if (notes.length > 0) lines.push("Notes:", ...notes);
	if (span.missing > 0) lines.push(`(${span.missing} entries unavailable)`);
	return lines;
};

const consolidation: Writer = (fold, entriesById, budget, opts) => {
	const { items, parts } = consolidationIndex(fold, entriesById, opts);
	const folds = items.filter((it) => typeof it !== "string").length;
	const rawCount = fold.children.length - folds;
	// The whole span is read once, child by child (its children are whole tool batches or chapters).
	const calls = callsAcross(parts);
	const header = `[pi-fold ${fold.id}] consolidation of ${folds} folds${rawCount > 0 ? ` and ${rawCount} raw entries` : ""} (${fold.leaves.length} entries, ${calls} calls); peek it or a child id`;
	const h = clip(header, Math.min(240, budget));
	// The directory most calls share is said once, so the index lines have room to name more calls.
	const root = sharedRoot(
		parts.flatMap((p) => p.calls.flatMap((c) => principalArgs(c.input).slice(0, 1).map(principalText))),
	);
	const declared = root === undefined ? [] : [declareRoot(root)];
	const room = budget - codePointLength(h) - 1 - declared.reduce((s, l) => s + codePointLength(l) + 1, 0);
	const first = indexLinesNaming(items, room, underRoot(root));
	if (first.unnamed === 0) return [h, ...declared, ...first.lines];
	// What the lines cannot name, one search lists: every folded call is a `-> call` line of its fold.
	const listed = (n: number) => `+${count(n)} calls unnamed; all: ${LIST_CALLS}`;
	const again = indexLinesNaming(items, room - codePointLength(listed(first.unnamed)) - 1, underRoot(root));
	return [h, ...declared, ...again.lines, listed(Math.max(1, again.unnamed))];
};

/** One call that lists every folded call with its arguments and fold (paged by limit and offset). */
const LIST_CALLS = `{"action":"search","query":"-> call "}`;

/** The line a consolidation's brief ends with when its index lines cannot name every call. */
const UNNAMED_LINE = /^\+[\d,]+ calls unnamed; all: /m;

/** Whether a consolidation's brief leaves some of its calls without their principal argument. */
export function leavesCallsUnnamed(brief: string): boolean {
	return UNNAMED_LINE.test(brief);
}

/**
 * A consolidation's children in order: each child fold read whole from its leaves, raw runs by role
 * and size; and the readings of those parts, in span order.
 */
function consolidationIndex(
	fold: BriefFold,
	entriesById: EntryLookup,
	opts: BriefOptions,
): { items: (IndexChild | string)[]; parts: SpanContent[] } {
	const items: (IndexChild | string)[] = [];
	const parts: SpanContent[] = [];
	let raw: string[] = [];
	const flush = () => {
		if (raw.length === 0) return;
		const span = readSpan(
			raw.map((entryId) => ({ entryId, hash: "" })),
			entriesById,
		);
		items.push(rawSummary(span));
		parts.push(span);
		raw = [];
	};
	for (const c of fold.children) {
		if (c.type === "leaf") {
			raw.push(c.entryId);
			continue;
		}
		flush();
		const child = indexChild(c.id, opts.childFold?.(c.id), opts.childLeaves?.(c.id) ?? [], entriesById);
		items.push(child);
		parts.push(child.span);
	}
	flush();
	return { items, parts };
}

const peek: Writer = (fold, entriesById, budget) => {
	const span = readSpan(fold.leaves, entriesById);
	const peeks = span.calls.filter((c) => c.name === FOLD_TOOL_NAME);
	const shown = peeks.length > 0 ? peeks : span.calls;
	const chars = shown.reduce((n, c) => n + (c.result?.chars ?? 0), 0);
	const header = clip(
		`[pi-fold ${fold.id}] peek result: ${count(chars)} chars read back in ${shown.length} call${shown.length === 1 ? "" : "s"}`,
		Math.min(240, budget),
	);
	const room = budget - codePointLength(header) - 1;
	const shares = fairShares(
		shown.map((c) => codePointLength(c.json) + 40),
		room - shown.length,
	);
	return [header, ...shown.map((c, i) => clip(`${c.name} ${c.json}${resultLabel(c)}`, shares[i]))];
};

const WRITERS: Record<FoldKind, Writer> = { "tool-batch": toolBatch, chapter, consolidation, peek };

/**
 * Assemble: body lines within the budget, then the read-back suffix, always. Quoted arguments and
 * results may hold unpaired surrogates (broken model output, binary shell output): they become
 * U+FFFD and a line says so, since a brief must be storable as UTF-8.
 */
function assemble(lines: readonly string[], id: FoldId, limit: number): string {
	const clean = wellFormedText(lines.filter((l) => l !== "").join("\n"));
	const note =
		clean.replaced > 0
			? `\n(${clean.replaced} unpaired surrogate${clean.replaced === 1 ? "" : "s"} shown as U+FFFD)`
			: "";
	const suffix = `${note}${readBackSuffix(id)}`;
	const room = limit - codePointLength(suffix);
	let body = clean.text;
	if (codePointLength(body) > room) body = `${headOf(body, room - 1)}…`;
	return `${body}${suffix}`;
}

/**
 * The runtime's brief for a fold: by kind (tool batch, chapter, consolidation, peek), at most
 * `limit` code points, naming the id and ending with the read-back line. Never throws: an
 * unreadable span still gets a minimal brief that names the fold.
 */
export function deterministicBrief(fold: BriefFold, entriesById: EntryLookup, opts: BriefOptions = {}): string {
	const limit = Math.min(BRIEF_MAX_CHARS, Math.max(120, Math.floor(opts.limit ?? BRIEF_MAX_CHARS)));
	const budget = limit - codePointLength(readBackSuffix(fold.id));
	try {
		const writer = WRITERS[fold.kind] ?? chapter;
		return assemble(writer(fold, entriesById, budget, opts), fold.id, limit);
	} catch (err) {
		const why = errorMessage(err);
		return assemble(
			[`[pi-fold ${fold.id}] ${fold.kind} of ${fold.leaves.length} entries (brief unavailable: ${clip(why, 200)})`],
			fold.id,
			limit,
		);
	}
}

/**
 * What a pending mark's deterministic brief is a function of: its id (the identity of its exact
 * entries) and its kind. A mark is never a consolidation, the one kind whose brief reads its
 * children's briefs, so nothing else goes into it.
 */
function markBriefKey(f: Pick<FoldView, "id" | "kind">): string {
	return `${f.kind} ${f.id}`;
}

/**
 * A pending mark's deterministic brief, written once and then kept in `memo` (a session's briefs
 * of pending marks: a commit weighs them, and every answer's arithmetic does).
 */
export function markBrief(
	lattice: Pick<FoldLattice, "get" | "leavesOf">,
	f: Pick<FoldView, "id" | "kind">,
	entriesById: EntryLookup,
	memo?: Map<string, string>,
): string {
	const key = markBriefKey(f);
	const known = memo?.get(key);
	if (known !== undefined) return known;
	const brief = briefForFold(lattice, f.id, entriesById) ?? "";
	if (brief !== "") memo?.set(key, brief);
	return brief;
}

/** Keep in `memo` only the briefs of the marks still pending. */
export function keepMarkBriefs(memo: Map<string, string>, pending: readonly Pick<FoldView, "id" | "kind">[]): void {
	const keep = new Set(pending.map(markBriefKey));
	for (const key of memo.keys()) if (!keep.has(key)) memo.delete(key);
}

/** The brief for a lattice fold, reading its leaves and (for a consolidation) its children's briefs. */
export function briefForFold(
	lattice: Pick<FoldLattice, "get" | "leavesOf">,
	id: FoldId,
	entriesById: EntryLookup,
	opts: Omit<BriefOptions, "childFold" | "childLeaves"> = {},
): string | undefined {
	const fold = lattice.get(id);
	const leaves = lattice.leavesOf(id);
	if (!fold || !leaves) return undefined;
	return deterministicBrief({ ...fold, leaves }, entriesById, {
		...opts,
		childFold: (c) => lattice.get(c),
		childLeaves: (c) => lattice.leavesOf(c),
	});
}
