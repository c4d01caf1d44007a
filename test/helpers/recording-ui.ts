// One recording uiContext for tests that bind a real AgentSession to a UI. Pi spreads
// the object it is given, so every method is an own enumerable property and the theme an enumerable
// getter. What pi-fold calls (notify, setStatus, setWidget, custom) is recorded; the rest are no-ops.
import type { ExtensionUIContext } from "@earendil-works/pi-coding-agent";

export interface RecordedNote {
	message: string;
	type: string | undefined;
}

export interface RecordedStatus {
	key: string;
	text: string | undefined;
}

/** A widget set as lines, or cleared (`lines` undefined); component factories are not recorded. */
export interface RecordedWidget {
	key: string;
	lines: string[] | undefined;
}

export interface RecordingUi<C = unknown> {
	ui: ExtensionUIContext;
	notes: RecordedNote[];
	statuses: RecordedStatus[];
	widgets: RecordedWidget[];
	/** How many times custom() was called. */
	customs: number;
	/** What select() was asked: its title and options. */
	selects: { title: string; options: string[] }[];
	/** The component the last custom() call built (only with `terminalRows`). */
	component?: C;
}

export interface RecordingUiOptions {
	/**
	 * Build what custom() is given, headless, as the TUI would on a terminal this many rows high; the
	 * returned promise settles when the component calls done(). Without it custom() resolves at once.
	 */
	terminalRows?: number;
	/** The option select() answers with (default: none, as if the person pressed Escape). */
	choose?: (title: string, options: string[]) => string | undefined;
}

/** Methods that only draw or configure: nothing a test asserts on. */
const NO_OPS = [
	"setWorkingMessage",
	"setWorkingVisible",
	"setWorkingIndicator",
	"setHiddenThinkingLabel",
	"setFooter",
	"setHeader",
	"setTitle",
	"pasteToEditor",
	"setEditorText",
	"addAutocompleteProvider",
	"setEditorComponent",
	"setToolsExpanded",
] as const;

export function recordingUi<C = unknown>(options: RecordingUiOptions = {}): RecordingUi<C> {
	const rec: RecordingUi<C> = {
		ui: {} as ExtensionUIContext,
		notes: [],
		statuses: [],
		widgets: [],
		customs: 0,
		selects: [],
	};
	// Plain text: what a component or the bar draws is checked as a terminal would show it.
	const identity = (_colour: string, s: string) => s;
	const plain = (s: string) => s;
	const theme = { fg: identity, bg: identity, bold: plain, italic: plain, underline: plain };
	const noop = () => undefined;
	const ui: Record<string, unknown> = {
		notify: (message: string, type?: string) => void rec.notes.push({ message, type }),
		setStatus: (key: string, text: string | undefined) => void rec.statuses.push({ key, text }),
		setWidget: (key: string, content: unknown) => {
			if (content === undefined || Array.isArray(content)) rec.widgets.push({ key, lines: content });
		},
		custom: (factory: (...args: unknown[]) => C) => {
			rec.customs++;
			const rows = options.terminalRows;
			if (rows === undefined) return Promise.resolve(undefined);
			return new Promise<void>((resolve) => {
				rec.component = factory({ requestRender: noop, terminal: { rows } }, theme, {}, () => resolve());
			});
		},
		select: (title: string, choices: string[]) => {
			rec.selects.push({ title, options: choices });
			return Promise.resolve(options.choose?.(title, choices));
		},
		confirm: () => Promise.resolve(false),
		input: () => Promise.resolve(undefined),
		editor: () => Promise.resolve(undefined),
		onTerminalInput: () => noop,
		getEditorText: () => "",
		getEditorComponent: () => undefined,
		getAllThemes: () => [],
		getTheme: () => undefined,
		setTheme: () => ({ success: false, error: "no UI" }),
		getToolsExpanded: () => false,
	};
	for (const name of NO_OPS) ui[name] = noop;
	Object.defineProperty(ui, "theme", { get: () => theme, enumerable: true });
	rec.ui = ui as unknown as ExtensionUIContext;
	return rec;
}
