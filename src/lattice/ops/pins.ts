// pin and unpin: entries held raw through every fold. A pinned entry is never inside any fold, so
// pinning refuses an entry that is already folded or marked; all-or-nothing over the list.
import { describeFold } from "../fold.ts";
import { refuse } from "../outcome.ts";
import { type Change, entryPositions, type LatticeData } from "./common.ts";

export interface PinResult {
	/** The entry ids, as given. */
	entryIds: string[];
}

export function pin(d: LatticeData, entryIds: unknown): Change<PinResult> {
	const positions = entryPositions(d, entryIds, "pin");
	for (const p of positions) {
		if (d.pins.has(p)) refuse(`${d.ctx.label(p)} is already pinned`);
		// A system entry (the system prompt, a compaction summary) is never folded: nothing to hold.
		if (d.ctx.at(p).role === "system")
			refuse(`${d.ctx.label(p)} is a system entry: it never folds, so it is not pinned`);
		const i = d.structure.innermost[p];
		if (i === -1) continue;
		const f = d.structure.nodes[i];
		if (f.state === "pending") refuse(`${d.ctx.label(p)} is inside ${describeFold(f)}: unmark it first`);
		refuse(`${d.ctx.label(p)} is inside ${describeFold(f)}: a folded entry cannot be pinned`);
	}
	return { result: { entryIds: positions.map((p) => d.ctx.at(p).id) }, pins: new Set([...d.pins, ...positions]) };
}

export function unpin(d: LatticeData, entryIds: unknown): Change<PinResult> {
	const positions = entryPositions(d, entryIds, "unpin");
	for (const p of positions) if (!d.pins.has(p)) refuse(`${d.ctx.label(p)} is not pinned`);
	const pins = new Set(d.pins);
	for (const p of positions) pins.delete(p);
	return { result: { entryIds: positions.map((p) => d.ctx.at(p).id) }, pins };
}
