// The fold editor's pure part: the window map as rows (transcript order) and what each key means on
// a row. No terminal, no runtime calls: the component (fold-editor.ts) turns an intent into one of
// the runtime's validated operations (FoldActions), so tests can read rows and intents directly.
//
// Rows: a raw row is one unit of raw entries (an assistant message with the results of its tool
// calls, or a single message); a pending mark, a committed fold and an expanded fold are one row
// each, and an expanded fold's children follow it, indented one level deeper.
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { Overview } from "../operations/actions.ts";
import type { FoldView, OpenView, ReadonlyLattice, StagedEdit } from "../operations/view.ts";
import type { FoldId } from "../vocabulary.ts";
import { formatTokens, percentOf, stagedNote, tokensOfBudget, type WindowFigure } from "./window-figure.ts";

type RowKind = "raw" | "pending" | "committed" | "expanded";

export interface EditorRow {
	/** Stable across refreshes while the row exists: `raw:<first entry id>` or `fold:<id>`. */
	key: string;
	kind: RowKind;
	/** 0 at the top level, +1 inside each expanded fold. */
	depth: number;
	/** Context positions [start, end). */
	start: number;
	end: number;
	/** Every entry of the row's span, in order. */
	entryIds: string[];
	/** Pinned entries among them (raw rows). */
	pinnedIds: string[];
	/** Calibrated tokens the row shows in the next request. */
	tokens: number;
	fold?: FoldView;
	/** The expand or refold staged for this fold at the next turn. */
	staged?: StagedEdit["op"];
	/** Primary column: indent, glyph, what it is, tokens. */
	label: string;
	/** Second column: a brief's first line, or the first line of the entry's text. */
	text: string;
}

interface MapInput {
	/** The lattice as the next request will show it (staged edits applied). */
	lattice: ReadonlyLattice;
	context: OpenView["context"];
	/** Calibrated tokens each context position shows (0 inside a collapsed fold; a brief at its fold's start). */
	shown: readonly number[];
	staged: readonly StagedEdit[];
	/** What each pending mark frees at a commit (overview), when known. */
	freed?: ReadonlyMap<FoldId, number>;
}

const GLYPH: Record<RowKind, string> = { raw: "·", pending: "◇", committed: "▣", expanded: "▢" };
const TEXT_CHARS = 200;

function firstLine(text: string): string {
	const line = text.split("\n").find((l) => l.trim() !== "") ?? "";
	return line.trim().slice(0, TEXT_CHARS);
}

/** The first line of a message's text blocks, and the names of its tool calls. */
function messageGist(entry: SessionEntry): { role: string; text: string; calls: string[] } {
	if (entry.type === "custom_message") {
		const c = entry.content;
		const text = typeof c === "string" ? c : c.map((b) => (b.type === "text" ? b.text : "")).join("\n");
		return { role: `custom ${entry.customType}`, text: firstLine(text), calls: [] };
	}
	if (entry.type !== "message") return { role: entry.type, text: "", calls: [] };
	const m = entry.message as { role: string; content?: unknown; toolName?: string };
	const blocks = typeof m.content === "string" ? [{ type: "text", text: m.content }] : (m.content ?? []);
	const list = Array.isArray(blocks) ? (blocks as { type?: string; text?: string; name?: string }[]) : [];
	const text = list.map((b) => (b.type === "text" ? (b.text ?? "") : "")).join("\n");
	const calls = list.flatMap((b) => (b.type === "toolCall" && b.name ? [b.name] : []));
	const role = m.role === "toolResult" ? `result ${m.toolName ?? ""}`.trim() : m.role;
	return { role, text: firstLine(text), calls };
}

/** Leaf positions grouped into units: an entry making tool calls takes the results that follow it. */
export function rawUnits(context: OpenView["context"], positions: readonly number[]): number[][] {
	const units: number[][] = [];
	for (let i = 0; i < positions.length; i++) {
		const p = positions[i];
		const unit = [p];
		const calls = new Set(context.entries[p].toolCallIds ?? []);
		while (calls.size > 0 && i + 1 < positions.length) {
			const q = positions[i + 1];
			const result = context.entries[q].toolCallId;
			if (q !== unit[unit.length - 1] + 1 || result === undefined || !calls.has(result)) break;
			unit.push(q);
			i++;
		}
		units.push(unit);
	}
	return units;
}

