// Saving and loading a lattice as plain data (the runtime keeps it in session custom entries).
// Folds are named by entry ids, not positions, so a saved lattice survives a context whose
// positions shifted; a recorded fold id is checked against the content it names now.
import type { BriefProvenance, FoldId, FoldKind, FoldState } from "../fold-types.ts";
import type { ContextIndex } from "./entries.ts";
import { compareSpans, type FoldSpec } from "./fold.ts";
import { BRIEF_MAX_CHARS, briefLength, isFoldKind, isFoldState, isProvenance } from "./fold-values.ts";
import { refuse, show } from "./outcome.ts";
import { buildStructure, foldAtSpan, type LatticeCore, preorderOf, type Structure } from "./structure.ts";
import { pinnedIds } from "./views.ts";

export interface SavedFold {
	/** Checked on load when present: the content must still give this id. */
	id?: FoldId;
	/** The first and last entry of its span. */
	from: string;
	to: string;
	kind: FoldKind;
	state: FoldState;
	brief: string;
	provenance: BriefProvenance;
}

export interface SavedLattice {
	format: "pi-fold.lattice";
	v: 1;
	/** Pre-order. */
	folds: SavedFold[];
	pins: string[];
}

export function saveOf(structure: Structure, pins: ReadonlySet<number>, ctx: ContextIndex): SavedLattice {
	return {
		format: "pi-fold.lattice",
		v: 1,
		folds: preorderOf(structure).map((f) => ({
			id: f.id,
			from: ctx.entries[f.start].id,
			to: ctx.entries[f.end - 1].id,
			kind: f.kind,
			state: f.state,
			brief: f.brief,
			provenance: f.provenance,
		})),
		pins: pinnedIds(pins, ctx),
	};
}

function savedSpec(ctx: ContextIndex, value: unknown, i: number): FoldSpec & { id?: FoldId } {
	const at = `saved fold ${i}`;
	if (typeof value !== "object" || value === null) refuse(`${at} is ${show(value)}, expected an object`);
	const { id, from, to, kind, state, brief, provenance } = value as Record<string, unknown>;
	if (id !== undefined && typeof id !== "string") refuse(`${at} has id ${show(id)}, expected a string`);
	const start = ctx.resolve(from, `${at}'s from entry`);
	const last = ctx.resolve(to, `${at}'s to entry`);
	if (start > last) refuse(`${at} runs from ${ctx.label(start)} back to ${ctx.label(last)}`);
	if (!isFoldKind(kind)) refuse(`${at} has kind ${show(kind)}`);
	if (!isFoldState(state)) refuse(`${at} has state ${show(state)}`);
	if (!isProvenance(provenance)) refuse(`${at} has provenance ${show(provenance)}`);
	if (typeof brief !== "string") refuse(`${at} has brief ${show(brief)}, expected a string`);
	if (state !== "pending" && brief.trim() === "") refuse(`${at} is ${state} but has no brief`);
	if (briefLength(brief) > BRIEF_MAX_CHARS) refuse(`${at}'s brief is over the cap of ${BRIEF_MAX_CHARS} characters`);
	const problem = ctx.spanProblem(start, last + 1);
	if (problem) refuse(`${at}: ${problem}`);
	return { start, end: last + 1, kind, state, brief, provenance, ...(id === undefined ? {} : { id }) };
}

/** Check a saved lattice against the context and build it; refuses naming the first problem. */
export function loadStructure(
	core: LatticeCore,
	ctx: ContextIndex,
	saved: unknown,
): { structure: Structure; pins: Set<number> } {
	if (typeof saved !== "object" || saved === null) refuse(`a saved lattice must be an object, got ${show(saved)}`);
	const { format, v, folds, pins } = saved as Record<string, unknown>;
	if (format !== "pi-fold.lattice" || v !== 1) {
		refuse(
			`not a saved lattice this version reads: format ${show(format)}, v ${show(v)} (expected "pi-fold.lattice", 1)`,
		);
	}
	if (!Array.isArray(folds)) refuse(`a saved lattice's folds must be an array, got ${show(folds)}`);
	if (!Array.isArray(pins)) refuse(`a saved lattice's pins must be an array, got ${show(pins)}`);
	const pinned = new Set<number>();
	for (const entryId of pins) {
		const p = ctx.resolve(entryId, "pinned entry");
		if (pinned.has(p)) refuse(`pinned ${ctx.label(p)} is listed twice`);
		pinned.add(p);
	}
	const specs = folds.map((f, i) => savedSpec(ctx, f, i)).sort(compareSpans);
	const structure = buildStructure(core, ctx, specs, pinned);
	for (const spec of specs) {
		const built = foldAtSpan(structure, spec.start, spec.end)!;
		if (spec.id !== undefined && spec.id !== built.id) {
			refuse(
				`saved fold ${spec.id} over ${ctx.spanLabel(spec.start, spec.end)} now has the id ${built.id}: its content changed`,
			);
		}
	}
	return { structure, pins: pinned };
}
