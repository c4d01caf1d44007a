// Search every fold's exact text view (committed, expanded and pending: what peek shows) for a
// query, line by line. A match is reported in the innermost fold holding it, with that fold's
// ancestors, the entry and its role, and the byte offset in that fold's text view where the match
// starts, so `peek` with that offset lands on it. Literal queries (the default) and regular
// expressions are both case-insensitive and run in linear time (matcher.ts); a literal's ASCII run
// is found first by the engine's own search (short, so linear too), then checked by the matcher.
// A time budget bounds even a pathological pattern: past it, the answer says where it stopped.
import { performance } from "node:perf_hooks";
import type { PiFoldCore } from "../../bindings/index.ts";
import type { FoldView } from "../lattice/index.ts";
import type { Open } from "../session/open-session.ts";
import { codePointLength, headOf, oneLine, tailOf, utf8Length } from "../values/text-fit.ts";
import { type FoldId, SEARCH_DEFAULT_LIMIT } from "../vocabulary.ts";
import type { EntryView, FoldTexts, ReadProblem } from "./fold-texts.ts";
import { Matcher } from "./matcher.ts";
import { asciiNeedle, type Checked, scanText } from "./query.ts";

export { type Checked, checkQuery } from "./query.ts";

/** Past this, a search stops and says how far it got. */
const SEARCH_TIME_BUDGET_MS = 3_000;
/** A matching line is shown in at most this many characters, around the match. */
const LINE_CHARS = 200;
const CONTEXT_CHARS = 100;

export interface SearchRequest {
	query: string;
	regex?: boolean;
	limit?: number;
	offset?: number;
}

export interface SearchHit {
	/** The innermost fold holding the match, and its ancestors (parent first). */
	fold: FoldId;
	ancestors: FoldId[];
	entryId: string;
	role: string;
	/** A tool result's tool. */
	tool?: string;
	/** Byte offset of the match in `fold`'s text view: peek with this offset starts on it. */
	offset: number;
	/** Byte offsets of the matching line's start, and of the line before it (the line's own when it opens its entry). */
	lineOffset: number;
	contextOffset: number;
	/** The matching line (cut around the match when long), the lines before and after it. */
	line: string;
	before?: string;
	after?: string;
}

export interface SearchAnswer {
	query: string;
	mode: "literal" | "regex";
	/** Matching lines in all (one hit per line), and the page shown. */
	total: number;
	offset: number;
	limit: number;
	hits: SearchHit[];
	/** Folds with at least one match; folds, entries and bytes of text searched. */
	foldsMatched: number;
	folds: number;
	entries: number;
	bytes: number;
	/** Folds that could not be read (not searched), with peek's reason. */
	problems: ReadProblem[];
	/** Set when the time budget ran out: the count is a lower bound. */
	stopped?: string;
	ms: number;
}

/** The line around a match, within LINE_CHARS, the match kept in view. */
function lineAround(text: string, lineStart: number, lineEnd: number, start: number): string {
	const line = text.slice(lineStart, lineEnd);
	const at = start - lineStart;
	if (codePointLength(line) <= LINE_CHARS) return oneLine(line);
	const before = tailOf(line.slice(0, at), 60);
	const after = headOf(line.slice(at), LINE_CHARS - 62);
	const lead = before.length < at ? "…" : "";
	const trail = at + after.length < line.length ? "…" : "";
	return `${lead}${oneLine(before)}${oneLine(after).length > 0 && /\s$/.test(before) ? " " : ""}${oneLine(after)}${trail}`;
}

function neighbour(text: string, from: number, to: number): string | undefined {
	if (from < 0 || to > text.length || from >= to) return undefined;
	const line = oneLine(text.slice(from, to));
	if (line === "") return undefined;
	return codePointLength(line) > CONTEXT_CHARS ? `${headOf(line, CONTEXT_CHARS - 1)}…` : line;
}

interface Pending {
	leaf: number;
	fold: FoldView;
	lineStart: number;
	end: number;
}

