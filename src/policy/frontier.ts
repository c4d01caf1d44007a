// The frontier: which completed units become pending marks now. Pure: it reads the context and
// the lattice and returns MarkRequests for `lattice.markMany`; marking is free (a mark lives in
// session state, not in the window) and the commit, not the frontier, decides what folds and when.
//
// Units: a completed tool batch (an assistant's calls and all their results, landed) and the
// entries of a closed chapter (a user message through the reply before the next user message).
// Adjacent ready units merge, oldest first, until a mark reaches `minFoldChars` canonical bytes;
// a tail below that waits for more units, unless nothing can ever join it on the right (a fold or
// an entry that never folds), in which case it is absorbed by its neighbour.
import type { MarkRequest } from "../lattice/index.ts";
import type { ContextEntries } from "../session/context-entries.ts";
import { type Frontier, type Item, itemsOf, lastUserIn } from "./frontier-items.ts";
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
 * The lattice must be over exactly these entries; otherwise propose nothing (degrade safely). Only
 * positions from `from` are compared: a cursor's owner vouches that the entries before it are unchanged.
 */
function aligned(context: ContextEntries, lattice: Frontier, from: number): boolean {
	const a = context.entries;
	if (a.length !== lattice.size || context.sources.length !== a.length) return false;
	for (let p = from; p < a.length; p++) {
		if (a[p].id !== lattice.entryAt(p).id || context.sources[p]?.id !== a[p].id) return false;
	}
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
