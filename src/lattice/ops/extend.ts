// extend: new context entries appended after the last one (the session grew by a turn). Existing
// positions, folds, identities and pins are untouched, so keeping the lattice in step with a live
// session costs one re-index instead of a rebuild from the session records.
import { ContextIndex } from "../entries.ts";
import { specOf } from "../fold.ts";
import { refuse, show } from "../outcome.ts";
import { buildStructure } from "../structure.ts";
import type { Change, LatticeData } from "./common.ts";

export interface ExtendResult {
	/** How many entries were appended. */
	added: number;
	/** The context's size after the append. */
	size: number;
}

/** The data of an extended lattice: the new index and a structure rebuilt over it (same folds). */
export function extend(d: LatticeData, entries: unknown): Change<ExtendResult> & { ctx: ContextIndex } {
	if (!Array.isArray(entries)) refuse(`extend takes an array of entries, got ${show(entries)}`);
	// The index checks every new entry and refuses an id already in the context.
	const ctx = new ContextIndex([...d.ctx.entries, ...entries]);
	// A standing fold stays valid only if the new entries do not reach into it (e.g. a second
	// result for a call it holds).
	for (const f of d.structure.folds) {
		const problem = ctx.spanProblem(f.start, f.end);
		if (problem) refuse(`the new entries would break ${f.state} fold ${f.id}: ${problem}`);
	}
	const structure = buildStructure(d.core, ctx, d.structure.folds.map(specOf), d.pins, d.structure);
	return { result: { added: entries.length, size: ctx.size }, structure, ctx };
}
