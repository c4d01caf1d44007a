// Which pending marks a commit folds: what each would free (the tokens its span shows now minus
// its brief's, in the calibrated unit of the need), then the core's stalest-first selection until
// the need is met; under the cost model (a working set given), every mark outside it. A person's
// /fold takes every mark asked for; a peek's own result goes whatever it frees.
import type { ProjectedSessionEntry } from "@earendil-works/pi-coding-agent";
import { MARK_ELIGIBLE, type PiFoldCore } from "../../bindings/index.ts";
import { keepMarkBriefs, markBrief } from "../briefs/briefs.ts";
import type { EntryLookup } from "../briefs/span.ts";
import type { FoldLattice, FoldView } from "../lattice/index.ts";
import type { EntryTokens } from "../meter/entry-tokens.ts";
import { estimateMessages } from "../meter/estimate.ts";
import type { ContextEntries } from "../session/context-entries.ts";
import type { FoldId } from "../vocabulary.ts";

interface SelectInput {
	core: PiFoldCore;
	lattice: FoldLattice;
	context: ContextEntries;
	/** The boundary's projection (Pi's preview of the next request): what each span shows now. */
	projection: readonly ProjectedSessionEntry[];
	entriesById: EntryLookup;
	/**
	 * Deterministic briefs of pending marks already written (markBrief): kept from one commit
	 * to the next (grows with the new marks, loses the ones no longer pending).
	 */
	markBriefs?: Map<string, string>;
	/** The meter's per-entry estimates (kept across commits). */
	entryTokens?: EntryTokens;
	/** Calibrated tokens the commit must free, and the calibration ratio real/estimated. */
	need: number;
	ratio: number;
	/** A person's /fold: every pending mark (or every one in `only`), whatever `need` is. */
	all?: boolean;
	only?: ReadonlySet<FoldId>;
	/** Marks an earlier commit could not store: never chosen on the runtime's own initiative. */
	unstorable?: { has(id: FoldId): boolean };
	/** Marks ending after this position are not chosen on the runtime's own initiative (the raw working set). */
	eligibleEnd?: number;
}

interface Selection {
	/** The pending marks considered, and the brief each would show (in the same order). */
	pending: FoldView[];
	briefs: string[];
	/** Indices into `pending` of the marks to fold. */
	chosen: number[];
	/** Calibrated tokens the selection expects to free, and whether that meets the need. */
	freed: number;
	met: boolean;
}

/**
 * Estimated tokens each context entry of `wanted` contributes to the projection now (0 when
 * omitted). An entry shown as it is (its own message) takes the per-entry estimate `entryTokens`
 * keeps (the same estimator on the same message); only entries shown edited are estimated here.
 */
function projectedTokens(
	core: PiFoldCore,
	projection: readonly ProjectedSessionEntry[],
	wanted: ReadonlySet<string>,
	entryTokens?: EntryTokens,
): Map<string, number> {
	const out = new Map<string, number>();
	const edited: ProjectedSessionEntry[] = [];
	for (const pe of projection) {
		const source = pe.sourceEntry;
		if (!wanted.has(source.id)) continue;
		const asItIs = source.type === "message" && pe.messages.length === 1 && pe.messages[0] === source.message;
		if (asItIs && entryTokens) out.set(source.id, entryTokens.of([source])[0]);
		else edited.push(pe);
	}
	const tokens = estimateMessages(
		core,
		edited.flatMap((pe) => pe.messages),
	);
	let i = 0;
	for (const pe of edited) {
		let sum = 0;
		for (let k = 0; k < pe.messages.length; k++) sum += tokens[i++];
		out.set(pe.sourceEntry.id, sum);
	}
	return out;
}

/** The marks to fold; throws with the reason when there is nothing to fold. */
export function selectMarks(input: SelectInput): Selection {
	const { core, context, need, ratio } = input;
	const pending = input.lattice.pending().filter((f) => !input.only || input.only.has(f.id));
	if (pending.length === 0)
		throw new Error(input.only ? "none of the named marks is pending" : "no pending marks to commit");
	const wanted = new Set<string>();
	for (const f of pending) for (let p = f.start; p < f.end; p++) wanted.add(context.entries[p].id);
	const shown = projectedTokens(core, input.projection, wanted, input.entryTokens);
	const briefs = pending.map((f) =>
		f.provenance === "supplied" && f.brief !== ""
			? f.brief
			: markBrief(input.lattice, f, input.entriesById, input.markBriefs),
	);
	if (input.markBriefs && !input.only) keepMarkBriefs(input.markBriefs, pending);
	const briefTokens = estimateMessages(
		core,
		briefs.map((text) => ({ role: "assistant", content: [{ type: "text", text }] })),
	);
	const freedOf = pending.map((f, i) => {
		let span = 0;
		for (let p = f.start; p < f.end; p++) span += shown.get(context.entries[p].id) ?? 0;
		return Math.max(0, Math.floor((span - briefTokens[i]) * ratio));
	});
	// A mark an earlier commit could not store is left to a person's /fold, or to a reopen.
	const unstorable = input.all ? undefined : input.unstorable;
	const eligibleEnd = input.all ? Number.POSITIVE_INFINITY : (input.eligibleEnd ?? Number.POSITIVE_INFINITY);
	const flags = pending.map((f) => (unstorable?.has(f.id) || f.end > eligibleEnd ? 0 : MARK_ELIGIBLE));
	// The cost model decided on every mark outside the working set, by its own estimate of what they
	// free: all of them fold, so a higher figure here cannot stop the selection short of its decision.
	const selection =
		input.eligibleEnd !== undefined && !input.all
			? everyEligible(flags, freedOf, need)
			: core.selectCommit({ position: pending.map((f) => f.start), tokensFreed: freedOf, flags }, need);
	// A peek's own result was marked to go at the next commit, whatever it frees.
	const chosen = input.all
		? pending.map((_, i) => i)
		: [
				...new Set([
					...selection.chosen,
					...pending.flatMap((f, i) => (f.kind === "peek" && !unstorable?.has(f.id) ? [i] : [])),
				]),
			];
	if (chosen.length === 0) throw new Error(`no mark frees anything (need ${need} tokens)`);
	return { pending, briefs, chosen, freed: selection.freed, met: selection.met };
}

/** Every mark flagged eligible, and what they free together against `need`. */
function everyEligible(flags: readonly number[], freedOf: readonly number[], need: number) {
	const chosen = flags.flatMap((f, i) => (f & MARK_ELIGIBLE ? [i] : []));
	const freed = chosen.reduce((sum, i) => sum + freedOf[i], 0);
	return { chosen, freed, met: freed >= need };
}
