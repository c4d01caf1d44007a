// The operations on folds: the one validated code path behind the agent's tool actions, the
// /fold commands and the fold editor. Each operation either applies whole or refuses with a
// specific reason and changes nothing. Operations that leave the window as it is (brief, pin,
// unpin, unmark, reboundary, mark) apply to the lattice at once and are made durable at once as
// session records; operations that change the window (expand, refold, /fold) are staged and
// committed at the next boundary, in one batch with their records. Reading (peek, search, the
// overview) is in reading.ts and overview.ts.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { FoldLattice, FoldView } from "../lattice/index.ts";
import { wellFormedText } from "../lattice/index.ts";
import { windowCosts } from "../meter/arithmetic.ts";
import { FoldTexts } from "../search/fold-texts.ts";
import type { JournalOp } from "../session/journal.ts";
import { BRIEF_MAX_CHARS, errorMessage, type FoldId, type Outcome } from "../vocabulary.ts";
import { budgetOf, type Overview, openOf, overviewOf } from "./overview.ts";
import { pinEntries, unpinEntries } from "./pins.ts";
import {
	foldNamed,
	indexLinesOf,
	type PeekAnswer,
	type PeekOptions,
	peekFold,
	rawEntries,
	type SearchAnswer,
	type SearchRequest,
	type Slice,
	searchAll,
	shownTokensOf,
} from "./reading.ts";
import type { ReadonlyLattice, RuntimePort } from "./view.ts";

export type { Overview } from "./overview.ts";
export type { PeekAnswer } from "./reading.ts";

interface ExpandAnswer {
	fold: FoldView;
	/** Calibrated tokens the window grows (expand) or shrinks (refold, negative) by. */
	delta: number;
	next: number;
	budget: number;
}

function fail(reason: string): { ok: false; reason: string } {
	return { ok: false, reason };
}

/** A brief as given: a non-empty string within the cap, or why not (named `what`, and `it` for its length). */
function checkBrief(raw: unknown, what: string, it = what): Outcome<{ text: string; replaced: number }> {
	if (typeof raw !== "string" || raw.trim() === "") return fail(`${what} must be a non-empty string`);
	const length = [...raw].length;
	if (length > BRIEF_MAX_CHARS) return fail(`${it} has ${length} characters; a brief holds at most ${BRIEF_MAX_CHARS}`);
	return { ok: true, ...wellFormedText(raw) };
}

export class FoldActions {
	readonly #rt: RuntimePort;
	readonly #appendRecord: (op: JournalOp) => void;
	/** Verified text views of folds for search, kept between searches up to a fixed size. */
	readonly #texts = new FoldTexts();

	/** `appendRecord` makes a record durable now (pi.appendEntry). */
	constructor(rt: RuntimePort, appendRecord: (op: JournalOp) => void) {
		this.#rt = rt;
		this.#appendRecord = appendRecord;
	}

	/** The lattice as the next request will show it (staged edits applied), for listing. */
	lattice(): ReadonlyLattice | undefined {
		return this.#rt.stagedLattice();
	}

