// The fold lattice over one branch's context: folds over contiguous spans of entries, nested
// without partial overlap. Every operation applies whole or refuses with a reason and changes
// nothing: an operation computes its change first (validated by the Wasm core whenever the fold
// set changes), and only a complete change is applied. Growth (an append, new marks, a
// consolidation) is applied in place at the cost of what it adds; removing folds rebuilds.
import type { FoldId } from "../fold-types.ts";
import { errorMessage } from "../values/error-message.ts";
import { ContextIndex, type LatticeEntry, type ToolBatches } from "./entries.ts";
import type { FoldLeaf, FoldView, RootSpan, WindowItem } from "./fold.ts";
import { loadStructure, type SavedLattice, saveOf } from "./load.ts";
import { type BriefResult, brief, setDeterministicBrief } from "./ops/briefs.ts";
import type { Change, LatticeData } from "./ops/common.ts";
import { type ConsolidateOptions, type ConsolidateResult, consolidate } from "./ops/consolidate.ts";
import { type ExtendResult, extend } from "./ops/extend.ts";
import {
	type MarkManyResult,
	type MarkOptions,
	type MarkRequest,
	type MarkResult,
	mark,
	markMany,
	type UnmarkResult,
	unmark,
} from "./ops/marks.ts";
import { type PinResult, pin, unpin } from "./ops/pins.ts";
import { type ReboundaryOptions, type ReboundaryResult, reboundary } from "./ops/reboundary.ts";
import { type CommitResult, commit, type ExpandResult, expand, refold } from "./ops/states.ts";
import { type Outcome, Refused } from "./outcome.ts";
import {
	buildStructure,
	columnsOf,
	copyStructure,
	type LatticeColumns,
	type LatticeCore,
	preorderOf,
	type Structure,
} from "./structure.ts";
import { type LatticeSnapshot, leavesOf, pinnedIds, snapshotOf, viewOf } from "./views.ts";
import { visibleRootsOf, windowOf } from "./window.ts";

/** Run a step that may refuse (throw `Refused`); anything else thrown is reported, never rethrown. */
function attempt<T extends object>(op: string, step: () => T): Outcome<T> {
	try {
		return { ok: true, ...step() };
	} catch (err) {
		if (err instanceof Refused) return { ok: false, reason: `${op}: ${err.message}` };
		return {
			ok: false,
			reason: `${op}: internal error, nothing changed: ${errorMessage(err)}`,
		};
	}
}

export class FoldLattice {
	readonly #core: LatticeCore;
	#ctx: ContextIndex;
	#structure: Structure;
	#pins: ReadonlySet<number>;

	private constructor(core: LatticeCore, ctx: ContextIndex, structure: Structure, pins: ReadonlySet<number>) {
		this.#core = core;
		this.#ctx = ctx;
		this.#structure = structure;
		this.#pins = pins;
	}

	/** An empty lattice over a context; refuses a malformed entry list, naming the entry. */
	static create(core: LatticeCore, entries: readonly LatticeEntry[]): Outcome<{ lattice: FoldLattice }> {
		return attempt("create", () => {
			const ctx = new ContextIndex(entries);
			return { lattice: new FoldLattice(core, ctx, buildStructure(core, ctx, [], []), new Set()) };
		});
	}

	/** A lattice restored from `save()` output over a (possibly rebuilt) context, checked whole. */
	static load(
		core: LatticeCore,
		entries: readonly LatticeEntry[],
		saved: SavedLattice,
	): Outcome<{ lattice: FoldLattice }> {
		return attempt("load", () => {
			const ctx = new ContextIndex(entries);
			const { structure, pins } = loadStructure(core, ctx, saved);
			return { lattice: new FoldLattice(core, ctx, structure, pins) };
		});
	}