function sum(shown: readonly number[], start: number, end: number): number {
	let t = 0;
	for (let p = start; p < end; p++) t += shown[p] ?? 0;
	return t;
}

function rawRow(input: MapInput, unit: readonly number[], depth: number, pins: ReadonlySet<string>): EditorRow {
	const { context } = input;
	const start = unit[0];
	const end = unit[unit.length - 1] + 1;
	const entryIds = unit.map((p) => context.entries[p].id);
	const gist = messageGist(context.sources[start]);
	const results = unit.length - 1;
	const calls = gist.calls.length > 0 ? ` → ${gist.calls.join(", ")}` : "";
	const pinnedIds = entryIds.filter((id) => pins.has(id));
	const tokens = sum(input.shown, start, end);
	const n = pinnedIds.length;
	const pin = n === 0 ? "" : n === entryIds.length ? " pinned" : ` ${n} pinned`;
	return {
		key: `raw:${entryIds[0]}`,
		kind: "raw",
		depth,
		start,
		end,
		entryIds,
		pinnedIds,
		tokens,
		label: `${"  ".repeat(depth)}${GLYPH.raw} ${gist.role}${results > 0 ? ` +${results}` : ""}${pin} ~${formatTokens(tokens)}`,
		text: `${gist.text}${calls}`.trim() || `(entry ${entryIds[0]})`,
	};
}

function foldRow(input: MapInput, f: FoldView, depth: number): EditorRow {
	const staged = [...input.staged].reverse().find((s) => s.id === f.id)?.op;
	const tokens = sum(input.shown, f.start, f.end);
	const entries = f.end - f.start;
	const kind: RowKind = f.state;
	const freed = input.freed?.get(f.id);
	const state =
		f.state === "pending"
			? `mark${freed !== undefined ? ` frees ~${formatTokens(freed)}` : ""}`
			: f.state === "expanded"
				? `expanded${staged === "expand" ? " (staged)" : ""}`
				: `folded${staged === "refold" ? " (staged)" : ""}`;
	const brief =
		f.state === "pending" && (f.provenance !== "supplied" || f.brief === "")
			? "(brief written at commit)"
			: firstLine(f.brief);
	return {
		key: `fold:${f.id}`,
		kind,
		depth,
		start: f.start,
		end: f.end,
		entryIds: input.context.entries.slice(f.start, f.end).map((e) => e.id),
		pinnedIds: [],
		tokens,
		fold: f,
		...(staged ? { staged } : {}),
		label: `${"  ".repeat(depth)}${GLYPH[kind]} ${f.id} ${f.kind} ${state} · ${entries} entries ~${formatTokens(tokens)}`,
		text: brief,
	};
}

/** The window map, in transcript order. */
export function windowRows(input: MapInput): EditorRow[] {
	const { lattice, context } = input;
	const pins = new Set(lattice.pins());
	const position = new Map(context.entries.map((e, p) => [e.id, p]));
	const rows: EditorRow[] = [];
	const flushRaw = (positions: number[], depth: number) => {
		for (const unit of rawUnits(context, positions)) rows.push(rawRow(input, unit, depth, pins));
		positions.length = 0;
	};
	const emitFold = (f: FoldView, depth: number) => {
		rows.push(foldRow(input, f, depth));
		if (f.state !== "expanded") return;
		const raw: number[] = [];
		for (const child of f.children) {
			if (child.type === "leaf") {
				const p = position.get(child.entryId);
				if (p !== undefined) raw.push(p);
				continue;
			}
			flushRaw(raw, depth + 1);
			const sub = lattice.get(child.id);
			if (sub) emitFold(sub, depth + 1);
		}
		flushRaw(raw, depth + 1);
	};
	const roots = new Map(lattice.folds().flatMap((f) => (f.parent === null ? [[f.start, f] as const] : [])));
	const raw: number[] = [];
	for (let p = 0; p < context.entries.length; ) {
		const root = roots.get(p);
		if (!root) {
			raw.push(p++);
			continue;
		}
		flushRaw(raw, 0);
		emitFold(root, 0);
		p = root.end;
	}
	flushRaw(raw, 0);
	return rows;
}

