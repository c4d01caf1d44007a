// State changes of existing folds: commit (pending -> committed), expand (committed -> expanded, one
// level, outside-in) and refold (expanded -> committed). None changes the structure.
//
// Marks never nest in marks (see marks.ts), so committing a mark never involves another mark:
// the folds inside it are standing already and keep their states (an expanded child stays
// expanded, hidden behind its collapsed parent until that is expanded).
import type { FoldId } from "../../fold-types.ts";
import { describeFold, type FoldNode } from "../fold.ts";
import { refuse } from "../outcome.ts";
import { type Change, foldById, foldList, idsOf, type LatticeData } from "./common.ts";

export interface CommitResult {
	committed: FoldId[];
}

/** Every listed fold must be a pending mark with a brief; all of them commit, or none. */
export function commit(d: LatticeData, ids: unknown): Change<CommitResult> {
	const folds = foldList(d, ids, "commit");
	for (const f of folds) {
		if (f.state !== "pending") refuse(`${describeFold(f)} is not a pending mark: only marks commit`);
		// A committed brief reaches the window at once and is never rewritten, so it must exist now.
		if (f.brief === "") {
			refuse(`${describeFold(f)} has no brief yet: the runtime writes its deterministic brief before it commits`);
		}
	}
	return {
		result: { committed: idsOf(folds) },
		apply: () => {
			for (const f of folds) f.state = "committed";
		},
	};
}

/** The outermost collapsed (committed) ancestor of a fold, if any: it hides the fold. */
function collapsedAncestor(d: LatticeData, f: FoldNode): FoldNode | undefined {
	let hidden: FoldNode | undefined;
	for (let i = f.parent; i !== -1; i = d.structure.nodes[i].parent) {
		const a = d.structure.nodes[i];
		if (a.state === "committed") hidden = a;
	}
	return hidden;
}

export interface ExpandResult {
	id: FoldId;
}

export function expand(d: LatticeData, id: unknown): Change<ExpandResult> {
	const f = foldById(d, id);
	if (f.state === "pending") refuse(`${describeFold(f)} is not folded yet, so there is nothing to expand`);
	if (f.state === "expanded") refuse(`${describeFold(f)} is already expanded`);
	const hidden = collapsedAncestor(d, f);
	if (hidden) {
		refuse(
			`${describeFold(f)} is hidden inside ${describeFold(hidden)}: expand that first (one level at a time, outside-in)`,
		);
	}
	return {
		result: { id: f.id },
		apply: () => {
			f.state = "expanded";
		},
	};
}

/** Collapse an expanded fold again; its descendants keep their states. */
export function refold(d: LatticeData, id: unknown): Change<ExpandResult> {
	const f = foldById(d, id);
	if (f.state !== "expanded") refuse(`${describeFold(f)} is not expanded: only an expanded fold refolds`);
	return {
		result: { id: f.id },
		apply: () => {
			f.state = "committed";
		},
	};
}
