// The frontier (SPEC section 3, issue 4): which completed units become pending marks now. Pure:
// it reads the context and the lattice and returns MarkRequests for `lattice.markMany`; marking
// is free (a mark lives in session state, not in the window) and the commit, not the frontier,
// decides what folds and when.
//
// Units: a completed tool batch (an assistant's calls and all their results, landed) and the
// entries of a closed chapter (a user message through the reply before the next user message).
// Adjacent ready units merge, oldest first, until a mark reaches `minFoldChars` canonical bytes;
// a tail below that waits for more units, unless nothing can ever join it on the right (a fold or
// an entry that never folds), in which case it is absorbed by its neighbour.
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { FoldLattice, LatticeEntry, MarkRequest, RootSpan, ToolBatches } from "../lattice/index.ts";
import type { ContextEntries } from "../session/context-entries.ts";
import { DEFAULT_THRESHOLDS } from "./thresholds.ts";

export interface FrontierSettings {
	/** A mark's least size, in canonical bytes of its leaves. */
	minFoldChars: number;
	/** At most this many marks per pass (the stalest ones). */
	maxCutsPerPass: number;
	/** Tools whose batches stay raw. */
	blacklistAutoFoldTools: ReadonlySet<string>;
}

export const DEFAULT_FRONTIER_SETTINGS: Readonly<FrontierSettings> = Object.freeze({
	minFoldChars: DEFAULT_THRESHOLDS.minFoldChars,
	maxCutsPerPass: 8,
	blacklistAutoFoldTools: new Set<string>(),
});

/**
 * One place of the top level, in order:
 * - ready: a unit that may fold now;
 * - wait: not foldable yet (an incomplete batch, an entry of the open chapter);
 * - never: never folds (a system, pinned or blacklisted entry, a broken batch);
 * - fold: a root fold (its state decides whether a gap beside it may absorb it).
 */
type Item =
	| { type: "ready"; start: number; end: number; batch: boolean }
	| { type: "wait" | "never"; start: number; end: number }
	| { type: "fold"; start: number; end: number; fold: RootSpan };

type Frontier = Pick<FoldLattice, "entries" | "rootSpans" | "pins" | "tools">;

/**
 * For each position in [from, n): [lo, hi] of the tool calls it shares a fold with, and whether a
 * call or a result is missing, over the entries in [from, n) only (n: the entries the pass
 * examines). The caller has shown that no entry from `from` on shares a tool call id with an
 * earlier one (see FrontierCursor), so these are the groups a whole pass over [0, n) sees. They
 * come from the lattice's index of tool batches, built once as the context grows: a position whose
 * groups all lie before n and are complete reads it as it is; only one whose group reaches n or
 * beyond (a result the model has not seen yet) or is open re-reads its groups, cut at n.
 */
interface BatchFacts {
	/** Indexed by position - from. */
	lo: Int32Array;
	hi: Int32Array;
	noResult: Uint8Array;
	noCall: Uint8Array;
}

function batchFacts(entries: readonly LatticeEntry[], tools: ToolBatches, from: number, n: number): BatchFacts {
	const size = Math.max(0, n - from);
	const facts: BatchFacts = {
		lo: new Int32Array(size),
		hi: new Int32Array(size),
		noResult: new Uint8Array(size),
		noCall: new Uint8Array(size),
	};
	for (let p = from; p < n; p++) {
		const i = p - from;
		const hi = tools.toolHi(p);
		if (hi < n && !tools.toolOpen(p)) {
			facts.lo[i] = tools.toolLo(p);
			facts.hi[i] = hi;
			continue;
		}
		let lo = p;
		let top = p;
		const e = entries[p];
		const group = (c: string) => {
			let calls = 0;
			let results = 0;
			for (const q of tools.calls(c)) {
				if (q < from || q >= n) continue;
				calls++;
				if (q < lo) lo = q;
				if (q > top) top = q;
			}
			for (const q of tools.results(c)) {
				if (q < from || q >= n) continue;
				results++;
				if (q < lo) lo = q;
				if (q > top) top = q;
			}
			if (results === 0) facts.noResult[i] = 1;
			if (calls === 0) facts.noCall[i] = 1;
		};
		if (e.toolCallIds) for (const c of e.toolCallIds) group(c);
		if (e.toolCallId !== undefined) group(e.toolCallId);
		facts.lo[i] = lo;
		facts.hi[i] = top;
	}
	return facts;
}

/**
 * Tool names per session entry, kept across passes: a session entry is immutable once appended,
 * and the runtime hands the same entry objects to every pass, so each entry is read once, not
 * once per pass.
 */
const toolNamesOf = new WeakMap<object, readonly string[]>();

