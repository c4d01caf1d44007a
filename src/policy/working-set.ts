// The raw working set: what the model is working on stays as it is, whatever folding would save.
// It is the current chapter's newest `batches` tool batches and everything after the first of them
// (at a turn boundary every batch in the window has its results; the batch in progress is the next
// request's); when the chapter holds fewer batches, the whole chapter from its user message on. A fold over any of it would hide the results the
// model is reasoning about right now, and finding them again costs more than keeping them.
import type { LatticeEntry } from "../lattice/index.ts";

/**
 * The first position of the working set among `entries` (entries.length when it is empty). A
 * batch is an assistant entry that opens tool calls; a user entry starts the chapter.
 */
export function workingSetStart(
	entries: ArrayLike<Pick<LatticeEntry, "role" | "toolCallIds">>,
	batches: number,
): number {
	if (batches <= 0) return entries.length;
	let seen = 0;
	for (let p = entries.length - 1; p >= 0; p--) {
		const e = entries[p];
		if (e.role === "user") return p;
		if (e.role === "assistant" && (e.toolCallIds?.length ?? 0) > 0) {
			seen++;
			if (seen >= batches) return p;
		}
	}
	return 0;
}
