// The fold bar: one widget line saying how full the window is, against which limit, and
// what fills it, e.g.
//   pi-fold ▕█▓▓▒▒░░░    ▏ 61% of 272k budget (price tier: 2x above; window 400k) · deep 3k (1) · raw 80k
// (the counts: folds shown as briefs, and pending marks). Glyphs, in bar order: deep █, folded ▓,
// pending ▒, raw ░, pinned ▪.
// Set with string lines (ctx.ui.setWidget), which the TUI draws above the editor and RPC mode sends
// to its client as an extension_ui_request, at session_start, after /tree or a compaction, at every
// turn boundary and model switch, and right after a command or the fold editor changes something
// (refresh), only when Pi has a UI. The share is the one every display shows (window-figure.ts).
// The handlers return nothing and never throw.

import type { ExtensionAPI, ExtensionContext, Theme, ThemeColor } from "@earendil-works/pi-coding-agent";
import {
	type BudgetFacts,
	CompositionCache,
	multiplierText,
	PART_NAMES,
	type PartName,
	type WindowComposition,
	windowComposition,
} from "../operations/composition.ts";
import type { FoldHandle } from "../operations/view.ts";
import { errorMessage } from "../vocabulary.ts";
import { formatTokens, percentOf, stagedNoteShort, type WindowFigure, windowFigure } from "./window-figure.ts";

/** The widget key (one bar per extension instance). */
export const FOLD_BAR_KEY = "pi-fold";
/** Cells of the bar itself; the whole line stays within MAX_LINE_WIDTH columns. */
export const BAR_CELLS = 12;
export const MAX_LINE_WIDTH = 100;

const GLYPHS: Record<PartName, string> = { deep: "█", folded: "▓", pending: "▒", raw: "░", pinned: "▪" };
const COLOURS: Record<PartName, ThemeColor> = {
	deep: "accent",
	folded: "success",
	pending: "warning",
	raw: "text",
	pinned: "borderAccent",
};

/** Colours a span when a theme is given; plain text otherwise (RPC clients get no escape codes). */
type Paint = (colour: ThemeColor, text: string) => string;
const plain: Paint = (_c, text) => text;

export { formatTokens } from "./window-figure.ts";

/**
 * Which limit sets the budget, short: "price tier: 2x above; window 400k" (the budget is the tier's
 * threshold), "window 400k − 4.1k output", "Pi compacts past it; window 32k" (Pi's own compaction
 * threshold), "providerInputBudget; window 200k". The model's window
 * is always named: Pi's footer divides by it, the bar by the budget, and a person sees both.
 */
export function limitText(l: BudgetFacts): string {
	const win = l.window === undefined ? undefined : `window ${formatTokens(l.window)}`;
	if (l.limit === "price tier" && l.tier) {
		const m = multiplierText(l.tier.multiplier);
		return [`price tier: ${m ? `${m} ` : ""}above`, win].filter(Boolean).join("; ");
	}
	if (l.limit === "window" && win) return `${win} − ${formatTokens(l.reserve)} output`;
	if (l.limit === "compaction" && win) return `Pi compacts past it; ${win}`;
	return ["providerInputBudget", win].filter(Boolean).join("; ");
}

/** What the bar shows, in calibrated tokens. */
interface BarFigures {
	/** Each part, scaled so that the parts sum to `tokens`. */
	parts: Record<PartName, number>;
	tokens: number;
	budget: number | null;
}

/**
 * Calibrated figures. With a `figure` (what every display shows), its tokens and budget; else with
 * `measured`, the runtime's own occupancy from the boundary that just ran; otherwise the estimate
 * times the calibration ratio. The parts are the estimator's split of that total.
 */