/** Tool names an entry calls or answers (from the Pi entry: the lattice entries carry no names). */
function toolNames(entry: SessionEntry | undefined): readonly string[] {
	if (entry === undefined) return [];
	const known = toolNamesOf.get(entry);
	if (known) return known;
	const names = readToolNames(entry);
	toolNamesOf.set(entry, names);
	return names;
}

function readToolNames(entry: SessionEntry): string[] {
	if (entry.type !== "message") return [];
	const m = entry.message as { role?: string; content?: unknown; toolName?: unknown };
	if (m.role === "toolResult") return typeof m.toolName === "string" ? [m.toolName] : [];
	if (m.role !== "assistant" || !Array.isArray(m.content)) return [];
	return m.content.flatMap((b: { type?: string; name?: unknown }) =>
		b?.type === "toolCall" && typeof b.name === "string" ? [b.name] : [],
	);
}

/**
 * The lattice must be over exactly these entries; otherwise propose nothing (degrade safely). Only
 * positions from `from` are compared: a cursor's owner vouches that the entries before it are unchanged.
 */
function aligned(context: ContextEntries, lattice: Frontier, from: number): boolean {
	const a = context.entries;
	const b = lattice.entries;
	if (a.length !== b.length || context.sources.length !== a.length) return false;
	for (let p = from; p < a.length; p++) if (a[p].id !== b[p].id || context.sources[p]?.id !== a[p].id) return false;
	return true;
}

function validSettings(s: FrontierSettings): boolean {
	return (
		typeof s === "object" &&
		s !== null &&
		Number.isFinite(s.minFoldChars) &&
		s.minFoldChars >= 0 &&
		Number.isSafeInteger(s.maxCutsPerPass) &&
		s.maxCutsPerPass >= 0 &&
		s.blacklistAutoFoldTools instanceof Set
	);
}

/**
 * The top level of the context's first `n` entries from `from` (an item boundary): root folds, and
 * the raw entries grouped into units. Undefined when a root straddles `from` (it is no boundary:
 * the caller passes again whole).
 */
function itemsOf(
	context: ContextEntries,
	lattice: Frontier,
	settings: FrontierSettings,
	pins: readonly string[],
	from: number,
	n: number,
): Item[] | undefined {
	const { entries, sources } = context;
	const roots = new Map<number, RootSpan>();
	// Positions inside a fold: the roots cover exactly what all folds cover.
	const covered = new Uint8Array(n);
	for (const f of lattice.rootSpans(from)) {
		if (f.start < from) return undefined;
		roots.set(f.start, f);
		covered.fill(1, f.start, f.end);
	}
	const pinned = new Set(pins);
	const facts = batchFacts(entries, lattice.tools, from, n);
	const lo = (p: number) => facts.lo[p - from];
	const hi = (p: number) => facts.hi[p - from];
	const noResult = (p: number) => facts.noResult[p - from] === 1;
	const noCall = (p: number) => facts.noCall[p - from] === 1;
	// A never-folding entry: a system entry, a pin, a blacklisted tool's call or result, an orphan result.
	const never = (p: number) =>
		entries[p].role === "system" ||
		pinned.has(entries[p].id) ||
		noCall(p) ||
		(settings.blacklistAutoFoldTools.size > 0 &&
			toolNames(sources[p]).some((t) => settings.blacklistAutoFoldTools.has(t)));
	// Only positions from `from` are compared with it: a user entry before `from` readies none of them.
	const lastUser = lastUserIn(entries, from, n);

	const items: Item[] = [];
	for (let p = from; p < n; ) {
		const root = roots.get(p);
		if (root) {
			// A root whose entries are pinned to the frontier (a damaged fold) is never absorbed.
			if (pinned.has(entries[root.start].id)) items.push({ type: "never", start: root.start, end: root.end });
			else items.push({ type: "fold", start: root.start, end: root.end, fold: root });
			p = root.end;
			continue;
		}
		const isTool = hi(p) !== p || lo(p) !== p || noResult(p) || noCall(p);
		if (!isTool) {
			const type = never(p) ? "never" : p < lastUser ? "ready" : "wait";
			items.push(type === "ready" ? { type, start: p, end: p + 1, batch: false } : { type, start: p, end: p + 1 });
			p++;
			continue;
		}
		// The batch: the smallest span holding every call and result its entries share.
		let end = hi(p) + 1;
		let broken = lo(p) < p;
		let incomplete = false;
		let blocked = false;
		for (let q = p; q < end; q++) {
			if (hi(q) + 1 > end) end = hi(q) + 1;
			if (lo(q) < p || covered[q] === 1) broken = true;
			if (noResult(q)) incomplete = true;
			if (never(q)) blocked = true;
		}
		end = Math.min(end, n);
		const type = broken || blocked ? "never" : incomplete ? "wait" : "ready";
		items.push(type === "ready" ? { type, start: p, end, batch: true } : { type, start: p, end });
		p = end;
	}
	return items;
}

