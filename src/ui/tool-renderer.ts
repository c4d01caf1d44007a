// Clean chat: in the interactive TUI, a tool batch folded into a visible committed fold draws as one
// muted row naming the fold (`⊟ folded in f0123456789 · read src/x.ts · ls dist`) instead of its
// calls and outputs; an expanded fold, or a call not folded, draws as it would without pi-fold.
//
// What Pi's API allows (1.6, dist/modes/interactive/components/tool-execution.js):
// - registerToolRenderer's resolver gets only the tool name; the call id arrives later, in the
//   render context of renderCall/renderResult. Pi resolves renderers once per tool row (each
//   ToolExecutionComponent), so one returned object serves exactly one row and can remember it.
// - A row's frame comes from `renderShell`: "default" wraps call and result in a padded Box with a
//   background (at least three lines, plus a spacer), "self" draws only what the renderers return
//   (plus one blank line, and nothing at all when they return no lines). Only "self" gives one row.
//   Pi reads `renderShell` from the renderers at every display update and frame, not once, so this
//   object answers it with a getter: "self" while its row is folded, the next renderer's shell
//   otherwise. Where that does not hold (another resolver copies our object, Pi caches the shell),
//   the muted line still replaces the call and its output, inside Pi's default frame at worst.
// - A row redraws only when Pi updates it; renderers get `invalidate()` for their own row, kept
//   here per call id so that the turn boundary that commits (or expands) a fold redraws its rows.
// - The assistant's own text and the user's messages of a folded span are not tool rows: no tool
//   renderer reaches them, so they stay as they are.
// - Pi's HTML export draws calls with the same renderers: a folded call exports as its muted row.

import type { ExtensionAPI, ExtensionContext, Theme, ToolRenderers } from "@earendil-works/pi-coding-agent";
import { type Component, Container, truncateToWidth } from "@earendil-works/pi-tui";
import type { FoldHandle, LatticeEntry, ReadonlyLattice } from "../operations/view.ts";
import type { FoldId } from "../vocabulary.ts";
import { errorMessage } from "../vocabulary.ts";

type RenderContext = Parameters<NonNullable<ToolRenderers["renderCall"]>>[2];

/** Where a tool call went: the visible fold its batch is folded into. */
export interface FoldedCall {
	foldId: FoldId;
	/** The first call of its batch draws the batch's row; the others draw nothing. */
	first: boolean;
	/** The batch's calls in short: `read src/x.ts · ls dist`. */
	summary: string;
}

/** The outermost committed fold on an entry's path: the one the window shows in its place. */
export function visibleFoldOf(lattice: ReadonlyLattice, entryId: string): FoldId | undefined {
	let id = lattice.foldOf(entryId);
	let visible: FoldId | undefined;
	while (id) {
		const f = lattice.get(id);
		if (!f) break;
		if (f.state === "committed") visible = f.id;
		id = f.parent;
	}
	return visible;
}

const SUMMARY_KEYS = ["path", "file_path", "command", "pattern", "query", "url", "action"];
const SUMMARY_ARG_CHARS = 48;

/** `read src/x.ts`: the tool and its most telling argument, on one short line. */
export function callSummary(toolName: string, args: unknown): string {
	let arg: string | undefined;
	if (typeof args === "object" && args !== null) {
		const a = args as Record<string, unknown>;
		const key =
			SUMMARY_KEYS.find((k) => typeof a[k] === "string") ?? Object.keys(a).find((k) => typeof a[k] === "string");
		if (key !== undefined) arg = (a[key] as string).replace(/\s+/g, " ").trim();
	}
	if (!arg) return toolName;
	return `${toolName} ${arg.length > SUMMARY_ARG_CHARS ? `${arg.slice(0, SUMMARY_ARG_CHARS - 1)}…` : arg}`;
}

interface CallPlace {
	entryId: string;
	position: number;
	first: boolean;
}

/** Tool call id -> the assistant entry making it, over the open session's lattice entries. */
export class FoldedCalls {
	readonly #runtime: FoldHandle;
	#indexed: { of: readonly LatticeEntry[]; calls: Map<string, CallPlace> } | undefined;
	#lastProblem: string | undefined;

	constructor(runtime: FoldHandle) {
		this.#runtime = runtime;
	}

	/** Index the entries; only the new tail when they extend the ones indexed (the session grew). */
	#calls(entries: readonly LatticeEntry[]): Map<string, CallPlace> {
		const known = this.#indexed;
		let from = 0;
		let calls = new Map<string, CallPlace>();
		if (known && known.of.length <= entries.length) {
			const last = known.of.length - 1;
			const same = last < 0 || (known.of[0].id === entries[0].id && known.of[last].id === entries[last].id);
			if (known.of === entries || same) {
				from = known.of.length;
				calls = known.calls;
			}
		}
		for (let p = from; p < entries.length; p++) {
			const ids = entries[p].toolCallIds ?? [];
			ids.forEach((c, i) => void calls.set(c, { entryId: entries[p].id, position: p, first: i === 0 }));
		}
		this.#indexed = { of: entries, calls };
		return calls;
	}

	/** The fold a call is folded into, or undefined (raw, expanded, unknown, or no session). Never throws. */
	lookup(toolCallId: string): FoldedCall | undefined {
		try {
			const view = this.#runtime.get()?.view;
			if (!view) return undefined;
			const place = this.#calls(view.lattice.entries).get(toolCallId);
			if (!place) return undefined;
			const foldId = visibleFoldOf(view.lattice, place.entryId);
			if (!foldId) return undefined;
			return {
				foldId,
				first: place.first,
				summary: place.first ? batchSummary(view.context.sources[place.position]) : "",
			};
		} catch (err) {
			const reason = errorMessage(err);
			// Rows redraw often: report a failure once, not per frame.
			if (reason !== this.#lastProblem) this.#runtime.get()?.problem("clean-chat", reason);
			this.#lastProblem = reason;
			return undefined;
		}
	}
}

