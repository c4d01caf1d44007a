// What the model sees. A committed fold shows as its brief; an expanded fold shows its direct
// children (child folds as their own state says, leaves raw); a pending mark shows nothing of
// itself, its span shows as if it were not there.
import type { FoldId } from "../fold-types.ts";
import type { ContextIndex } from "./entries.ts";
import { type FoldNode, kidFold, type WindowItem } from "./fold.ts";
import { rootOf, type Structure } from "./structure.ts";

export function windowOf(structure: Structure, ctx: ContextIndex): WindowItem[] {
	const out: WindowItem[] = [];
	const show = (f: FoldNode): void => {
		if (f.state === "committed") {
			out.push({ type: "fold", id: f.id });
			return;
		}
		for (const k of f.kids) {
			if (k >= 0) out.push({ type: "raw", entryId: ctx.at(k).id });
			else show(structure.nodes[kidFold(k)]);
		}
	};
	// The top level in order: raw leaves no fold covers, and each root once, at its start.
	for (let p = 0; p < ctx.size; ) {
		const i = structure.innermost[p];
		if (i === -1) {
			out.push({ type: "raw", entryId: ctx.at(p).id });
			p++;
			continue;
		}
		const root = rootOf(structure, structure.nodes[i]);
		show(root);
		p = root.end;
	}
	return out;
}

/**
 * The committed roots, in transcript order: the folds the window shows as a brief that have no
 * parent (roots are always visible). These are what `consolidate` takes. Committed folds shown
 * inside an expanded fold or a pending mark are in `window()`, not here.
 */
export function visibleRootsOf(structure: Structure): FoldId[] {
	const out: FoldId[] = [];
	for (const slot of structure.roots) {
		const f = structure.nodes[slot];
		if (f.state === "committed") out.push(f.id);
	}
	return out;
}
