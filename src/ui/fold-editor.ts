// /fold-editor: the window map as a pi-tui component. A SelectList holds the rows
// (editor-model.ts builds them); Enter, m, u and p become one of the runtime's validated operations
// (FoldActions), the same the agent's tool runs. A refusal is shown on the message line and
// changes nothing. Expand is staged for the next turn; previews read text without touching the
// window. The component fills the terminal it is given (fold-editor-command.ts opens it as an overlay
// over the whole screen) and pads every line, so nothing of the chat behind shows through.

import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import {
	type Component,
	type Focusable,
	getKeybindings,
	Input,
	matchesKey,
	type SelectItem,
	SelectList,
	truncateToWidth,
} from "@earendil-works/pi-tui";
import type { FoldActions } from "../operations/actions.ts";
import type { RuntimeView } from "../operations/view.ts";
import { errorMessage } from "../vocabulary.ts";
import { listTheme, messageLines, type Paint, previewLines, previewOf, printable } from "./editor-draw.ts";
import {
	type EditorKey,
	type EditorRow,
	headerLines,
	type Intent,
	intentFor,
	KEY_HELP,
	PREVIEW_STEPS,
	windowRows,
} from "./editor-model.ts";
import { windowFigure } from "./window-figure.ts";

/** Rows the list shows at once (it scrolls). */
const VISIBLE_ROWS = 14;

interface FoldEditorDeps {
	actions: FoldActions;
	runtime: RuntimeView;
	ctx: ExtensionContext;
	theme: Paint;
	requestRender: () => void;
	close: () => void;
	/** A fold id to start on. */
	select?: string;
	/** The terminal's rows, when known: the map fills them exactly, and a preview never pushes past them. */
	height?: () => number;
	/** Called after a gesture changed something (a mark, a pin, a staged expand): the fold bar redraws. */
	onChange?: () => void;
}

interface Preview {
	key: string;
	level: number;
	title: string;
	text: string;
}

/** What a gesture says; `reload`/`select` redraw the map (a refusal changed nothing, so by default it does not). */
interface Answer {
	text: string;
	error?: boolean;
	reload?: boolean;
	select?: string;
}

function refused(reason: string): Answer {
	return { text: reason, error: true };
}

interface BuiltFrom {
	lattice: unknown;
	staged: number;
	entries: number;
}

export class FoldEditor implements Component, Focusable {
	readonly #deps: FoldEditorDeps;
	#rows: EditorRow[] = [];
	#header: string[] = [];
	#list: SelectList;
	#anchor: EditorRow | undefined;
	#preview: Preview | undefined;
	/** The brief being typed for a checked span (Enter marks it). */
	#brief: Input | undefined;
	#message: { text: string; error: boolean } | undefined;
	#focused = false;
	/** What the rows were built from; the session moving on (a turn, a commit) rebuilds them. */
	#built: BuiltFrom | undefined;

	constructor(deps: FoldEditorDeps) {
		this.#deps = deps;
		this.#list = this.#refresh(deps.select ? `fold:${deps.select}` : undefined, 0);
	}

	/** The rows in transcript order, as drawn. */
	get rows(): readonly EditorRow[] {
		return this.#rows;
	}

	/** The header lines: occupancy against the budget, counts, staged edits. */
	get header(): readonly string[] {
		return this.#header;
	}

	get selected(): EditorRow | undefined {
		const key = this.#list.getSelectedItem()?.value;
		return this.#rows.find((r) => r.key === key);
	}

	/** The last gesture's answer (an error when refused). */
	get message(): { text: string; error: boolean } | undefined {
		return this.#message;
	}

	/** The first end of a span being marked. */
	get anchor(): EditorRow | undefined {
		return this.#anchor;
	}

	/** True while the brief for a new mark is being typed. */
	get briefing(): boolean {
		return this.#brief !== undefined;
	}

	get preview(): Readonly<Preview> | undefined {
		return this.#preview;
	}

	get focused(): boolean {
		return this.#focused;
	}

