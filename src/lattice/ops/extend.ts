// extend: new context entries appended after the last one (the session grew by a turn). Existing
// positions, folds, identities and pins are untouched, so keeping the lattice in step with a live
// session costs indexing the new entries only, not a rebuild (nor a re-index of the whole context).
import type { ContextIndex } from "../entries.ts";
import { growPositions } from "../grow.ts";
import { refuse, show } from "../outcome.ts";
import { preorderOf, type Structure } from "../structure.ts";
import type { Change, LatticeData } from "./common.ts";

export interface ExtendResult {
	/** How many entries were appended. */
	added: number;
	/** The context's size after the append. */
	size: number;
}

/**
 * The data of an extended lattice: the index grown by the new entries and the same folds over it.
 * What the full re-index and rebuild checked still holds, for these reasons:
 * - every new entry is checked, and its id against every id already in the context (the index);
 * - appended positions lie after every fold, so they are top-level leaves and no fold covers a
 *   new system entry or a new pin;
 * - the only span facts of earlier positions an append can change are those of tool groups the
 *   new entries join (a second result for a call, a late result): such a group now reaches past
 *   every fold, so a fold holding any earlier member of it is broken, and the append is refused
 *   (naming the fold, exactly as a check of every fold would). Nothing else moves.
 * No fold changes, so there is nothing for the core to validate again.
 */
export function extend(d: LatticeData, entries: unknown): Change<ExtendResult> & { ctx: ContextIndex } {
	if (!Array.isArray(entries)) refuse(`extend takes an array of entries, got ${show(entries)}`);
	const from = d.ctx.size;
	const ctx = d.ctx.append(entries);
	if (breaksAFold(d.structure, ctx, from)) {
		for (const f of preorderOf(d.structure)) {
			const problem = ctx.spanProblem(f.start, f.end);
			if (problem) refuse(`the new entries would break ${f.state} fold ${f.id}: ${problem}`);
		}
		refuse("internal: an appended entry joins a tool batch inside a fold, but no fold reports it");
	}
	return {
		result: { added: entries.length, size: ctx.size },
		ctx,
		apply: () => growPositions(d.structure, from, ctx.size),
	};
}

/** Whether an entry at or after `from` joins a tool group with a member inside a fold. */
function breaksAFold(structure: Structure, ctx: ContextIndex, from: number): boolean {
	for (let p = from; p < ctx.size; p++) {
		const e = ctx.at(p);
		const callIds = e.toolCallId === undefined ? (e.toolCallIds ?? []) : [...(e.toolCallIds ?? []), e.toolCallId];
		for (const c of callIds) {
			for (const q of ctx.members(c)) if (q < from && structure.innermost[q] !== -1) return true;
		}
	}
	return false;
}