export function searchFolds(
	open: Readonly<Open>,
	texts: FoldTexts,
	core: PiFoldCore,
	req: SearchRequest,
	checked: Extract<Checked, { ok: true }>,
): SearchAnswer {
	const t0 = performance.now();
	const limit = req.limit ?? SEARCH_DEFAULT_LIMIT;
	const offset = req.offset ?? 0;
	const problems: ReadProblem[] = [];
	const lattice = open.lattice;
	const matcher = new Matcher(checked.node);
	const needle = asciiNeedle(checked.node);
	const deadline = t0 + SEARCH_TIME_BUDGET_MS;
	let stopped: string | undefined;
	const overdue = () => performance.now() > deadline;

	const foldsSeen = new Set<FoldId>();
	const foldsMatched = new Set<FoldId>();
	const views = new Map<FoldId, FoldView>();
	const page: Pending[] = [];
	/** The views of the roots holding the page's hits, held until the hits are written. */
	const pageViews = new Map<number, EntryView | undefined>();
	let total = 0;
	let entries = 0;
	let bytes = 0;
	const entriesList = lattice.entries;
	// Root by root: each read (or taken from what the views keep), searched, and let go.
	scan: for (const r of lattice.rootSpans()) {
		const root = lattice.get(r.id);
		if (!root) continue;
		const read = texts.root(open, core, root);
		problems.push(...read.problems);
		for (let p = root.start; p < root.end; p++) {
			const e = entriesList[p];
			const owner = lattice.foldOf(e.id);
			if (!owner) continue;
			const view = read.views[p - root.start];
			if (!view) continue; // its fold could not be read: reported in problems
			let fold = views.get(owner);
			if (!fold) {
				fold = lattice.get(owner);
				if (!fold) continue;
				views.set(owner, fold);
			}
			foldsSeen.add(owner);
			entries++;
			bytes += view.bytes;
			const text = view.text;
			const found = fold;
			const onLine = (lineStart: number, end: number): boolean => {
				if (total >= offset && total < offset + limit) {
					page.push({ leaf: p - found.start, fold: found, lineStart, end });
					if (!pageViews.has(root.start))
						for (let q = root.start; q < root.end; q++) pageViews.set(q, read.views[q - root.start]);
				}
				total++;
				foldsMatched.add(found.id);
				return true;
			};
			const finished = scanText(text, matcher, needle, onLine, overdue);
			if (!finished || overdue()) {
				stopped = `the time budget of ${SEARCH_TIME_BUDGET_MS / 1000} s ran out at entry ${e.id} (${entries} entries, ${bytes} bytes searched): narrow the query`;
				break scan;
			}
		}
	}

	const hits = hitsOf(page, lattice, texts, matcher, (p) => pageViews.get(p));
	return {
		query: req.query,
		mode: checked.mode,
		total,
		offset,
		limit,
		hits,
		foldsMatched: foldsMatched.size,
		folds: foldsSeen.size,
		entries,
		bytes,
		problems,
		...(stopped ? { stopped } : {}),
		ms: performance.now() - t0,
	};
}

/** The page of matches as hits: innermost fold, its ancestors, the entry, the offset peek lands on, the line. */
function hitsOf(
	page: readonly Pending[],
	lattice: Readonly<Open>["lattice"],
	texts: FoldTexts,
	matcher: Matcher,
	viewAt: (position: number) => EntryView | undefined,
): SearchHit[] {
	const offsets = new Map<FoldId, number[] | undefined>();
	const hits: SearchHit[] = [];
	for (const pend of page) {
		const start = pend.fold.start;
		const view = viewAt(start + pend.leaf);
		if (!view) continue;
		if (!offsets.has(pend.fold.id))
			offsets.set(
				pend.fold.id,
				texts.offsets(lattice, pend.fold, (leaf) => viewAt(start + leaf)),
			);
		const base = offsets.get(pend.fold.id)?.[pend.leaf];
		if (base === undefined) continue;
		const text = view.text;
		const m = matcher.matchAt(text, pend.lineStart, pend.end);
		const prevEnd = m.lineStart - 1;
		const prevStart = prevEnd > 0 ? text.lastIndexOf("\n", prevEnd - 1) + 1 : -1;
		const nextEnd = text.indexOf("\n", m.lineEnd + 1);
		const ancestors: FoldId[] = [];
		for (let f = pend.fold.parent; f; f = lattice.get(f)?.parent ?? null) ancestors.push(f);
		const entry = lattice.entries[pend.fold.start + pend.leaf];
		const tool = /^## entry \S+ · toolResult (\S+)/.exec(text)?.[1];
		const before = neighbour(text, prevStart, prevEnd);
		const after = neighbour(text, m.lineEnd + 1, nextEnd < 0 ? text.length : nextEnd);
		hits.push({
			fold: pend.fold.id,
			ancestors,
			entryId: entry.id,
			role: entry.role,
			...(tool ? { tool } : {}),
			offset: base + utf8Length(text.slice(0, m.start)),
			lineOffset: base + utf8Length(text.slice(0, m.lineStart)),
			contextOffset: base + utf8Length(text.slice(0, prevStart >= 0 ? prevStart : m.lineStart)),
			line: lineAround(text, m.lineStart, m.lineEnd, m.start),
			...(before ? { before } : {}),
			...(after ? { after } : {}),
		});
	}
	return hits;
}
