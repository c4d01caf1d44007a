// What the model sees. A committed fold shows as its brief; an expanded fold shows its direct
// children (child folds as their own state says, leaves raw); a pending mark shows nothing of
// itself, its span shows as if it were not there.
import type { FoldId } from "../fold-types.ts";
import type { ContextIndex } from "./entries.ts";
import { kidFold, type WindowItem } from "./fold.ts";
import type { Structure } from "./structure.ts";

export function windowOf(structure: Structure, ctx: ContextIndex): WindowItem[] {
	const out: WindowItem[] = [];
	const show = (kid: number): void => {
		if (kid >= 0) {
			out.push({ type: "raw", entryId: ctx.entries[kid].id });
			return;
		}
		const f = structure.folds[kidFold(kid)];
		if (f.state === "committed") out.push({ type: "fold", id: f.id });
		else for (const k of f.kids) show(k);
	};
	for (const kid of structure.top) show(kid);
	return out;
}

/**
 * The committed roots, in transcript order: the folds the window shows as a brief that have no
 * parent (roots are always visible). These are what `consolidate` takes. Committed folds shown
 * inside an expanded fold or a pending mark are in `window()`, not here.
 */
export function visibleRootsOf(structure: Structure): FoldId[] {
	const out: FoldId[] = [];
	for (const kid of structure.top) {
		if (kid >= 0) continue;
		const f = structure.folds[kidFold(kid)];
		if (f.state === "committed") out.push(f.id);
	}
	return out;
}
