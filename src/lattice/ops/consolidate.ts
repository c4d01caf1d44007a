// consolidate: two or more adjacent committed roots (with the raw gap leaves between them, at most
// maxGap per gap) become the children of one new committed fold of kind "consolidation". It is the
// runtime's operation (done at a commit), so its brief is the runtime's: provenance "deterministic"
// unless the caller says otherwise.
import type { BriefProvenance, FoldId } from "../../fold-types.ts";
import { describeFold, type FoldChild, type FoldLeaf, type FoldNode, type FoldSpec } from "../fold.ts";
import { BRIEF_MAX_CHARS, briefText, isProvenance } from "../fold-values.ts";
import { planRoots } from "../grow.ts";
import { refuse, show } from "../outcome.ts";
import { rootOf } from "../structure.ts";
import { leavesOf, viewOf } from "../views.ts";
import { type Change, foldList, idsOf, type LatticeData } from "./common.ts";

/** The consolidation as planned, before it is linked in: what its brief is written from. */
interface PlannedConsolidation {
	id: FoldId;
	kind: "consolidation";
	children: FoldChild[];
	leaves: FoldLeaf[];
}

export interface ConsolidateOptions {
	/**
	 * The consolidation's brief, or its writer, given the fold as planned (its id is known only
	 * then); default: a plain index of its children.
	 */
	brief?: string | ((fold: PlannedConsolidation) => string);
	/** Who wrote `brief`; default "deterministic" (the runtime's brief writer). */
	provenance?: BriefProvenance;
	/** The most raw entries allowed between two consecutive roots; default 0. */
	maxGap?: number;
}

export interface ConsolidateResult {
	id: FoldId;
	/** The roots it took, in transcript order. */
	children: FoldId[];
	/** The raw entries between them that it took too. */
	gapEntries: string[];
}

/** The default brief: an index of the children, capped. */
function indexBrief(roots: readonly FoldNode[], gap: number): string {
	const text = `Consolidation of ${roots.length} folds: ${idsOf(roots).join(", ")}${gap > 0 ? `, with ${gap} raw entries between them` : ""}.`;
	return text.length <= BRIEF_MAX_CHARS ? text : `${text.slice(0, BRIEF_MAX_CHARS - 3)}...`;
}

export function consolidate(
	d: LatticeData,
	rootIds: unknown,
	opts: ConsolidateOptions = {},
): Change<ConsolidateResult> {
	const roots = foldList(d, rootIds, "consolidate");
	if (roots.length < 2) refuse(`consolidate takes two or more folds, got ${roots.length}`);
	const maxGap = opts?.maxGap ?? 0;
	if (typeof maxGap !== "number" || !Number.isSafeInteger(maxGap) || maxGap < 0) {
		refuse(`maxGap must be a non-negative integer, got ${show(maxGap)}`);
	}
	const provenance = opts?.provenance ?? "deterministic";
	if (!isProvenance(provenance)) refuse(`unknown brief provenance ${show(provenance)}: deterministic or supplied`);
	const writer = typeof opts?.brief === "function" ? opts.brief : undefined;
	const given = opts?.brief === undefined || writer ? undefined : briefText(opts.brief);
	for (const f of roots) {
		if (f.parent !== -1)
			refuse(`${describeFold(f)} is nested in ${describeFold(d.structure.nodes[f.parent])}: consolidate takes roots`);
		if (f.state !== "committed")
			refuse(`${describeFold(f)} is not collapsed: consolidate takes visible committed roots`);
	}
	roots.sort((a, b) => a.start - b.start);
	const gapEntries: string[] = [];
	for (let i = 1; i < roots.length; i++) {
		const a = roots[i - 1];
		const b = roots[i];
		if (b.start - a.end > maxGap) {
			refuse(
				`${describeFold(a)} and ${describeFold(b)} are not adjacent: ${b.start - a.end} ${b.start - a.end === 1 ? "entry lies" : "entries lie"} between them, maxGap is ${maxGap}`,
			);
		}
		for (let p = a.end; p < b.start; p++) {
			const inner = d.structure.innermost[p];
			if (inner !== -1) {
				const root = rootOf(d.structure, d.structure.nodes[inner]);
				refuse(
					`${describeFold(root)} lies between ${a.id} and ${b.id}: list it too, or consolidate on either side of it`,
				);
			}
			if (d.pins.has(p))
				refuse(`the gap between ${a.id} and ${b.id} holds pinned ${d.ctx.label(p)}: pinned entries never fold`);
			gapEntries.push(d.ctx.at(p).id);
		}
	}
	const s = roots[0].start;
	const e = roots[roots.length - 1].end;
	const problem = d.ctx.spanProblem(s, e);
	if (problem) refuse(problem);
	const spec: FoldSpec = {
		start: s,
		end: e,
		kind: "consolidation",
		state: "committed",
		brief: given ?? indexBrief(roots, gapEntries.length),
		provenance: given === undefined && !writer ? "deterministic" : provenance,
	};
	const planned = planRoots(d.core, d.ctx, d.structure, d.pins, [spec]);
	const made = planned.made[0];
	if (writer) {
		const view = viewOf(made, d.structure, d.ctx);
		made.brief = briefText(
			writer({ id: made.id, kind: "consolidation", children: view.children, leaves: leavesOf(made, d.ctx) }),
		);
	}
	return { result: { id: made.id, children: idsOf(roots), gapEntries }, apply: planned.apply };
}
