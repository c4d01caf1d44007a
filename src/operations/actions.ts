// The runtime's public operations on folds (SPEC 5 and 7): the one validated code path behind the
// agent's tool actions, the /fold commands and the fold editor. Each operation either applies whole
// or refuses with a specific reason and changes nothing. Operations that leave the window as it is
// (brief, pin, unpin, unmark, reboundary) apply to the lattice at once and are made durable at once
// as session records; operations that change the window (expand, refold, /fold) are staged and
// committed at the next boundary, in one batch with their records.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { indexChild } from "../briefs/briefs.ts";
import { childSummary } from "../briefs/index-lines.ts";
import { type FoldId, isFoldId } from "../fold-types.ts";
import type { FoldLattice, FoldView } from "../lattice/index.ts";
import { BRIEF_MAX_CHARS, wellFormedText } from "../lattice/index.ts";
import {
	type Arithmetic,
	arithmeticOf,
	type EntryTokens,
	type MarkEstimate,
	markEstimates,
	windowCosts,
} from "../meter/arithmetic.ts";
import { budgetText, budgetWhy } from "../meter/budget.ts";
import { modelKey } from "../meter/occupancy.ts";
import type { FoldRuntime, Open } from "../runtime/runtime.ts";
import { FoldTexts } from "../search/fold-texts.ts";
import { checkQuery, type SearchAnswer, type SearchRequest, searchFolds } from "../search/search.ts";
import { type FoldSource, readFoldSource, type Slice, sliceUtf8, sourceView } from "../session/fold-source.ts";
import type { JournalOp } from "../session/journal.ts";
import { type ContentsLine, peekContents } from "./peek-contents.ts";

/** Peek's default slice (a few thousand tokens) and largest slice, in UTF-8 bytes of the text view. */
export const PEEK_DEFAULT_BYTES = 8_000;
export const PEEK_MAX_BYTES = 200_000;

export type Done<T> = ({ ok: true } & T) | { ok: false; reason: string };

export interface Overview {
	arithmetic: Arithmetic;
	marks: MarkEstimate[];
	/** Pinned entries, their calibrated tokens, and the cap on them. */
	pins: { entryIds: string[]; tokens: number; cap: number };
	/** The budget with which limit sets it and why (budgetText), e.g. "272,000 (price tier: 2x above 272,000; window 400,000)". */
	budget: string;
}

export interface PeekAnswer {
	fold: FoldView;
	slice: Slice;
	verifiedBy: FoldSource["verifiedBy"];
	sourceBytes: number;
	leaves: number;
	/** A peek from the start: the fold's children or entries with their offsets in the text view. */
	contents?: ContentsLine[];
	/** The core's token estimate of the whole text view. */
	tokens: number;
}

export interface ExpandAnswer {
	fold: FoldView;
	/** Calibrated tokens the window grows (expand) or shrinks (refold, negative) by. */
	delta: number;
	next: number;
	budget: number;
}

/** Pins may hold at most this share of what a commit lands at: the rest must stay foldable. */
export const PINNED_SHARE_OF_MIN_TARGET = 0.5;

function fail(reason: string): { ok: false; reason: string } {
	return { ok: false, reason };
}

export class FoldActions {
	readonly #rt: FoldRuntime;
	readonly #appendRecord: (op: JournalOp) => void;
	readonly #tokens: EntryTokens;
	/** Verified text views of folds, read once each, for search. */
	readonly #texts = new FoldTexts();

	/** `appendRecord` makes a record durable now (pi.appendEntry). */
	constructor(rt: FoldRuntime, appendRecord: (op: JournalOp) => void) {
		this.#rt = rt;
		this.#appendRecord = appendRecord;
		this.#tokens = rt.entryTokens;
	}