	/**
	 * An independent copy, O(folds): a change on either never shows on the other. It shares what
	 * no operation writes in place (the context index, which only ever grows into a new index; the
	 * nodes' child lists; the pin set, replaced whole) and copies the structure, which growth
	 * changes in place, and the fold nodes, whose state, kind, brief and parent change in place.
	 */
	clone(): FoldLattice {
		return new FoldLattice(this.#core, this.#ctx, copyStructure(this.#structure, this.#ctx.size), this.#pins);
	}

	get #data(): LatticeData {
		return { core: this.#core, ctx: this.#ctx, structure: this.#structure, pins: this.#pins };
	}

	/** Compute a change against the current state and, only if it is whole, apply it. */
	#run<T extends object>(op: string, compute: (d: LatticeData) => Change<T>): Outcome<T> {
		return attempt(op, () => {
			const change = compute(this.#data);
			if (change.structure) this.#structure = change.structure;
			if (change.pins) this.#pins = change.pins;
			change.apply?.();
			return change.result;
		});
	}

	// ---- operations ----

	/** A new pending mark over [from, to]. See ops/marks.ts for the nesting rules. */
	mark(fromEntryId: string, toEntryId: string, kind: string, opts?: MarkOptions): Outcome<MarkResult> {
		return this.#run("mark", (d) => mark(d, fromEntryId, toEntryId, kind, opts));
	}

	/** Many marks at once, all or nothing (one structure build): replaying records, a frontier pass. */
	markMany(requests: readonly MarkRequest[]): Outcome<MarkManyResult> {
		return this.#run("markMany", (d) => markMany(d, requests));
	}

	/** The agent's brief on a pending fold (verbatim, provenance "supplied"). */
	brief(id: FoldId, text: string): Outcome<BriefResult> {
		return this.#run("brief", (d) => brief(d, id, text));
	}

	/** The runtime's brief on a pending fold the agent has not briefed. */
	setDeterministicBrief(id: FoldId, text: string): Outcome<BriefResult> {
		return this.#run("setDeterministicBrief", (d) => setDeterministicBrief(d, id, text));
	}

	/** Withdraw a pending mark; the folds it held become roots again. */
	unmark(id: FoldId): Outcome<UnmarkResult> {
		return this.#run("unmark", (d) => unmark(d, id));
	}

	/** Re-cut the marks so exactly one pending mark covers exactly [from, to]. See ops/reboundary.ts. */
	reboundary(fromEntryId: string, toEntryId: string, opts?: ReboundaryOptions): Outcome<ReboundaryResult> {
		return this.#run("reboundary", (d) => reboundary(d, fromEntryId, toEntryId, opts));
	}

	pin(entryIds: readonly string[]): Outcome<PinResult> {
		return this.#run("pin", (d) => pin(d, entryIds));
	}

	unpin(entryIds: readonly string[]): Outcome<PinResult> {
		return this.#run("unpin", (d) => unpin(d, entryIds));
	}

	/** Pending -> committed, all listed marks or none. */
	commit(ids: readonly FoldId[]): Outcome<CommitResult> {
		return this.#run("commit", (d) => commit(d, ids));
	}

	/** A visible committed fold shows its direct children. */
	expand(id: FoldId): Outcome<ExpandResult> {
		return this.#run("expand", (d) => expand(d, id));
	}

	/** An expanded fold collapses again. */
	refold(id: FoldId): Outcome<ExpandResult> {
		return this.#run("refold", (d) => refold(d, id));
	}

	/** Adjacent committed roots become one committed "consolidation" fold. */
	consolidate(rootIds: readonly FoldId[], opts?: ConsolidateOptions): Outcome<ConsolidateResult> {
		return this.#run("consolidate", (d) => consolidate(d, rootIds, opts));
	}

	/**
	 * Append context entries after the last one (the session grew); folds, ids and pins stay as
	 * they are. Refuses a malformed entry, a duplicate id, or an entry that would break a fold.
	 */
	extend(entries: readonly LatticeEntry[]): Outcome<ExtendResult> {
		return attempt("extend", () => {
			const change = extend(this.#data, entries);
			this.#ctx = change.ctx;
			change.apply?.();
			return change.result;
		});
	}

	// ---- queries ----

	/** The entries, in order (an array of this lattice's own, copied once: prefer size and entryAt per turn). */
	get entries(): readonly LatticeEntry[] {
		return this.#ctx.entries;
	}

	/** How many entries the lattice is over. */
	get size(): number {
		return this.#ctx.size;
	}

	/** The entry at position p (p < size). */
	entryAt(p: number): LatticeEntry {
		return this.#ctx.at(p);
	}

	get(id: FoldId): FoldView | undefined {
		const f = this.#structure.byId.get(id);
		return f && viewOf(f, this.#structure, this.#ctx);
	}

	/**
	 * The root folds that end after position `from`, in transcript order: their spans and states
	 * only (no FoldView with its children is built), for callers that read the top level often.
	 */
	rootSpans(from = 0): RootSpan[] {
		const { roots, nodes } = this.#structure;
		// Roots are disjoint and in order, so their ends ascend: the first ending after `from` by bisection.
		let lo = 0;
		let hi = roots.length;
		while (lo < hi) {
			const mid = (lo + hi) >>> 1;
			if (nodes[roots[mid]].end <= from) lo = mid + 1;
			else hi = mid;
		}
		const out: RootSpan[] = [];
		for (let i = lo; i < roots.length; i++) {
			const f = nodes[roots[i]];
			out.push({ id: f.id, state: f.state, start: f.start, end: f.end });
		}
		return out;
	}

	/** The context's tool batches (read-only; the index of the entries the lattice has now). */
	get tools(): ToolBatches {
		return this.#ctx;
	}

	/** Every fold, in pre-order (transcript order, outer before inner). */
	folds(): FoldView[] {
		return preorderOf(this.#structure).map((f) => viewOf(f, this.#structure, this.#ctx));
	}

	/** How many folds the lattice holds (pending marks included). */
	get foldCount(): number {
		return this.#structure.byId.size;
	}

	/** The pending marks, in transcript order (marks are always roots). */
	pending(): FoldView[] {
		const { roots, nodes } = this.#structure;
		return roots.flatMap((slot) =>
			nodes[slot].state === "pending" ? [viewOf(nodes[slot], this.#structure, this.#ctx)] : [],
		);
	}

	/** Pinned entry ids, in transcript order. */
	pins(): string[] {
		return pinnedIds(this.#pins, this.#ctx);
	}

	/** Levels of folds in a fold (1 when it holds leaves only), undefined for an unknown id. */
	height(id: FoldId): number | undefined {
		return this.#structure.byId.get(id)?.height;
	}

	/** Every entry a fold covers, in order, with its hash. */
	leavesOf(id: FoldId): FoldLeaf[] | undefined {
		const f = this.#structure.byId.get(id);
		return f && leavesOf(f, this.#ctx);
	}

	/** An entry's position in the context, undefined for an unknown entry. */
	position(entryId: string): number | undefined {
		return this.#ctx.position(entryId);
	}

	/** The innermost fold covering an entry, null when it is raw, undefined for an unknown entry. */
	foldOf(entryId: string): FoldId | null | undefined {
		const p = this.#ctx.position(entryId);
		if (p === undefined) return undefined;
		const i = this.#structure.innermost[p];
		return i === -1 ? null : this.#structure.nodes[i].id;
	}

	/** Exactly what the model sees, in order. */
	window(): WindowItem[] {
		return windowOf(this.#structure, this.#ctx);
	}

	/** The committed roots in transcript order (what consolidate takes). */
	visibleRoots(): FoldId[] {
		return visibleRootsOf(this.#structure);
	}

	/** Pre-order columns, as validateLattice takes them. */
	columns(): LatticeColumns {
		return columnsOf(this.#structure, this.#ctx.size);
	}

	snapshot(): LatticeSnapshot {
		return snapshotOf(this.#structure, this.#pins, this.#ctx);
	}

	/** Plain data for `FoldLattice.load`. */
	save(): SavedLattice {
		return saveOf(this.#structure, this.#pins, this.#ctx);
	}
}
