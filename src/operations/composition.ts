// What the next request holds, by kind, for the fold bar: a pure reading of the runtime's open view
// (the lattice's window over the session's context entries). Each window item is estimated as the
// message Pi projects for it (a raw entry as itself, a fold as its brief on its first editable
// entry) with the core's estimator, the unit the runtime's occupancy meter uses. It runs at every
// turn boundary, so estimates are kept per entry id and per fold brief: a turn estimates only what
// it added, in one batch.
import { sessionEntryToContextMessages } from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import { briefContent, editableRole } from "../edits/drafts.ts";
import type { FoldView } from "../lattice/index.ts";
import type { Budget } from "../meter/budget.ts";
import { estimateMessages } from "../meter/estimate.ts";
import type { Model } from "../meter/meter.ts";
import type { Occupancy } from "../meter/occupancy.ts";
import type { FoldId } from "../vocabulary.ts";
import type { OpenView, ReadonlyLattice, RuntimeView } from "./view.ts";

export { multiplierText } from "../meter/budget.ts";

/** The parts of a window, in the order the bar draws them. */
export const PART_NAMES = ["deep", "folded", "pending", "raw", "pinned"] as const;
export type PartName = (typeof PART_NAMES)[number];

export interface WindowComposition {
	/**
	 * Estimated tokens (uncalibrated, the core's estimator) of each part:
	 * - deep: briefs of visible folds that hold other folds (consolidations, folds of folds);
	 * - folded: briefs of visible folds over raw entries only;
	 * - pending: raw entries inside a pending mark (they fold at the next commit);
	 * - raw: every other raw entry (the system prompt included);
	 * - pinned: pinned raw entries.
	 */
	parts: Record<PartName, number>;
	/** The sum of the parts. */
	total: number;
	/** The calibration ratio (real/estimated) the runtime applies for the session's model, 1 before any usage. */
	ratio: number;
	/** The serving budget (the runtime's, for the session's model and options), or null when there is none. */
	budget: number | null;
	/** Which limit sets the budget, and the model's window and price tier beside it; absent without a budget. */
	limit?: BudgetFacts;
	/** The runtime's own calibrated occupancy at its last turn boundary (status), or null before one. */
	occupancy: Occupancy | null;
	counts: {
		/** Folds the window shows as briefs, and how many of them are deep. */
		visibleFolds: number;
		deepFolds: number;
		/** Every fold of the lattice (pending marks included). */
		folds: number;
		pendingMarks: number;
		pins: number;
	};
}

/** What the bar says of the budget: the limit that sets it and the others beside it. */
export type BudgetFacts = Pick<Extract<Budget, { ok: true }>, "limit" | "reserve" | "window" | "tier" | "compaction">;

/**
 * Estimates already made for one session, reused across turns. Raw entries never change under an
 * id; a committed fold's brief is never rewritten, and the brief is part of the key anyway.
 */
export class CompositionCache {
	#sessionId: string | undefined;
	readonly #entries = new Map<string, number>();
	readonly #briefs = new Map<FoldId, { brief: string; tokens: number }>();
	/** Entry id -> position, for the context arrays it was built over (they grow in place between rebuilds). */
	#positions: { of: readonly unknown[]; seen: number; at: Map<string, number> } | undefined;

	/** Forget everything when the session changes. */
	forSession(sessionId: string): this {
		if (this.#sessionId !== sessionId) {
			this.#sessionId = sessionId;
			this.#entries.clear();
			this.#briefs.clear();
			this.#positions = undefined;
		}
		return this;
	}

	position(context: OpenView["context"], entryId: string): number | undefined {
		let p = this.#positions;
		if (!p || p.of !== context.entries || p.seen > context.entries.length) {
			p = { of: context.entries, seen: 0, at: new Map() };
			this.#positions = p;
		}
		for (; p.seen < context.entries.length; p.seen++) p.at.set(context.entries[p.seen].id, p.seen);
		return p.at.get(entryId);
	}

	entryTokens(id: string): number | undefined {
		return this.#entries.get(id);
	}

	setEntryTokens(id: string, tokens: number): void {
		this.#entries.set(id, tokens);
	}

	briefTokens(id: FoldId, brief: string): number | undefined {
		const known = this.#briefs.get(id);
		return known?.brief === brief ? known.tokens : undefined;
	}

	setBriefTokens(id: FoldId, brief: string, tokens: number): void {
		this.#briefs.set(id, { brief, tokens });
	}
}

/** One window item to estimate: the messages Pi projects for it, and where its estimate is kept. */
interface Pending {
	messages: unknown[];
	store: (tokens: number) => void;
}