	/** Where the window stands, what the marks would free, the pins; for status and every answer. */
	overview(ctx: ExtensionContext): Outcome<{ overview: Overview }> {
		return overviewOf(this.#rt, ctx);
	}

	peek(id: unknown, opts: PeekOptions): Outcome<PeekAnswer> {
		return peekFold(this.#rt, id, opts);
	}

	/** Bytes of entry text the search views keep (at most FOLD_TEXTS_MAX_BYTES between searches). */
	get textViewBytes(): number {
		return this.#texts.bytes;
	}

	search(req: SearchRequest, opts: { toolCallId?: string } = {}): Outcome<{ answer: SearchAnswer }> {
		return searchAll(this.#rt, this.#texts, req, opts);
	}

	indexLines(lattice: ReadonlyLattice, ids: readonly FoldId[], n: number): string[] {
		return indexLinesOf(this.#rt, lattice, ids, n);
	}

	/** Calibrated tokens each context position shows in the window `lattice` makes. */
	shownTokens(lattice: ReadonlyLattice, ctx: ExtensionContext): number[] | undefined {
		return shownTokensOf(this.#rt, lattice, ctx);
	}

	/** `count` raw entries from context position `start` as readable text, the first `bytes` of it. */
	rawEntries(start: number, count: number, bytes: number): Outcome<{ slice: Slice }> {
		return rawEntries(this.#rt, start, count, bytes);
	}

	/**
	 * Run an op that leaves the window as it is: on a copy, then (only if whole) append its records,
	 * which the open session takes as it reads them back. With window edits staged, the op must also
	 * hold after them.
	 */
	#durable<T extends object>(op: JournalOp | readonly JournalOp[], run: (work: FoldLattice) => Outcome<T>): Outcome<T> {
		const o = openOf(this.#rt);
		if (!o.ok) return o;
		const work = o.open.lattice.clone();
		const r = run(work);
		if (!r.ok) return r;
		const staged = this.#rt.stagedLattice();
		if (staged && staged !== o.open.lattice) {
			const check = run(staged.clone());
			if (!check.ok)
				return fail(`${check.reason} (after the staged ${this.#rt.staged.map((s) => `${s.op} ${s.id}`).join(", ")})`);
		}
		this.#rt.record(Array.isArray(op) ? op : [op], work, this.#appendRecord);
		return r;
	}

	/** `replaced`: unpaired surrogates in `text` that became U+FFFD (a brief must be storable as UTF-8). */
	brief(id: unknown, raw: unknown): Outcome<{ fold: FoldView; replaced: number }> {
		const given = checkBrief(raw, '"text"');
		if (!given.ok) return given;
		const { text, replaced } = given;
		const o = openOf(this.#rt);
		if (!o.ok) return o;
		const f = foldNamed(this.#rt, o.open.lattice, id);
		if (!f.ok) return f;
		if (f.fold.state !== "pending") {
			return fail(
				`fold ${f.fold.id} is ${f.fold.state}: a standing fold's brief is never rewritten; brief works on pending marks`,
			);
		}
		return this.#durable<{ fold: FoldView; replaced: number }>({ v: 1, op: "brief", id: f.fold.id, text }, (work) => {
			const r = work.brief(f.fold.id, text);
			return r.ok ? { ok: true, fold: work.get(f.fold.id) as FoldView, replaced } : fail(r.reason);
		});
	}

	unmark(id: unknown): Outcome<{ fold: FoldView }> {
		const o = openOf(this.#rt);
		if (!o.ok) return o;
		const f = foldNamed(this.#rt, o.open.lattice, id);
		if (!f.ok) return f;
		if (f.fold.state !== "pending")
			return fail(`fold ${f.fold.id} is ${f.fold.state}, not a pending mark: nothing to withdraw`);
		const done = this.#durable<{ fold: FoldView }>({ v: 1, op: "unmark", id: f.fold.id }, (work) => {
			const r = work.unmark(f.fold.id);
			return r.ok ? { ok: true, fold: f.fold } : fail(r.reason);
		});
		if (done.ok) this.#rt.withdraw(o.open.lattice.entries.slice(f.fold.start, f.fold.end).map((e) => e.id));
		return done;
	}

	/** Hold entries raw through every commit. A pending mark named by id is withdrawn first, in the same step. */
	pin(ids: readonly string[], ctx: ExtensionContext): ReturnType<typeof pinEntries> {
		return pinEntries(this.#rt, (op, run) => this.#durable(op, run), ids, ctx);
	}

	unpin(ids: readonly string[]): Outcome<{ entryIds: string[] }> {
		return unpinEntries(this.#rt, (op, run) => this.#durable(op, run), ids);
	}

	/**
	 * Re-cut pending marks: several ids (or from/to entry ids) become exactly one pending mark over
	 * their whole span; one id returns that mark's span to raw.
	 */
	reboundary(args: {
		ids?: readonly string[];
		from?: string;
		to?: string;
	}): Outcome<{ fold?: FoldView; raw?: FoldView }> {
		const o = openOf(this.#rt);
		if (!o.ok) return o;
		const lattice = o.open.lattice;
		if (args.ids && args.ids.length === 1) {
			const f = foldNamed(this.#rt, lattice, args.ids[0]);
			if (!f.ok) return f;
			if (f.fold.state !== "pending") {
				return fail(
					`fold ${f.fold.id} is ${f.fold.state}: reboundary re-cuts pending marks only (use expand for a committed fold)`,
				);
			}
			const done = this.unmark(f.fold.id);
			return done.ok ? { ok: true, raw: done.fold } : done;
		}
		const span = args.ids ? this.#spanOf(lattice, args.ids) : { ok: true as const, from: args.from, to: args.to };
		if (!span.ok) return span;
		const { from, to } = span;
		if (typeof from !== "string" || typeof to !== "string")
			return fail("reboundary needs ids (fold ids) or from and to (entry ids)");
		return this.#durable<{ fold?: FoldView; raw?: FoldView }>({ v: 1, op: "reboundary", from, to }, (work) => {
			const r = work.reboundary(from, to);
			return r.ok ? { ok: true, fold: work.get(r.id) as FoldView } : fail(r.reason);
		});
	}

	/** The span several pending marks cover together, as its first and last entry ids. */
	#spanOf(lattice: FoldLattice, ids: readonly string[]): Outcome<{ from?: string; to?: string }> {
		const folds: FoldView[] = [];
		for (const id of ids) {
			const f = foldNamed(this.#rt, lattice, id);
			if (!f.ok) return f;
			if (f.fold.state !== "pending")
				return fail(`fold ${f.fold.id} is ${f.fold.state}: reboundary merges pending marks only`);
			folds.push(f.fold);
		}
		const start = Math.min(...folds.map((f) => f.start));
		const end = Math.max(...folds.map((f) => f.end));
		return { ok: true, from: lattice.entries[start].id, to: lattice.entries[end - 1].id };
	}

	/**
	 * Stage an expand (one level, outside-in) or a refold for the next boundary, refused when the
	 * expanded window would pass the serving budget.
	 */
	stageWindowEdit(op: "expand" | "refold", id: unknown, ctx: ExtensionContext): Outcome<ExpandAnswer> {
		const o = openOf(this.#rt);
		if (!o.ok) return o;
		const before = this.#rt.stagedLattice() ?? o.open.lattice;
		const f = foldNamed(this.#rt, before, id);
		if (!f.ok) return f;
		if (op === "expand" && f.fold.state !== "committed") {
			return fail(
				f.fold.state === "pending"
					? `fold ${f.fold.id} is a pending mark, not in the window yet: nothing to expand (peek reads it)`
					: `fold ${f.fold.id} is already expanded`,
			);
		}
		if (op === "refold" && f.fold.state !== "expanded")
			return fail(`fold ${f.fold.id} is ${f.fold.state}, not expanded: nothing to refold`);
		const after = before.clone();
		const r = op === "expand" ? after.expand(f.fold.id) : after.refold(f.fold.id);
		if (!r.ok) return fail(r.reason);
		const budget = budgetOf(this.#rt, ctx);
		if (!budget.ok) return budget;
		const over = this.overview(ctx);
		if (!over.ok) return over;
		const tokens = this.#rt.entryTokens;
		const total = (l: FoldLattice) => windowCosts(l, o.open.context, tokens).total;
		const delta = Math.ceil((total(after) - total(before)) * this.#rt.ratio(ctx.model));
		const next = over.overview.arithmetic.occupancy + delta;
		if (op === "expand" && next > budget.budget) {
			return fail(
				`expanding ${f.fold.id} would add ~${delta} tokens: the next request would be ~${next} > the budget of ${budget.budget} tokens (now ~${over.overview.arithmetic.occupancy}; budget: ${budget.why}); peek it instead (offset/bytes for a slice), or expand after a commit`,
			);
		}
		this.#rt.stage({ op, id: f.fold.id });
		return { ok: true, fold: after.get(f.fold.id) as FoldView, delta, next, budget: budget.budget };
	}

	/** /fold: commit staged marks at the next boundary; with ids, exactly that span as one fold. */
	foldNow(ids: readonly string[]): Outcome<{ marks: FoldId[]; refolds: FoldId[] }> {
		const o = openOf(this.#rt);
		if (!o.ok) return o;
		if (ids.length === 0) {
			const marks = o.open.lattice.pending().map((f) => f.id);
			if (marks.length === 0) return fail("no staged marks to fold (the frontier marks completed work as it goes)");
			this.#rt.requestFold();
			return { ok: true, marks, refolds: [] };
		}
		const lattice = this.#rt.stagedLattice() ?? o.open.lattice;
		const folds: FoldView[] = [];
		for (const id of ids) {
			const f = foldNamed(this.#rt, lattice, id);
			if (!f.ok) return f;
			if (f.fold.state === "committed") return fail(`fold ${f.fold.id} is already folded`);
			folds.push(f.fold);
		}
		const expanded = folds.filter((f) => f.state === "expanded");
		if (expanded.length > 0) {
			if (expanded.length !== folds.length)
				return fail("name either expanded folds (to refold) or pending marks (to fold), not both");
			for (const f of expanded) this.#rt.stage({ op: "refold", id: f.id });
			return { ok: true, marks: [], refolds: expanded.map((f) => f.id) };
		}
		let target = folds[0];
		if (folds.length > 1) {
			const merged = this.reboundary({ ids });
			if (!merged.ok) return merged;
			target = merged.fold as FoldView;
		}
		this.#rt.requestFold(new Set([target.id]));
		return { ok: true, marks: [target.id], refolds: [] };
	}

	/**
	 * A /fold asked for while Pi is idle, planned now (its folds durable at once) so the next
	 * request already shows it. When that cannot be done it still folds at the next turn: the reason
	 * is recorded as a problem and returned.
	 */
	async foldWhileIdle(ctx: ExtensionContext): Promise<Outcome<object>> {
		try {
			const early = await this.#rt.prepareFold(ctx);
			if (!early.ok) this.#rt.problem("fold", `shown at the next turn instead of the next request: ${early.reason}`);
			return early;
		} catch (err) {
			return fail(errorMessage(err));
		}
	}

	/**
	 * A person's mark (the fold editor's `m`): [from, to] becomes one pending mark, a "chapter" when
	 * it holds a user message, else a "tool-batch"; with a typed brief, that brief (kept verbatim).
	 * Recorded as a mark record and a brief record, in one step. `check` only validates: nothing is recorded.
	 */
	mark(
		fromEntryId: unknown,
		toEntryId: unknown,
		typed?: unknown,
		opts: { check?: boolean } = {},
	): Outcome<{ fold: FoldView }> {
		const given = typed === undefined ? undefined : checkBrief(typed, "a typed brief", "the brief");
		if (given && !given.ok) return given;
		const brief = given?.text;
		const o = openOf(this.#rt);
		if (!o.ok) return o;
		if (typeof fromEntryId !== "string" || typeof toEntryId !== "string")
			return fail("mark needs two entry ids (from and to)");
		const from = fromEntryId;
		const to = toEntryId;
		const entries = o.open.lattice.entries;
		const first = entries.findIndex((x) => x.id === from);
		const last = entries.findIndex((x) => x.id === to);
		const holdsUser = first >= 0 && entries.slice(first, last + 1).some((x) => x.role === "user");
		const kind = holdsUser ? "chapter" : "tool-batch";
		const trial = o.open.lattice.clone();
		const tried = trial.mark(from, to, kind);
		if (!tried.ok) return fail(tried.reason);
		if (opts.check) {
			// As the real mark is checked: also after the staged window edits.
			const staged = this.#rt.stagedLattice();
			const after = staged && staged !== o.open.lattice ? staged.clone().mark(from, to, kind) : tried;
			return after.ok ? { ok: true, fold: trial.get(tried.id) as FoldView } : fail(after.reason);
		}
		// Mark and brief land together or not at all.
		const ops: JournalOp[] = [{ v: 1, op: "mark", id: tried.id, kind, from, to }];
		if (brief !== undefined) ops.push({ v: 1, op: "brief", id: tried.id, text: brief });
		return this.#durable<{ fold: FoldView }>(ops, (work) => {
			const r = work.mark(from, to, kind);
			if (!r.ok) return fail(r.reason);
			const b = brief === undefined ? r : work.brief(r.id, brief);
			return b.ok ? { ok: true, fold: work.get(r.id) as FoldView } : fail(b.reason);
		});
	}
}