export function barFigures(c: WindowComposition, measured: boolean, figure?: WindowFigure): BarFigures {
	const useMeasured = measured && c.occupancy !== null && c.total > 0;
	const tokens = figure ? figure.tokens : useMeasured && c.occupancy ? c.occupancy.tokens : c.total * c.ratio;
	const scale = c.total > 0 ? tokens / c.total : 0;
	const parts = { ...c.parts };
	for (const name of PART_NAMES) parts[name] = c.parts[name] * scale;
	return { parts, tokens, budget: figure ? figure.budget : c.budget };
}

/** Bar cells per part: the filled share of BAR_CELLS, split by largest remainder in bar order. */
function barCells(f: BarFigures): Record<PartName, number> {
	const cells: Record<PartName, number> = { deep: 0, folded: 0, pending: 0, raw: 0, pinned: 0 };
	if (!f.budget || f.tokens <= 0) return cells;
	const filled = Math.min(BAR_CELLS, Math.round((f.tokens / f.budget) * BAR_CELLS));
	const exact = PART_NAMES.map((name) => ({ name, v: (f.parts[name] / f.tokens) * filled }));
	let given = 0;
	for (const e of exact) {
		cells[e.name] = Math.floor(e.v);
		given += cells[e.name];
	}
	const byRemainder = [...exact].sort((a, b) => b.v - Math.floor(b.v) - (a.v - Math.floor(a.v)));
	for (let i = 0; given < filled; i++, given++) cells[byRemainder[i % byRemainder.length].name]++;
	return cells;
}

const SEPARATOR = " · ";
/** Width of the head before the percentage; the second line starts there too. */
const INDENT = "pi-fold ▕".length + BAR_CELLS + "▏ ".length;

/** The bar's lines for a composition: one line, or two when the legend does not fit in MAX_LINE_WIDTH (three with a staged note that does not fit either). */
export function foldBarLines(
	c: WindowComposition,
	opts: { measured?: boolean; theme?: Theme; figure?: WindowFigure } = {},
): string[] {
	const paint: Paint = opts.theme ? (colour, text) => opts.theme!.fg(colour, text) : plain;
	const f = barFigures(c, opts.measured ?? false, opts.figure);
	const cells = barCells(f);
	let bar = "";
	let used = 0;
	for (const name of PART_NAMES) {
		if (cells[name] > 0) bar += paint(COLOURS[name], GLYPHS[name].repeat(cells[name]));
		used += cells[name];
	}
	bar += " ".repeat(BAR_CELLS - used);
	const share = f.budget ? f.tokens / f.budget : undefined;
	const percent = share === undefined ? "" : percentOf(f.tokens, f.budget ?? 0);
	const why = c.limit ? ` (${limitText(c.limit)})` : "";
	const rest =
		share === undefined ? `~${formatTokens(f.tokens)} (no budget)` : ` of ${formatTokens(f.budget ?? 0)} budget${why}`;
	const alarm: ThemeColor =
		share !== undefined && share >= 1 ? "error" : share !== undefined && share >= 0.8 ? "warning" : "text";
	const head = `${paint("muted", "pi-fold")} ▕${bar}▏ ${percent && paint(alarm, percent)}${rest}`;
	const headWidth = INDENT + percent.length + rest.length;
	const items: { text: string; width: number }[] = [];
	const add = (text: string, colour?: ThemeColor) =>
		items.push({ text: colour ? paint(colour, text) : text, width: text.length });

	// How many folds (or marks) make a part, where that is a count of folds.
	const count: Partial<Record<PartName, number>> = {
		deep: c.counts.deepFolds,
		folded: c.counts.visibleFolds - c.counts.deepFolds,
		pending: c.counts.pendingMarks,
	};
	for (const name of PART_NAMES) {
		// Raw always shows; the others only when present.
		if (name !== "raw" && f.parts[name] < 0.5) continue;
		const n = count[name];
		add(`${name} ${formatTokens(f.parts[name])}${n ? ` (${n})` : ""}`, COLOURS[name]);
	}
	// The share already counts a staged expand or refold (a /fold commit only lands at the next turn):
	// said last, and never crowded out of a full legend: it takes a line of its own then.
	const notes = (opts.figure ? stagedNoteShort(opts.figure) : []).map((n) => ({
		text: paint("warning", n),
		width: n.length,
	}));
	return fitLines(head, headWidth, items, notes);
}

