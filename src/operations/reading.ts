// The operations that read folds and never edit the window: peek (a fold's exact, verified source
// as text, a slice at a time), search (every fold's text view), index lines, and the editor's
// preview of raw entries. A tool call's own result is marked to fold at the next commit (or, for
// a peek with ephemeral false, pinned) once the model has seen it.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { childSummary } from "../briefs/index-lines.ts";
import { indexChild } from "../briefs/span.ts";
import type { FoldView } from "../lattice/index.ts";
import { windowCosts } from "../meter/arithmetic.ts";
import type { FoldTexts } from "../search/fold-texts.ts";
import { checkQuery, type SearchAnswer, type SearchRequest, searchFolds } from "../search/search.ts";
import { textAt } from "../session/context-entries.ts";
import { entryText } from "../session/entry-text.ts";
import { type FoldSource, readFoldSource, type Slice, sliceUtf8, sourceView } from "../session/fold-source.ts";
import { type FoldId, isFoldId, type Outcome, PEEK_DEFAULT_BYTES, PEEK_MAX_BYTES } from "../vocabulary.ts";
import { openOf, overviewOf } from "./overview.ts";
import { type ChildSummary, type ContentsLine, peekContents } from "./peek-contents.ts";
import type { ReadonlyLattice, RuntimePort } from "./view.ts";

export type { SearchAnswer, SearchHit, SearchRequest } from "../search/search.ts";
export type { Slice } from "../session/fold-source.ts";

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

export interface PeekOptions {
	offset?: number;
	bytes?: number;
	ephemeral?: boolean;
	toolCallId?: string;
	ctx?: ExtensionContext;
}

function fail(reason: string): { ok: false; reason: string } {
	return { ok: false, reason };
}

/** The fold `id` names in `lattice`: an id recorded before an entry's bytes changed in the session file still names its fold. */
export function foldNamed(port: RuntimePort, lattice: ReadonlyLattice, id: unknown): Outcome<{ fold: FoldView }> {
	if (!isFoldId(id)) return fail(`${JSON.stringify(id)} is not a fold id (f + 10 hex digits)`);
	const fold = lattice.get(port.view?.aliases.get(id) ?? id);
	return fold ? { ok: true, fold } : fail(`unknown fold ${id} (status lists every fold with detail "tree")`);
}

/** A fold's exact, verified source as text (a slice of it); never edits the window. */
export function peekFold(port: RuntimePort, id: unknown, opts: PeekOptions): Outcome<PeekAnswer> {
	const o = openOf(port);
	if (!o.ok) return o;
	const lattice = o.open.lattice;
	const f = foldNamed(port, lattice, id);
	if (!f.ok) return f;
	const read = readFoldSource({ ...o.open, core: port.core }, f.fold.id);
	if (!read.ok) return read;
	const view = sourceView(read.source, lattice);
	const text = view.text;
	const offset = opts.offset ?? 0;
	const total = new TextEncoder().encode(text).length;
	if (offset > total) return fail(`offset ${offset} is past the end of fold ${f.fold.id}'s text (${total} bytes)`);
	const slice = sliceUtf8(text, offset, Math.min(opts.bytes ?? PEEK_DEFAULT_BYTES, PEEK_MAX_BYTES));
	if (opts.ephemeral === false && opts.ctx) {
		// The result will be pinned: it must fit under the same cap as any pin.
		const over = overviewOf(port, opts.ctx);
		if (!over.ok) return over;
		const pins = over.overview.pins;
		const adding = Math.ceil(port.entryTokens.brief(slice.text) * port.ratio(opts.ctx.model));
		if (pins.tokens + adding > pins.cap) {
			return fail(
				`ephemeral: false would pin this peek's result (~${adding} tokens) on top of ~${pins.tokens} pinned, over the cap of ${pins.cap}: peek a smaller slice (bytes) or let it fold (ephemeral true)`,
			);
		}
	}
	if (opts.toolCallId) port.followPeek({ toolCallId: opts.toolCallId, ephemeral: opts.ephemeral ?? true });
	const leafTexts = read.source.leaves.map((l) => l.text);
	return {
		ok: true,
		fold: f.fold,
		slice,
		verifiedBy: read.source.verifiedBy,
		sourceBytes: read.source.bytes,
		leaves: read.source.leaves.length,
		tokens: port.core.estimateTokens(text),
		...(offset === 0
			? { contents: peekContents(f.fold, view, leafTexts, lattice, childSummaries(port, lattice)) }
			: {}),
	};
}

/**
 * Search every fold's verified text view. Like a peek it never edits the window; a tool call's
 * result is marked to fold at the next commit.
 */
export function searchAll(
	port: RuntimePort,
	texts: FoldTexts,
	req: SearchRequest,
	opts: { toolCallId?: string },
): Outcome<{ answer: SearchAnswer }> {
	const o = openOf(port);
	if (!o.ok) return o;
	const checked = checkQuery(req.query, req.regex);
	if (!checked.ok) return checked;
	const answer = searchFolds(o.open, texts, port.core, req, checked);
	if (opts.toolCallId) port.followPeek({ toolCallId: opts.toolCallId, ephemeral: true });
	return { ok: true, answer };
}

/** What each fold holds, in the words of an index line (tools, principal arguments, notes), within `n` characters. */
export function indexLinesOf(port: RuntimePort, lattice: ReadonlyLattice, ids: readonly FoldId[], n: number): string[] {
	const summary = childSummaries(port, lattice);
	return ids.map((id) => summary(id, n));
}

/** A fold's index-line words within `n` characters, for any fold of `lattice` (the session's entries looked up once). */
function childSummaries(port: RuntimePort, lattice: ReadonlyLattice): ChildSummary {
	const byId = new Map((port.view?.context.sources ?? []).map((s) => [s.id, s]));
	return (id, n) => childSummary(indexChild(id, lattice.get(id), lattice.leavesOf(id) ?? [], byId), n);
}

/** Calibrated tokens each context position shows in the window `lattice` makes (0 inside a collapsed fold). */
export function shownTokensOf(
	port: RuntimePort,
	lattice: ReadonlyLattice,
	ctx: ExtensionContext,
): number[] | undefined {
	const open = port.view;
	if (!open) return undefined;
	const ratio = port.ratio(ctx.model);
	return windowCosts(lattice, open.context, port.entryTokens).shownAt.map((t) => t * ratio);
}

/** Raw entries from context position `start` as readable text, the first `bytes` of it. */
export function rawEntries(port: RuntimePort, start: number, count: number, bytes: number): Outcome<{ slice: Slice }> {
	const open = port.view;
	if (!open) return fail("no session is open yet");
	const sources = open.context.sources;
	const text = Array.from({ length: count }, (_, i) =>
		entryText(start + i < sources.length ? textAt(open.context, start + i) : ""),
	).join("\n\n");
	return { ok: true, slice: sliceUtf8(text, 0, bytes) };
}
