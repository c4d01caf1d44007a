// The /fold-editor command: the map editor (fold-editor.ts) as an overlay over the whole terminal in
// the TUI (a narrower one lets the chat show in its margins, next to the map's text), and the map
// as plain lines in every other mode (say.ts: print mode writes it to the terminal).
import type { ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import { say } from "../commands/say.ts";
import type { FoldHandle } from "../operations/view.ts";
import { isFoldId } from "../vocabulary.ts";
import type { EditorRow } from "./editor-model.ts";
import { FoldEditor } from "./fold-editor.ts";

/** The map as plain lines, for modes without the interactive TUI. */
function mapText(header: readonly string[], rows: readonly EditorRow[]): string {
	return [...header, ...rows.map((r) => `${r.label}  ${r.text}`)].join("\n");
}

/**
 * The /fold-editor command: the component in the TUI, the map as a message elsewhere. Never throws.
 * `onChange` runs after each gesture that changed something (the fold bar redraws).
 */
export async function openFoldEditor(
	handle: FoldHandle,
	args: string,
	ctx: ExtensionCommandContext,
	onChange?: () => void,
): Promise<void> {
	const runtime = handle.get();
	const actions = handle.actions();
	if (!runtime || !actions) {
		say(ctx, `/fold-editor: pi-fold is not running (${handle.reason() ?? "no runtime yet"})`, "error");
		return;
	}
	const select = args.trim() || undefined;
	if (select !== undefined && (!isFoldId(select) || !actions.lattice()?.get(select))) {
		say(
			ctx,
			`/fold-editor refused: ${JSON.stringify(select)} is not a fold of this session (usage: /fold-editor [fold id])`,
			"error",
		);
		return;
	}
	if (ctx.mode !== "tui" || !ctx.hasUI) {
		const editor = new FoldEditor({
			actions,
			runtime,
			ctx,
			theme: { fg: (_c, t) => t, bold: (t) => t },
			requestRender: () => undefined,
			close: () => undefined,
		});
		say(
			ctx,
			`${mapText(editor.header, editor.rows)}\nThe editor's keys (Enter, m, u, p) need the interactive TUI; /fold and /fold-status work in every mode.`,
		);
		return;
	}
	await ctx.ui.custom<void>(
		(tui, theme, _keys, done) =>
			new FoldEditor({
				actions,
				runtime,
				ctx,
				theme,
				select,
				height: () => tui.terminal.rows,
				requestRender: () => tui.requestRender(),
				close: () => done(),
				...(onChange ? { onChange } : {}),
			}),
		// The whole terminal: a narrower overlay lets the chat show in its margins, next to its text.
		{ overlay: true, overlayOptions: { width: "100%", maxHeight: "100%", anchor: "top-left" } },
	);
}
