// Briefs on pending folds. A brief reaches the window only when a commit first shows the fold, so
// rewriting it before then is free; a standing fold's brief is never rewritten, because that would
// rewrite the window at its placeholder and cost the prefix cache from there on.
import type { FoldId } from "../../fold-types.ts";
import { describeFold } from "../fold.ts";
import { briefText } from "../fold-values.ts";
import { refuse } from "../outcome.ts";
import { type Change, foldById, type LatticeData } from "./common.ts";

export interface BriefResult {
	id: FoldId;
}

/** The agent's brief: kept verbatim, provenance "supplied", any number of times while pending. */
export function brief(d: LatticeData, id: unknown, text: unknown): Change<BriefResult> {
	const f = foldById(d, id);
	if (f.state !== "pending") refuse(`${describeFold(f)} is standing: a standing fold's brief is never rewritten`);
	const verbatim = briefText(text);
	return {
		result: { id: f.id },
		apply: () => {
			f.brief = verbatim;
			f.provenance = "supplied";
		},
	};
}

/** The runtime's deterministic brief: only on a pending fold the agent has not briefed. */
export function setDeterministicBrief(d: LatticeData, id: unknown, text: unknown): Change<BriefResult> {
	const f = foldById(d, id);
	if (f.state !== "pending") refuse(`${describeFold(f)} is standing: a standing fold's brief is never rewritten`);
	if (f.provenance === "supplied") {
		refuse(`${describeFold(f)} carries a supplied brief: the runtime never overwrites the agent's words`);
	}
	const written = briefText(text);
	return {
		result: { id: f.id },
		apply: () => {
			f.brief = written;
		},
	};
}