	#open(): Done<{ open: Readonly<Open> }> {
		const open = this.#rt.view;
		return open ? { ok: true, open } : fail("no session is open in pi-fold yet (see status problems)");
	}

	#ratio(ctx: ExtensionContext): number {
		return this.#rt.meter.calibration.ratioFor(modelKey(ctx.model));
	}

	#budget(ctx: ExtensionContext): Done<{ budget: number; text: string; why: string }> {
		const b = this.#rt.budgetFor(ctx.model);
		return b.ok
			? { ok: true, budget: b.budget, text: budgetText(b), why: budgetWhy(b) }
			: fail(`no serving budget: ${b.reason}`);
	}

	#fold(lattice: FoldLattice, id: unknown): Done<{ fold: FoldView }> {
		if (!isFoldId(id)) return fail(`${JSON.stringify(id)} is not a fold id (f + 10 hex digits)`);
		// An id recorded before an entry's bytes changed in the session file still names its fold.
		const fold = lattice.get(this.#rt.view?.aliases.get(id) ?? id);
		return fold ? { ok: true, fold } : fail(`unknown fold ${id} (status lists every fold with detail "tree")`);
	}

	/** The lattice as the next request will show it (staged edits applied), for listing. */
	lattice(): FoldLattice | undefined {
		return this.#rt.stagedLattice();
	}

	/** Where the window stands, what the marks would free, the pins; for status and every answer. */
	overview(ctx: ExtensionContext): Done<{ overview: Overview }> {
		const o = this.#open();
		if (!o.ok) return o;
		const budget = this.#budget(ctx);
		if (!budget.ok) return budget;
		const lattice = this.#rt.stagedLattice() ?? o.open.lattice;
		const ratio = this.#ratio(ctx);
		const costs = windowCosts(lattice, o.open.context, this.#tokens);
		const marks = markEstimates(lattice, o.open.context, this.#tokens, ratio, costs);
		const measured = this.#rt.occupancy?.tokens;
		// The measurement is the window as the last boundary saw it: add what edits applied at that
		// boundary and edits staged since will change, so an expand counts the ones before it.
		const staged =
			lattice === o.open.lattice ? 0 : costs.total - windowCosts(o.open.lattice, o.open.context, this.#tokens).total;
		const occupancy =
			measured === undefined
				? Math.ceil(costs.total * ratio)
				: measured + Math.ceil(this.#rt.unmeasuredTokens * ratio) + Math.ceil(staged * ratio);
		const pinIds = lattice.pins();
		const pinned = new Set(pinIds);
		let pinTokens = 0;
		o.open.context.entries.forEach((e, p) => {
			if (pinned.has(e.id)) pinTokens += costs.shownAt[p];
		});
		return {
			ok: true,
			overview: {
				arithmetic: arithmeticOf(occupancy, budget.budget, this.#rt.settings.thresholds, marks),
				marks,
				pins: {
					entryIds: pinIds,
					tokens: Math.ceil(pinTokens * ratio),
					cap: Math.floor(this.#rt.settings.thresholds.minTarget * PINNED_SHARE_OF_MIN_TARGET * budget.budget),
				},
				budget: budget.text,
			},
		};
	}

	/** A fold's exact, verified source as text (a slice of it); never edits the window. */
	peek(
		id: unknown,
		opts: { offset?: number; bytes?: number; ephemeral?: boolean; toolCallId?: string; ctx?: ExtensionContext },
	): Done<PeekAnswer> {
		const o = this.#open();
		if (!o.ok) return o;
		const lattice = o.open.lattice;
		const f = this.#fold(lattice, id);
		if (!f.ok) return f;
		const read = readFoldSource({ ...o.open, core: this.#rt.core }, f.fold.id);
		if (!read.ok) return read;
		const view = sourceView(read.source, lattice);
		const text = view.text;
		const offset = opts.offset ?? 0;
		const total = new TextEncoder().encode(text).length;
		if (offset > total) return fail(`offset ${offset} is past the end of fold ${f.fold.id}'s text (${total} bytes)`);
		const slice = sliceUtf8(text, offset, Math.min(opts.bytes ?? PEEK_DEFAULT_BYTES, PEEK_MAX_BYTES));
		if (opts.ephemeral === false && opts.ctx) {
			// The result will be pinned: it must fit under the same cap as any pin.
			const over = this.overview(opts.ctx);
			if (!over.ok) return over;
			const pins = over.overview.pins;
			const adding = Math.ceil(this.#tokens.brief(slice.text) * this.#ratio(opts.ctx));
			if (pins.tokens + adding > pins.cap) {
				return fail(
					`ephemeral: false would pin this peek's result (~${adding} tokens) on top of ~${pins.tokens} pinned, over the cap of ${pins.cap}: peek a smaller slice (bytes) or let it fold (ephemeral true)`,
				);
			}
		}
		if (opts.toolCallId) this.#rt.followPeek({ toolCallId: opts.toolCallId, ephemeral: opts.ephemeral ?? true });
		return {
			ok: true,
			fold: f.fold,
			slice,
			verifiedBy: read.source.verifiedBy,
			sourceBytes: read.source.bytes,
			leaves: read.source.leaves.length,
			tokens: this.#rt.core.estimateTokens(text),
			...(offset === 0
				? {
						contents: peekContents(
							f.fold,
							view,
							read.source.leaves.map((l) => l.text),
							lattice,
						),
					}
				: {}),
		};
	}

	/** What each fold holds, in the words of an index line (tools, principal arguments, notes), within `n` characters. */
	indexLines(lattice: FoldLattice, ids: readonly FoldId[], n: number): string[] {
		const sources = this.#rt.view?.context.sources ?? [];
		const byId = new Map(sources.map((s) => [s.id, s]));
		return ids.map((id) => childSummary(indexChild(id, lattice.get(id), lattice.leavesOf(id) ?? [], byId), n));
	}

	/**
	 * Search every fold's verified text view (search.ts). Like a peek it never edits the window; a
	 * tool call's result is marked to fold at the next commit.
	 */
	search(req: SearchRequest, opts: { toolCallId?: string } = {}): Done<{ answer: SearchAnswer }> {
		const o = this.#open();
		if (!o.ok) return o;
		const checked = checkQuery(req.query, req.regex);
		if (!checked.ok) return checked;
		const answer = searchFolds(o.open, this.#texts, this.#rt.core, req, checked);
		if (opts.toolCallId) this.#rt.followPeek({ toolCallId: opts.toolCallId, ephemeral: true });
		return { ok: true, answer };
	}

	/**
	 * Run an op that leaves the window as it is: on a copy, then (only if whole) record it durably
	 * and swap the copy in. With window edits staged, the op must also hold after them.
	 */
	#durable<T>(op: JournalOp | readonly JournalOp[], run: (work: FoldLattice) => Done<T>): Done<T> {
		const o = this.#open();
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
		for (const each of Array.isArray(op) ? op : [op]) this.#appendRecord(each);
		this.#rt.adopt(work);
		return r;
	}

	/** `replaced`: unpaired surrogates in `text` that became U+FFFD (a brief must be storable as UTF-8). */
	brief(id: unknown, raw: unknown): Done<{ fold: FoldView; replaced: number }> {
		if (typeof raw !== "string" || raw.trim() === "") return fail('"text" must be a non-empty string');
		if ([...raw].length > BRIEF_MAX_CHARS) {
			return fail(`"text" has ${[...raw].length} characters; a brief holds at most ${BRIEF_MAX_CHARS}`);
		}
		const { text, replaced } = wellFormedText(raw);
		const o = this.#open();
		if (!o.ok) return o;
		const f = this.#fold(o.open.lattice, id);
		if (!f.ok) return f;
		if (f.fold.state !== "pending") {
			return fail(
				`fold ${f.fold.id} is ${f.fold.state}: a standing fold's brief is never rewritten; brief works on pending marks`,
			);
		}
		return this.#durable({ v: 1, op: "brief", id: f.fold.id, text }, (work) => {
			const r = work.brief(f.fold.id, text);
			return r.ok ? { ok: true, fold: work.get(f.fold.id) as FoldView, replaced } : fail(r.reason);
		});
	}

	unmark(id: unknown): Done<{ fold: FoldView }> {
		const o = this.#open();
		if (!o.ok) return o;
		const f = this.#fold(o.open.lattice, id);
		if (!f.ok) return f;
		if (f.fold.state !== "pending")
			return fail(`fold ${f.fold.id} is ${f.fold.state}, not a pending mark: nothing to withdraw`);
		const done = this.#durable({ v: 1, op: "unmark", id: f.fold.id }, (work) => {
			const r = work.unmark(f.fold.id);
			return r.ok ? { ok: true, fold: f.fold } : fail(r.reason);
		});
		if (done.ok) this.#rt.withdraw(o.open.lattice.entries.slice(f.fold.start, f.fold.end).map((e) => e.id));
		return done;
	}

	/**
	 * Entry ids named directly, or by a pending mark's id (its entries, and the mark to withdraw so
	 * they can stay raw). A standing fold's entries are folded: pins hold raw entries only.
	 */
	#entryIds(lattice: FoldLattice, ids: readonly string[]): Done<{ entryIds: string[]; marks: FoldId[] }> {
		const out: string[] = [];
		const marks: FoldId[] = [];
		const seen = new Set<string>();
		for (const id of ids) {
			if (seen.has(id)) return fail(`${JSON.stringify(id)} is listed twice`);
			seen.add(id);
			const fold = isFoldId(id) ? lattice.get(id) : undefined;
			if (fold) {
				if (fold.state !== "pending") {
					return fail(
						`fold ${fold.id} is ${fold.state}: its entries are folded, and only raw entries can be pinned (name a pending mark to withdraw it and pin its span)`,
					);
				}
				marks.push(fold.id);
				out.push(...(lattice.leavesOf(fold.id) ?? []).map((l) => l.entryId));
			} else if (lattice.entries.some((e) => e.id === id)) out.push(id);
			else return fail(`${JSON.stringify(id)} is neither a fold id nor an entry id of this session's context`);
		}
		return { ok: true, entryIds: [...new Set(out)], marks };
	}

	/** Hold entries raw through every commit. A pending mark named by id is withdrawn first, in the same step. */
	pin(
		ids: readonly string[],
		ctx: ExtensionContext,
	): Done<{ entryIds: string[]; pinnedTokens: number; cap: number; withdrawn: FoldId[] }> {
		const o = this.#open();
		if (!o.ok) return o;
		const named = this.#entryIds(o.open.lattice, ids);
		if (!named.ok) return named;
		// What the lattice refuses (a system entry, a folded one) is said before any arithmetic.
		const trial = o.open.lattice.clone();
		for (const id of named.marks) trial.unmark(id);
		const tried = trial.pin(named.entryIds);
		if (!tried.ok) return fail(tried.reason);
		const over = this.overview(ctx);
		if (!over.ok) return over;
		const positions = new Map(o.open.context.entries.map((e, p) => [e.id, p]));
		const adding = this.#tokens
			.of(named.entryIds.map((id) => o.open.context.sources[positions.get(id) as number]))
			.reduce((s, t) => s + t, 0);
		const after = over.overview.pins.tokens + Math.ceil(adding * this.#ratio(ctx));
		const cap = over.overview.pins.cap;
		if (after > cap) {
			return fail(
				`pinning ${named.entryIds.length} entries (~${after - over.overview.pins.tokens} tokens) would hold ~${after} tokens pinned, over the cap of ${cap} (${PINNED_SHARE_OF_MIN_TARGET} x minTarget of the budget): unpin something first`,
			);
		}
		const ops: JournalOp[] = [
			...named.marks.map((id): JournalOp => ({ v: 1, op: "unmark", id })),
			{ v: 1, op: "pin", entryIds: named.entryIds },
		];
		return this.#durable(ops, (work) => {
			for (const id of named.marks) {
				const u = work.unmark(id);
				if (!u.ok) return fail(u.reason);
			}
			const r = work.pin(named.entryIds);
			return r.ok
				? { ok: true, entryIds: r.entryIds, pinnedTokens: after, cap, withdrawn: named.marks }
				: fail(r.reason);
		});
	}

	unpin(ids: readonly string[]): Done<{ entryIds: string[] }> {
		const o = this.#open();
		if (!o.ok) return o;
		const folds = ids.filter((id) => isFoldId(id) && o.open.lattice.get(id));
		if (folds.length > 0) {
			return fail(
				`${folds.join(", ")} ${folds.length === 1 ? "is a fold id" : "are fold ids"}: a pinned entry is never inside a fold; unpin takes the entry ids status lists under pins`,
			);
		}
		const named = this.#entryIds(o.open.lattice, ids);
		if (!named.ok) return named;
		return this.#durable({ v: 1, op: "unpin", entryIds: named.entryIds }, (work) => {
			const r = work.unpin(named.entryIds);
			return r.ok ? { ok: true, entryIds: r.entryIds } : fail(r.reason);
		});
	}

	/**
	 * Re-cut pending marks: several ids (or from/to entry ids) become exactly one pending mark over
	 * their whole span; one id returns that mark's span to raw.
	 */
	reboundary(args: { ids?: readonly string[]; from?: string; to?: string }): Done<{ fold?: FoldView; raw?: FoldView }> {
		const o = this.#open();
		if (!o.ok) return o;
		const lattice = o.open.lattice;
		if (args.ids && args.ids.length === 1) {
			const f = this.#fold(lattice, args.ids[0]);
			if (!f.ok) return f;
			if (f.fold.state !== "pending") {
				return fail(
					`fold ${f.fold.id} is ${f.fold.state}: reboundary re-cuts pending marks only (use expand for a committed fold)`,
				);
			}
			const done = this.unmark(f.fold.id);
			return done.ok ? { ok: true, raw: done.fold } : done;
		}
		let from = args.from;
		let to = args.to;
		if (args.ids) {
			const folds: FoldView[] = [];
			for (const id of args.ids) {
				const f = this.#fold(lattice, id);
				if (!f.ok) return f;
				if (f.fold.state !== "pending")
					return fail(`fold ${f.fold.id} is ${f.fold.state}: reboundary merges pending marks only`);
				folds.push(f.fold);
			}
			const start = Math.min(...folds.map((f) => f.start));
			const end = Math.max(...folds.map((f) => f.end));
			from = lattice.entries[start].id;
			to = lattice.entries[end - 1].id;
		}
		if (typeof from !== "string" || typeof to !== "string")
			return fail("reboundary needs ids (fold ids) or from and to (entry ids)");
		const span = { from, to };
		return this.#durable({ v: 1, op: "reboundary", from: span.from, to: span.to }, (work) => {
			const r = work.reboundary(span.from, span.to);
			return r.ok ? { ok: true, fold: work.get(r.id) as FoldView } : fail(r.reason);
		});
	}

	/**
	 * Stage an expand (one level, outside-in) or a refold for the next boundary, refused when the
	 * expanded window would pass the serving budget.
	 */
	stageWindowEdit(op: "expand" | "refold", id: unknown, ctx: ExtensionContext): Done<ExpandAnswer> {
		const o = this.#open();
		if (!o.ok) return o;
		const before = this.#rt.stagedLattice() ?? o.open.lattice;
		const f = this.#fold(before, id);
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
		const budget = this.#budget(ctx);
		if (!budget.ok) return budget;
		const ratio = this.#ratio(ctx);
		const over = this.overview(ctx);
		if (!over.ok) return over;
		const delta = Math.ceil(
			(windowCosts(after, o.open.context, this.#tokens).total -
				windowCosts(before, o.open.context, this.#tokens).total) *
				ratio,
		);
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
	foldNow(ids: readonly string[]): Done<{ marks: FoldId[]; refolds: FoldId[] }> {
		const o = this.#open();
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
			const f = this.#fold(lattice, id);
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
	 * A person's mark (the fold editor's `m`): [from, to] becomes one pending mark, a "chapter" when
	 * it holds a user message, else a "tool-batch"; with a typed brief, that brief (kept verbatim).
	 * Recorded as a mark record and a brief record, in one step. `check` only validates: nothing is recorded.
	 */
	mark(
		fromEntryId: unknown,
		toEntryId: unknown,
		typed?: unknown,
		opts: { check?: boolean } = {},
	): Done<{ fold: FoldView }> {
		if (typed !== undefined) {
			if (typeof typed !== "string" || typed.trim() === "") return fail("a typed brief must be a non-empty string");
			if ([...typed].length > BRIEF_MAX_CHARS) {
				return fail(`the brief has ${[...typed].length} characters; a brief holds at most ${BRIEF_MAX_CHARS}`);
			}
		}
		const brief = typed === undefined ? undefined : wellFormedText(typed).text;
		const o = this.#open();
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
		return this.#durable(ops, (work) => {
			const r = work.mark(from, to, kind);
			if (!r.ok) return fail(r.reason);
			const b = brief === undefined ? r : work.brief(r.id, brief);
			return b.ok ? { ok: true, fold: work.get(r.id) as FoldView } : fail(b.reason);
		});
	}
}