function fitLines(
	head: string,
	headWidth: number,
	items: readonly { text: string; width: number }[],
	notes: readonly { text: string; width: number }[] = [],
): string[] {
	const lines = [{ text: head, width: headWidth }];
	let full = false;
	const put = (item: { text: string; width: number }, most: number) => {
		const last = lines[lines.length - 1];
		if (last.width + SEPARATOR.length + item.width <= MAX_LINE_WIDTH) {
			last.text += SEPARATOR + item.text;
			last.width += SEPARATOR.length + item.width;
			return;
		}
		if (lines.length >= most) {
			full = true;
			return;
		}
		// Once an item moved down, the rest follow it, so the legend reads left to right, top to bottom.
		lines.push({ text: " ".repeat(INDENT) + item.text, width: INDENT + item.width });
	};
	for (const item of items) {
		put(item, 2);
		if (full) break;
	}
	for (const note of notes) put(note, 3);
	return lines.map((l) => l.text);
}

/** The line shown when there is nothing to measure (no core, no open session). */
export function unavailableLines(reason: string): string[] {
	const text = `pi-fold ▕${" ".repeat(BAR_CELLS)}▏ ${reason}`;
	return [text.length > MAX_LINE_WIDTH ? `${text.slice(0, MAX_LINE_WIDTH - 1)}…` : text];
}

export interface FoldBar {
	/** Recompute and show the bar now (e.g. after a /fold command); never throws. */
	refresh(ctx: ExtensionContext, measured?: boolean): void;
}

/** The theme to colour with: only in the TUI (RPC clients get plain lines), never fatal. */
function themeOf(ctx: ExtensionContext): Theme | undefined {
	if (ctx.mode !== "tui") return undefined;
	try {
		return ctx.ui.theme;
	} catch {
		return undefined;
	}
}

export function registerFoldBar(pi: ExtensionAPI, runtime: FoldHandle): FoldBar {
	const cache = new CompositionCache();
	let shown: string | undefined;

	const refresh = (ctx: ExtensionContext, measured = false): void => {
		if (!ctx.hasUI) return;
		try {
			const rt = runtime.get();
			const actions = runtime.actions();
			// What the next request shows: staged expands and refolds counted, as the figure counts them.
			const composition = rt && windowComposition(rt, cache, ctx.model, actions?.lattice());
			const counted = rt && actions ? windowFigure(actions, ctx, rt.staged, rt.foldRequested) : undefined;
			const figure = counted && !("error" in counted) ? counted : undefined;
			const lines = composition
				? foldBarLines(composition, { measured, theme: themeOf(ctx), ...(figure ? { figure } : {}) })
				: unavailableLines(rt ? "no session state (see /fold-status problems)" : `off: ${runtime.reason()}`);
			// RPC mode sends every call to its client: only changes.
			const key = lines.join("\n");
			if (key === shown) return;
			ctx.ui.setWidget(FOLD_BAR_KEY, lines);
			shown = key;
		} catch (err) {
			runtime.get()?.problem("fold-bar", errorMessage(err));
		}
	};

	const reset = (_e: unknown, ctx: ExtensionContext): void => {
		shown = undefined;
		refresh(ctx);
	};
	pi.on("session_start", reset);
	pi.on("session_tree", reset);
	pi.on("session_compact", reset);
	// After the runtime's work for a turn, in the same handler: the lattice already holds the turn's
	// marks and commit, and status holds the occupancy it measured.
	runtime.afterTurnEnd("fold-bar", (ctx) => refresh(ctx, true));
	// Another model, another budget (ctx.model is the new one when Pi emits the event).
	pi.on("model_select", (_e, ctx) => refresh(ctx));
	return { refresh };
}