/** A fold as Pi projects it: its brief as the content of its first editable entry. */
function briefMessages(fold: FoldView, context: OpenView["context"]): unknown[] {
	for (let p = fold.start; p < fold.end; p++) {
		const source = context.sources[p];
		const role = source && editableRole(source);
		if (!role) continue;
		const original = sessionEntryToContextMessages(source)[0];
		return original ? [{ ...original, content: briefContent(role, fold.brief) }] : [];
	}
	return [];
}

/** Folds covered by a pending mark (the mark itself and everything under it), by id. */
function underPendingMarks(lattice: ReadonlyLattice, pending: readonly FoldView[]): Set<FoldId> {
	const covered = new Set<FoldId>();
	// Marks are roots: walk down from each (a mark may hold committed folds it absorbed).
	const walk = (f: FoldView) => {
		covered.add(f.id);
		for (const c of f.children) {
			const sub = c.type === "fold" ? lattice.get(c.id) : undefined;
			if (sub) walk(sub);
		}
	};
	for (const f of pending) walk(f);
	return covered;
}

/**
 * The composition of the next request of the runtime's open session, or undefined when no session
 * is open. `model` is the session's model (for the calibration ratio, and the budget before the
 * runtime has measured one). `staged` is the lattice with the staged expands and refolds applied
 * (FoldActions.lattice()): what the next request shows, as the figure every display shows counts it.
 */
export function windowComposition(
	runtime: RuntimeView,
	cache: CompositionCache,
	model: Model,
	staged?: ReadonlyLattice,
): WindowComposition | undefined {
	const view = runtime.view;
	if (!view) return undefined;
	const { context } = view;
	const lattice = staged ?? view.lattice;
	cache.forSession(view.sessionId);
	const pins = new Set(lattice.pins());
	const pending = lattice.pending();
	const pendingCover = underPendingMarks(lattice, pending);
	const parts: Record<PartName, number> = { deep: 0, folded: 0, pending: 0, raw: 0, pinned: 0 };
	const counts = {
		visibleFolds: 0,
		deepFolds: 0,
		folds: lattice.foldCount,
		pendingMarks: pending.length,
		pins: pins.size,
	};
	const missing: Pending[] = [];

	for (const item of lattice.window()) {
		if (item.type === "fold") {
			const fold = lattice.get(item.id);
			if (!fold) continue;
			const part: PartName = fold.children.some((c) => c.type === "fold") ? "deep" : "folded";
			counts.visibleFolds++;
			if (part === "deep") counts.deepFolds++;
			const known = cache.briefTokens(fold.id, fold.brief);
			if (known !== undefined) parts[part] += known;
			else
				missing.push({
					messages: briefMessages(fold, context),
					store: (t) => {
						cache.setBriefTokens(fold.id, fold.brief, t);
						parts[part] += t;
					},
				});
			continue;
		}
		const id = item.entryId;
		if (context.hidden?.has(id)) continue; // an earlier commit's notice: hidden, not sent
		let part: PartName = "raw";
		if (pins.has(id)) part = "pinned";
		else {
			const inner = lattice.foldOf(id);
			if (inner && pendingCover.has(inner)) part = "pending";
		}
		const known = cache.entryTokens(id);
		if (known !== undefined) {
			parts[part] += known;
			continue;
		}
		const p = cache.position(context, id);
		const source = p === undefined ? undefined : context.sources[p];
		missing.push({
			messages: source ? sessionEntryToContextMessages(source) : [],
			store: (t) => {
				cache.setEntryTokens(id, t);
				parts[part] += t;
			},
		});
	}

	if (missing.length > 0) estimateInto(runtime.core, missing);

	let total = 0;
	for (const name of PART_NAMES) total += parts[name];
	// The session's model now (a model switch moves the budget before the next boundary measures).
	const served = runtime.budget(model);
	return {
		parts,
		total,
		ratio: runtime.ratio(model),
		budget: served.ok ? served.budget : null,
		...(served.ok
			? {
					limit: {
						limit: served.limit,
						reserve: served.reserve,
						...(served.window === undefined ? {} : { window: served.window }),
						...(served.tier ? { tier: served.tier } : {}),
					},
				}
			: {}),
		occupancy: runtime.occupancy,
		counts,
	};
}

/** Estimate every missing item in one call to the core, in the meter's unit (billed text, images by allowance). */
function estimateInto(core: PiFoldCore, missing: readonly Pending[]): void {
	const messages = missing.flatMap((m) => m.messages);
	const tokens = estimateMessages(core, messages);
	let i = 0;
	for (const m of missing) {
		let sum = 0;
		for (let k = 0; k < m.messages.length; k++) sum += tokens[i++];
		m.store(sum);
	}
}