/** The last user entry in [from, n), or -1. */
function lastUserIn(entries: readonly LatticeEntry[], from: number, n: number): number {
	for (let p = n - 1; p >= from; p--) if (entries[p].role === "user") return p;
	return -1;
}

/**
 * Where the next pass may start. Every item before `from` is a fold, an entry that never folds or
 * a unit that waits, none of them sharing a tool call with a later entry, and `from` is the start
 * of the item just before the first ready unit: a ready unit (a tail below minFoldChars too) is
 * re-examined every pass, and its left neighbour decides what a closed tail may be absorbed into.
 * A unit waits for one of two things, both seen from `from` on: the results of an incomplete batch
 * (they answer a tool call id of `toolIds`, so the pass goes whole), or a user entry after an open
 * chapter's entries (`waits` says some wait before `from`: any user entry from `from` on sends the
 * pass whole; none can have been there when they were passed, or they would not have waited).
 *
 * What it relies on, checked here: the pins and the blacklist it was decided under (a pin or a
 * blacklist change resets it), and no entry at or after `from` answering or repeating a tool call
 * id of an entry before it (`toolIds`; such a session is passed whole). What its owner must
 * guarantee: the entries before `from` are unchanged (the context only grows at its end) and the
 * folds before `from` are unchanged, so a new cursor after any commit, consolidation, expansion,
 * refold, unmark, reboundary or rebuild; the marks a pass proposes lie after `from`.
 */
export interface FrontierCursor {
	from: number;
	/** Tool call ids of the entries before `from` (calls and results). */
	toolIds: Set<string>;
	/** Whether an item before `from` waits for a user entry (see above). */
	waits: boolean;
	/** The pins and blacklist `from` was decided under. */
	pins: string | undefined;
	blacklist: ReadonlySet<string> | undefined;
}

export function frontierCursor(): FrontierCursor {
	return { from: 0, toolIds: new Set(), waits: false, pins: undefined, blacklist: undefined };
}

function resetCursor(cursor: FrontierCursor): void {
	cursor.from = 0;
	cursor.toolIds.clear();
	cursor.waits = false;
}

/** Whether an entry in [from, n) shares a tool call id with one before it (the groups then span it). */
function crossesCursor(context: ContextEntries, cursor: FrontierCursor, n: number): boolean {
	if (cursor.toolIds.size === 0) return false;
	const { entries } = context;
	for (let p = cursor.from; p < n; p++) {
		const e = entries[p];
		if (e.toolCallId !== undefined && cursor.toolIds.has(e.toolCallId)) return true;
		if (e.toolCallIds?.some((c) => cursor.toolIds.has(c))) return true;
	}
	return false;
}

/** Move the cursor to the start of the item before the first ready unit. */
function advanceCursor(context: ContextEntries, cursor: FrontierCursor, items: readonly Item[]): void {
	if (items.length === 0) return;
	const k = items.findIndex((item) => item.type === "ready");
	const at = k < 0 ? items.length - 1 : Math.max(0, k - 1);
	const to = items[at].start;
	for (let j = 0; j < at; j++) if (items[j].type === "wait") cursor.waits = true;
	for (let p = cursor.from; p < to; p++) {
		const e = context.entries[p];
		if (e.toolCallId !== undefined) cursor.toolIds.add(e.toolCallId);
		if (e.toolCallIds) for (const c of e.toolCallIds) cursor.toolIds.add(c);
	}
	cursor.from = to;
}

/**
 * Pending marks for the completed units among the context's first `seen` entries (all by
 * default), stalest first, at most `maxCutsPerPass`. Every request is one `lattice.markMany`
 * accepts; a pass right after marking them proposes nothing new. Never throws: bad settings or a
 * lattice over other entries give no proposals. With a `cursor` (see FrontierCursor) only the
 * entries from its position are examined, and it is moved on; the proposals are those of a whole pass.
 */
