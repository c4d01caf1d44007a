// One frontier pass at a turn boundary: the marks to cut over what the model has seen (the
// entries before this turn's assistant message), with the frontier's cursor kept between passes
// for the lattice it was decided on.
import type { FoldLattice, MarkRequest } from "../lattice/index.ts";
import type { Open } from "../session/open-session.ts";
import type { Thresholds } from "../vocabulary.ts";
import { DEFAULT_FRONTIER_SETTINGS, type FrontierCursor, frontierCursor, proposeMarks } from "./frontier.ts";

export class FrontierPass {
	/**
	 * Where the next pass starts, for the lattice it was decided on. Marking and extending change
	 * that lattice only after the cursor; every other change to folds (commit, consolidate, expand,
	 * refold, unmark, a rebuild) comes as another lattice object, which resets it.
	 */
	#state: { lattice: FoldLattice; cursor: FrontierCursor } | undefined;

	/** `to` is a copy of `from` that will take its place: the cursor goes with it. */
	carry(from: FoldLattice, to: FoldLattice): void {
		if (this.#state?.lattice === from) this.#state = { lattice: to, cursor: this.#state.cursor };
	}

	/** The marks to cut now; `withdrawn`: entries the frontier must leave alone, as it leaves pins. */
	propose(
		open: Readonly<Open>,
		messageEntryId: string,
		settings: { thresholds: Pick<Thresholds, "minFoldChars">; blacklistAutoFoldTools: ReadonlySet<string> },
		withdrawn: ReadonlySet<string>,
	): MarkRequest[] {
		// The message is the newest entry or near it: search from the end.
		let at = open.context.entries.length - 1;
		while (at >= 0 && open.context.entries[at].id !== messageEntryId) at--;
		const seen = at < 0 ? open.context.entries.length : at;
		const { context, lattice } = open;
		if (this.#state?.lattice !== lattice) this.#state = { lattice, cursor: frontierCursor() };
		// Spans the agent or a person unmarked are not cut again on the frontier's own initiative, nor
		// are folds known damaged taken into a new one: to the frontier they are pinned (its cursor
		// resets when that set changes, as for pins).
		const pinned = frontierPins(open, withdrawn);
		const view =
			pinned.size === 0
				? lattice
				: {
						size: lattice.size,
						entryAt: (p: number) => lattice.entryAt(p),
						tools: lattice.tools,
						rootSpans: (from: number) => lattice.rootSpans(from),
						pins: () => [...lattice.pins(), ...pinned],
					};
		// The whole context and lattice, with the pass limited to the first `seen` entries (no copies).
		return proposeMarks(
			context,
			view,
			{
				minFoldChars: settings.thresholds.minFoldChars,
				maxCutsPerPass: DEFAULT_FRONTIER_SETTINGS.maxCutsPerPass,
				blacklistAutoFoldTools: settings.blacklistAutoFoldTools,
			},
			this.#state.cursor,
			seen,
		);
	}
}

/** Entries the frontier must leave alone: withdrawn spans, and the entries of damaged folds. */
function frontierPins(open: Readonly<Open>, withdrawn: ReadonlySet<string>): ReadonlySet<string> {
	if (open.damaged.size === 0) return withdrawn;
	const out = new Set(withdrawn);
	for (const id of open.damaged.keys()) {
		const f = open.lattice.get(id);
		if (f) for (let p = f.start; p < f.end; p++) out.add(open.lattice.entryAt(p).id);
	}
	return out;
}