	set focused(value: boolean) {
		this.#focused = value;
		if (this.#brief) this.#brief.focused = value;
	}

	handleInput(data: string): void {
		try {
			this.#catchUp();
			if (this.#brief) this.#brief.handleInput(data);
			else {
				const key: EditorKey | undefined = matchesKey(data, "m")
					? "mark"
					: matchesKey(data, "u")
						? "unmark"
						: matchesKey(data, "p")
							? "pin"
							: undefined;
				if (key) this.#gesture(key);
				else if (!this.#atEnd(data)) this.#list.handleInput(data);
			}
		} catch (err) {
			// A key press must never take the TUI down: say it and keep the map.
			this.#say(`failed inside pi-fold, nothing changed: ${errorMessage(err)}`, true);
		}
		this.#deps.requestRender();
	}

	invalidate(): void {
		this.#list.invalidate();
	}

	/** Up on the first row or down on the last: the list stays put (it does not wrap to the other end). */
	#atEnd(data: string): boolean {
		const kb = getKeybindings();
		const at = this.#rows.findIndex((r) => r.key === this.selected?.key);
		return (
			(kb.matches(data, "tui.select.up") && at <= 0) ||
			(kb.matches(data, "tui.select.down") && at >= this.#rows.length - 1)
		);
	}

	render(width: number): string[] {
		this.#catchUp();
		const { theme } = this.#deps;
		// Padded to the full width: an overlay must cover what lies under it.
		const clip = (line: string) => truncateToWidth(line, Math.max(1, width), "…", true);
		const out: string[] = [theme.fg("borderMuted", "─".repeat(Math.max(1, width)))];
		this.#header.forEach((line, i) => {
			out.push(clip(i === 0 ? theme.bold(theme.fg("accent", line)) : theme.fg("muted", line)));
		});
		out.push(...this.#list.render(width).map(clip));
		if (this.#message) out.push(...messageLines(this.#message, width, theme).map(clip));
		if (this.#brief) {
			out.push(
				clip(theme.fg("accent", "brief for the new mark (Enter saves; empty: the runtime writes it; Esc: no mark)")),
			);
			out.push(...this.#brief.render(width).map(clip));
		} else if (this.#preview && this.#preview.key === this.selected?.key) {
			const step = PREVIEW_STEPS[this.#preview.level];
			// Room left on the screen after the lines around the preview.
			const room = this.#deps.height ? Math.max(3, this.#deps.height() - out.length - 4) : step.lines;
			out.push(...previewLines(this.#preview, Math.min(step.lines, room), width, theme).map(clip));
		}
		out.push(
			clip(
				theme.fg(
					"dim",
					this.#anchor ? `marking from ${this.#anchor.entryIds[0]}: m at the last row · Esc cancels` : KEY_HELP,
				),
			),
		);
		// The whole screen is the map's: blank rows down to the bottom border, every cell painted.
		const height = this.#deps.height?.();
		if (height !== undefined) while (out.length < height - 1) out.push(" ".repeat(Math.max(1, width)));
		out.push(theme.fg("borderMuted", "─".repeat(Math.max(1, width))));
		return out;
	}

	#say(text: string, error = false): void {
		this.#message = { text, error };
	}

	/** Something changed: tell whoever shows the window elsewhere (the fold bar); never fatal. */
	#changed(): void {
		try {
			this.#deps.onChange?.();
		} catch {
			// The bar redraws at the next turn anyway.
		}
	}

	/** Rebuild rows and header from the runtime; keep the row `key` selected, else the row at `index`. */
	#refresh(key: string | undefined, index: number): SelectList {
		const { actions, runtime, ctx } = this.#deps;
		const view = runtime.view;
		this.#built = this.#source();
		const lattice = actions.lattice();
		const over = actions.overview(ctx);
		const shown = lattice && actions.shownTokens(lattice, ctx);
		if (!view || !lattice || !shown) {
			this.#rows = [];
			this.#header = ["pi-fold: no session is open yet"];
		} else {
			const freed = over.ok ? new Map(over.overview.marks.map((m) => [m.id, m.freed])) : undefined;
			this.#rows = windowRows({ lattice, context: view.context, shown, staged: runtime.staged, freed });
			const figure = windowFigure(actions, ctx, runtime.staged, runtime.foldRequested);
			this.#header = headerLines(
				over.ok ? over.overview : undefined,
				this.#rows,
				"error" in figure ? undefined : figure,
			);
		}
		const anchor = this.#anchor?.key;
		const items: SelectItem[] = this.#rows.map((r) => ({
			value: r.key,
			label: r.key === anchor ? `${r.label} ◀from` : r.label,
			description: printable(r.text),
		}));
		const list = new SelectList(items, VISIBLE_ROWS, listTheme(this.#deps.theme), {
			minPrimaryColumnWidth: 24,
			maxPrimaryColumnWidth: 64,
		});
		const at = key === undefined ? -1 : this.#rows.findIndex((r) => r.key === key);
		list.setSelectedIndex(at >= 0 ? at : index);
		list.onSelect = () => this.#gesture("enter");
		list.onCancel = () => this.#cancel();
		this.#list = list;
		return list;
	}