export function proposeMarks(
	context: ContextEntries,
	lattice: Frontier,
	settings: FrontierSettings = DEFAULT_FRONTIER_SETTINGS,
	cursor?: FrontierCursor,
	seen: number = context.entries.length,
): MarkRequest[] {
	try {
		if (!validSettings(settings)) return [];
		if (!Number.isSafeInteger(seen) || seen < 0 || seen > context.entries.length) return [];
		const pins = lattice.pins();
		if (cursor) {
			const key = pins.join("\n");
			if (
				cursor.pins !== key ||
				cursor.blacklist !== settings.blacklistAutoFoldTools ||
				cursor.from > seen ||
				crossesCursor(context, cursor, seen) ||
				(cursor.waits && lastUserIn(context.entries, cursor.from, seen) >= 0)
			) {
				resetCursor(cursor);
			}
			cursor.pins = key;
			cursor.blacklist = settings.blacklistAutoFoldTools;
		}
		const from = cursor?.from ?? 0;
		if (!aligned(context, lattice, from)) return [];
		let items = itemsOf(context, lattice, settings, pins, from, seen);
		if (!items && cursor) {
			resetCursor(cursor);
			if (!aligned(context, lattice, 0)) return [];
			items = itemsOf(context, lattice, settings, pins, 0, seen);
		}
		if (!items) return [];
		if (cursor) advanceCursor(context, cursor, items);
		return propose(context, settings, items, seen);
	} catch {
		if (cursor) resetCursor(cursor);
		return [];
	}
}

interface Cut {
	start: number;
	end: number;
	batchesOnly: boolean;
}

function propose(
	context: ContextEntries,
	settings: FrontierSettings,
	items: readonly Item[],
	n: number,
): MarkRequest[] {
	const { entries } = context;
	// Byte sums of the first n entries from the first item on (the ones before it are never read).
	// A span reaching past n (a root beyond what the pass examines) has no sum and is never cut.
	const base = items[0]?.start ?? 0;
	const prefix = new Float64Array(n - base + 1);
	for (let p = base; p < n; p++) prefix[p - base + 1] = prefix[p - base] + entries[p].bytes;
	const bytes = (s: number, e: number) => prefix[e - base] - prefix[s - base];
	const min = settings.minFoldChars;
	const cuts: Cut[] = [];

	// A run: consecutive ready units between two items that are not ready (or the ends).
	const closeRun = (run: Extract<Item, { type: "ready" }>[], left: Item | undefined, right: Item | undefined) => {
		if (run.length === 0) return;
		const made: Cut[] = [];
		let open: Cut | undefined;
		for (const u of run) {
			open = open
				? { start: open.start, end: u.end, batchesOnly: open.batchesOnly && u.batch }
				: { start: u.start, end: u.end, batchesOnly: u.batch };
			if (bytes(open.start, open.end) >= min) {
				made.push(open);
				open = undefined;
			}
		}
		// Nothing can join a tail on the right of which lies a fold or an entry that never folds.
		const closed = right !== undefined && (right.type === "fold" || right.type === "never");
		if (open && closed) {
			const last = made.at(-1);
			if (last) {
				made[made.length - 1] = { start: last.start, end: open.end, batchesOnly: last.batchesOnly && open.batchesOnly };
			} else {
				const absorbed = absorbIntoCommitted(open, left, right);
				if (absorbed && bytes(absorbed.start, absorbed.end) >= min) made.push(absorbed);
			}
		}
		cuts.push(...made);
	};

	let run: Extract<Item, { type: "ready" }>[] = [];
	let left: Item | undefined;
	for (const item of items) {
		if (item.type === "ready") {
			run.push(item);
			continue;
		}
		closeRun(run, left, item);
		run = [];
		left = item;
	}
	closeRun(run, left, undefined);

	return mergeOverlaps(cuts.sort((a, b) => a.start - b.start))
		.slice(0, settings.maxCutsPerPass)
		.map((c) => ({
			from: entries[c.start].id,
			to: entries[c.end - 1].id,
			kind: c.batchesOnly ? "tool-batch" : "chapter",
		}));
}

/**
 * Sorted cuts with overlapping ones merged: two small gaps on either side of one committed root
 * may both absorb it (the left gap absorbs its right neighbour, the right gap its left), and
 * marks never overlap; one mark over both gaps and the root is what both asked for.
 */
function mergeOverlaps(sorted: readonly Cut[]): Cut[] {
	const out: Cut[] = [];
	for (const c of sorted) {
		const last = out.at(-1);
		if (last && c.start < last.end) {
			out[out.length - 1] = {
				start: last.start,
				end: Math.max(last.end, c.end),
				batchesOnly: last.batchesOnly && c.batchesOnly,
			};
		} else out.push(c);
	}
	return out;
}

/**
 * A small gap beside a committed root: a mark over the root and the gap (the root becomes its
 * child), so the gap does not stay raw between folds. The older neighbour first. Pending marks
 * cannot be grown here (a mark never contains a mark; reboundary re-cuts them), and an expanded
 * fold is open because someone asked to see it.
 */
function absorbIntoCommitted(gap: Cut, left: Item | undefined, right: Item | undefined): Cut | undefined {
	if (left?.type === "fold" && left.fold.state === "committed") {
		return { start: left.start, end: gap.end, batchesOnly: false };
	}
	if (right?.type === "fold" && right.fold.state === "committed") {
		return { start: gap.start, end: right.end, batchesOnly: false };
	}
	return undefined;
}