/** The header: the window against the budget (the figure every display shows), what the map holds, what is staged. */
export function headerLines(
	overview: Overview | undefined,
	rows: readonly EditorRow[],
	figure: WindowFigure | undefined,
): string[] {
	const count = (k: RowKind) => rows.filter((r) => r.kind === k).length;
	const lines: string[] = [];
	if (overview && figure) {
		const a = overview.arithmetic;
		lines.push(
			`pi-fold · window ${tokensOfBudget(figure.tokens, figure.budget)} · commits at ${percentOf(a.commitAt, a.budget)}, folds down to ${percentOf(a.landAt, a.budget)}`,
			`budget ${overview.budget}`,
		);
		lines.push(
			`${count("committed")} folded · ${count("expanded")} expanded · ${a.pendingMarks} marks (free ~${formatTokens(a.marksFree)} at the next commit) · ${overview.pins.entryIds.length} pinned (~${formatTokens(overview.pins.tokens)} of at most ${formatTokens(overview.pins.cap)})`,
		);
		const note = stagedNote(figure);
		if (note) lines.push(note);
	} else {
		lines.push(`pi-fold · ${count("committed")} folded · ${count("pending")} marks (occupancy unknown)`);
	}
	return lines;
}

export const KEY_HELP =
	"↑↓ move · Enter expand / deeper preview · m mark (from, then to) · u unmark · p pin · Esc close";

/** How much of a row's text each Enter on it shows: UTF-8 bytes read and lines drawn. */
export const PREVIEW_STEPS: readonly { bytes: number; lines: number }[] = [
	{ bytes: 600, lines: 6 },
	{ bytes: 2400, lines: 14 },
	{ bytes: 9600, lines: 30 },
	{ bytes: 32_000, lines: 60 },
];

export type EditorKey = "enter" | "mark" | "unmark" | "pin";

/** What a key asks for on a row; the component carries it out through FoldActions. */
export type Intent =
	| { type: "expand"; id: FoldId }
	| { type: "preview"; row: EditorRow }
	| { type: "anchor"; row: EditorRow }
	| { type: "mark"; from: string; to: string }
	| { type: "unmark"; id: FoldId }
	| { type: "pin" | "unpin"; ids: string[] }
	| { type: "refuse"; reason: string };

/**
 * A key on a row. Enter expands a folded row (staged for the next turn) and previews anything else.
 * `m` sets the first end of a span, a second `m` the other end (the same row: that row alone).
 * `u` withdraws a mark; `p` pins a row's raw entries, or unpins them when all are pinned. Fold rows
 * go to the runtime as they are, so its own refusal names what is wrong.
 */
export function intentFor(key: EditorKey, row: EditorRow, anchor?: EditorRow): Intent {
	switch (key) {
		case "enter":
			return row.kind === "committed" && row.fold ? { type: "expand", id: row.fold.id } : { type: "preview", row };
		case "mark": {
			if (!anchor) return { type: "anchor", row };
			const [a, b] = anchor.start <= row.start ? [anchor, row] : [row, anchor];
			const to = b.end >= a.end ? b.entryIds[b.entryIds.length - 1] : a.entryIds[a.entryIds.length - 1];
			return { type: "mark", from: a.entryIds[0], to };
		}
		case "unmark":
			if (row.fold) return { type: "unmark", id: row.fold.id };
			return {
				type: "refuse",
				reason: `u withdraws a pending mark; this row is raw (entry ${row.entryIds[0]}), not marked: nothing to withdraw`,
			};
		case "pin":
			if (row.fold) return { type: "pin", ids: [row.fold.id] };
			return row.pinnedIds.length === row.entryIds.length
				? { type: "unpin", ids: row.entryIds.slice() }
				: { type: "pin", ids: row.entryIds.filter((id) => !row.pinnedIds.includes(id)) };
	}
}