	#source(): BuiltFrom {
		const { runtime } = this.#deps;
		return {
			lattice: runtime.view?.lattice,
			staged: runtime.staged.length,
			entries: runtime.view?.context.entries.length ?? 0,
		};
	}

	/** The agent may run while the editor is open: rows made from an older lattice are rebuilt. */
	#catchUp(): void {
		const now = this.#source();
		const built = this.#built;
		if (built && (built.lattice !== now.lattice || built.staged !== now.staged || built.entries !== now.entries))
			this.#reload();
	}

	#reload(key?: string): void {
		const selected = this.selected;
		const index = selected ? this.#rows.indexOf(selected) : 0;
		this.#refresh(key ?? selected?.key, index);
	}

	#cancel(): void {
		if (this.#anchor) {
			this.#anchor = undefined;
			this.#say("mark cancelled: nothing changed");
			this.#reload();
			return;
		}
		this.#deps.close();
	}

	#gesture(key: EditorKey): void {
		const row = this.selected;
		if (!row) {
			this.#say("the map is empty: nothing to act on", true);
			return;
		}
		const answer = this.#carryOut(intentFor(key, row, this.#anchor), row);
		this.#say(answer.text, answer.error);
		// A refusal changed nothing: the map stays as it is drawn.
		if (!answer.error || answer.reload) this.#reload(answer.select);
		if (!answer.error) this.#changed();
	}

	/** Run one intent through FoldActions; what to say, and which row to select after a change. */
	#carryOut(intent: Intent, row: EditorRow): Answer {
		const { actions, ctx } = this.#deps;
		switch (intent.type) {
			case "expand": {
				const r = actions.stageWindowEdit("expand", intent.id, ctx);
				if (!r.ok) return refused(r.reason);
				return {
					text: `${intent.id} expands at the next turn: ~${r.delta} tokens more, the next request ~${r.next} of ${r.budget}`,
				};
			}
			case "preview":
				return this.#deepen(intent.row);
			case "anchor":
				this.#anchor = intent.row;
				return {
					text: `marking from ${intent.row.fold?.id ?? `entry ${intent.row.entryIds[0]}`}: move to the span's last row and press m (the same row: it alone)`,
				};
			case "mark": {
				this.#anchor = undefined;
				const check = actions.mark(intent.from, intent.to, undefined, { check: true });
				if (!check.ok) return { ...refused(check.reason), reload: true };
				this.#askBrief(intent.from, intent.to);
				return {
					text: `span ${intent.from}..${intent.to} (${check.fold.end - check.fold.start} entries) can be marked`,
				};
			}
			case "unmark": {
				const r = actions.unmark(intent.id);
				if (!r.ok) return refused(r.reason);
				return {
					text: `mark ${intent.id} withdrawn: its ${r.fold.end - r.fold.start} entries stay raw`,
					select: `raw:${row.entryIds[0]}`,
				};
			}
			case "pin": {
				const r = actions.pin(intent.ids, ctx);
				if (!r.ok) return refused(r.reason);
				return { text: `pinned ${r.entryIds.length} entries: ~${r.pinnedTokens} of at most ${r.cap} tokens pinned` };
			}
			case "unpin": {
				const r = actions.unpin(intent.ids);
				if (!r.ok) return refused(r.reason);
				return { text: `unpinned ${r.entryIds.length} entries: they may fold again` };
			}
			case "refuse":
				return refused(intent.reason);
		}
	}

	/** Open the brief prompt for a checked span; Enter marks it, Esc leaves everything as it was. */
	#askBrief(from: string, to: string): void {
		const input = new Input();
		input.focused = this.#focused;
		input.onSubmit = (value) => {
			this.#brief = undefined;
			const r = this.#deps.actions.mark(from, to, value.trim() === "" ? undefined : value);
			if (!r.ok) return this.#say(r.reason, true);
			const who = r.fold.provenance === "supplied" ? "your brief" : "a brief the runtime writes at commit";
			this.#say(`marked ${r.fold.id} (${r.fold.end - r.fold.start} entries, ${r.fold.kind}) with ${who}`);
			this.#reload(`fold:${r.fold.id}`);
			this.#changed();
		};
		input.onEscape = () => {
			this.#brief = undefined;
			this.#say("mark cancelled: nothing changed");
		};
		this.#brief = input;
	}

	/** Show more of a row's text: a fold's verified source (peek, no tool result), a raw row's entries. */
	#deepen(row: EditorRow): Answer {
		const level = this.#preview?.key === row.key ? Math.min(this.#preview.level + 1, PREVIEW_STEPS.length - 1) : 0;
		const shown = previewOf(this.#deps.actions, row, PREVIEW_STEPS[level].bytes);
		if (!shown.ok) return refused(shown.reason);
		this.#preview = { key: row.key, level, title: shown.title, text: shown.text };
		return { text: `preview ${level + 1} of ${PREVIEW_STEPS.length}; the window is unchanged` };
	}
}