/** The calls of an assistant entry, summarised and joined. */
function batchSummary(source: unknown): string {
	const message = (source as { type?: string; message?: { content?: unknown } } | undefined)?.message;
	if (!Array.isArray(message?.content)) return "";
	return message.content
		.filter((b): b is { type: "toolCall"; name: string; arguments: unknown } => b?.type === "toolCall")
		.map((b) => callSummary(b.name, b.arguments))
		.join(" · ");
}

/** The muted row: one line, cut to the width it is drawn at. */
export function foldedRowText(call: FoldedCall): string {
	return `⊟ folded in ${call.foldId}${call.summary ? ` · ${call.summary}` : ""}`;
}

function foldedRow(call: FoldedCall, theme: Theme, pad: number): Component {
	if (!call.first) return new Container();
	const line = " ".repeat(pad) + theme.fg("muted", foldedRowText(call));
	return { render: (width) => [truncateToWidth(line, Math.max(1, width))], invalidate: () => {} };
}

/** The rows drawn so far, by call id, with what each showed and how to redraw it. */
export class RowRegistry {
	static readonly MAX_ROWS = 10_000;
	readonly #rows = new Map<string, { foldId: FoldId | undefined; invalidate: () => void }>();

	track(toolCallId: string, foldId: FoldId | undefined, invalidate: () => void): void {
		// The newest row of a call is the one on screen (a rebuilt chat makes new rows).
		this.#rows.delete(toolCallId);
		this.#rows.set(toolCallId, { foldId, invalidate });
		if (this.#rows.size > RowRegistry.MAX_ROWS) this.#rows.delete(this.#rows.keys().next().value as string);
	}

	get size(): number {
		return this.#rows.size;
	}

	/** Redraw every row whose fold changed since it was drawn; returns how many. */
	refresh(calls: FoldedCalls): number {
		let redrawn = 0;
		for (const [callId, row] of [...this.#rows]) {
			if (calls.lookup(callId)?.foldId === row.foldId) continue;
			row.invalidate();
			redrawn++;
		}
		return redrawn;
	}
}

/** Pi's documented fallback for a slot: a renderer that throws gets Pi's own drawing of that slot. */
class UseFallback extends Error {}

/**
 * Renderers for one tool row: the muted row while its call is folded, `base` (the next resolver's,
 * or the tool's own) otherwise.
 */
function cleanChatRenderers(base: ToolRenderers, calls: FoldedCalls, rows: RowRegistry): ToolRenderers {
	const row: { callId?: string; folded?: FoldedCall; shared: boolean } = { shared: false };
	const decide = (context: RenderContext): void => {
		// Pi gives each row its own renderers; if something shares this object, the shell cannot follow.
		if (row.callId !== undefined && row.callId !== context.toolCallId) row.shared = true;
		row.callId = context.toolCallId;
		const wasFolded = row.folded !== undefined;
		row.folded = calls.lookup(context.toolCallId);
		rows.track(context.toolCallId, row.folded?.foldId, context.invalidate);
		// The shell flips: Pi is filling the old shell's container now, so update the row once more.
		if (!row.shared && wasFolded !== (row.folded !== undefined)) queueMicrotask(context.invalidate);
	};
	return {
		get renderShell() {
			return row.folded && !row.shared ? "self" : base.renderShell;
		},
		renderCall(args, theme, context) {
			decide(context);
			if (row.folded) return foldedRow(row.folded, theme, row.shared ? 0 : context.outputPad);
			if (!base.renderCall) throw new UseFallback("no call renderer");
			return base.renderCall(args, theme, context);
		},
		renderResult(result, options, theme, context) {
			if (row.callId !== context.toolCallId) decide(context);
			if (row.folded) return new Container();
			if (!base.renderResult) throw new UseFallback("no result renderer");
			return base.renderResult(result, options, theme, context);
		},
	};
}

interface CleanChat {
	calls: FoldedCalls;
	rows: RowRegistry;
	/** Redraw the rows whose fold changed (after a commit, expand, refold); never throws. */
	refresh(ctx: ExtensionContext): void;
}

export function registerCleanChat(pi: ExtensionAPI, runtime: FoldHandle): CleanChat {
	const calls = new FoldedCalls(runtime);
	const rows = new RowRegistry();
	pi.registerToolRenderer((_toolName, next) => {
		const base = next();
		// No renderers at all: Pi draws its generic block, which has no call slot to replace.
		return base && cleanChatRenderers(base, calls, rows);
	});
	const refresh = (ctx: ExtensionContext): void => {
		if (!ctx.hasUI || rows.size === 0) return;
		try {
			rows.refresh(calls);
		} catch (err) {
			runtime.get()?.problem("clean-chat", errorMessage(err));
		}
	};
	const onBoundary = (_e: unknown, ctx: ExtensionContext): void => refresh(ctx);
	pi.on("session_start", onBoundary);
	pi.on("session_tree", onBoundary);
	pi.on("session_compact", onBoundary);
	// After the runtime's work for a turn, in the same handler: a commit made there is in the lattice.
	runtime.afterTurnEnd("clean-chat", refresh);
	return { calls, rows, refresh };
}
