// The raw working set: what the model is working on stays as it is, whatever folding would save.
// It is the current chapter's newest `batches` tool batches and everything after the first of them
// (at a turn boundary every batch in the window has its results; the newest one the model has not
// seen yet: it is the batch in progress); when the chapter holds fewer batches, the whole chapter
// from its user message on. A fold over any of it would hide the results the model is reasoning
// about right now, and finding them again costs more than keeping them.
//
// It must also fit. On a small window, or with big tool outputs, three batches can be most of the
// budget: every batch then crosses the commit threshold, and each commit can fold only a sliver, so
// the session pays a rewrite per request. And every token the set holds is read back on every
// request and re-sent by every commit. So the set shrinks, one batch at a time, toward the batch in
// progress while it would hold more than WORKING_SET_SHARE of the budget: on a 183,616 budget (a
// 200,000 window under Pi's default compaction) that is about 9,200 tokens, two or three batches of
// ordinary reads; on 20,000 it is 1,000, the batch in progress alone.
import type { LatticeEntry } from "../lattice/index.ts";

/** The most of the budget the working set may hold, unless its newest batch alone holds more. */
export const WORKING_SET_SHARE = 0.05;

/** What bounds the working set's size: each position's tokens as the window shows it, and the budget. */
export interface WorkingSetFit {
	/** Calibrated tokens the entry at position p shows (0 when hidden). */
	tokensAt(p: number): number;
	budget: number;
}

/** The working set: where it starts, how many tool batches it holds, and their tokens (with `fit`). */
export interface WorkingSet {
	start: number;
	batches: number;
	tokens: number;
}

/**
 * The working set among `entries` (start: entries.length when it is empty). A batch is an
 * assistant entry that opens tool calls; a user entry starts the chapter. With `fit`, the set keeps
 * at most WORKING_SET_SHARE of the budget, but never fewer than one batch (or the chapter's opening
 * when it has none).
 */
export function workingSet(
	entries: ArrayLike<Pick<LatticeEntry, "role" | "toolCallIds">>,
	batches: number,
	fit?: WorkingSetFit,
): WorkingSet {
	if (batches <= 0) return { start: entries.length, batches: 0, tokens: 0 };
	const limit = fit ? WORKING_SET_SHARE * fit.budget : Number.POSITIVE_INFINITY;
	let tokens = 0;
	/** The set as far as it was taken: the newest batches that fit. */
	let kept: WorkingSet = { start: entries.length, batches: 0, tokens: 0 };
	for (let p = entries.length - 1; p >= 0; p--) {
		const e = entries[p];
		if (fit) tokens += fit.tokensAt(p);
		const opens = e.role === "assistant" && (e.toolCallIds?.length ?? 0) > 0;
		if (e.role !== "user" && !opens) continue;
		// One more batch (or the chapter's start) would be taken here: not when it passes the share,
		// unless nothing was taken yet (the batch in progress stays whatever its size).
		if (kept.batches > 0 && tokens > limit) return kept;
		if (e.role === "user") return { start: p, batches: kept.batches, tokens };
		kept = { start: p, batches: kept.batches + 1, tokens };
		if (kept.batches >= batches) return kept;
	}
	return kept.batches > 0 && tokens > limit ? kept : { start: 0, batches: kept.batches, tokens };
}

/** The first position of the working set (see workingSet). */
export function workingSetStart(
	entries: ArrayLike<Pick<LatticeEntry, "role" | "toolCallIds">>,
	batches: number,
	fit?: WorkingSetFit,
): number {
	return workingSet(entries, batches, fit).start;
}
