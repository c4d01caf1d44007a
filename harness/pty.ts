// Pi's interactive TUI in a real pseudo-terminal, read back as a screen. `script` (util-linux) gives
// the child a pty of a fixed size; @xterm/headless, a terminal emulator without a display, plays the
// terminal: it takes every byte the TUI writes, answers its queries, and holds the grid of cells a
// person would see. Keys go in as the bytes a terminal sends.
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import xterm from "@xterm/headless";

export interface PtyRun {
	/** Type: the bytes a terminal sends (text, "\r" for Enter, "\x1b" for Esc, "\x1b[B" for Down). */
	send(data: string): void;
	/** The visible screen, one string per row (trailing spaces kept, so a row is `cols` wide). */
	screen(): Promise<string[]>;
	/** Wait until `found` holds on the screen; fails after `timeoutMs` with the screen in the message. */
	waitFor(found: (rows: string[]) => boolean, what: string, timeoutMs?: number): Promise<string[]>;
	/**
	 * Everything the child wrote so far as text: escape codes out, each cursor move a line break. The
	 * TUI redraws and clears what scrolled away, so this (not the screen) holds all it ever drew.
	 */
	drawn(): string;
	close(): Promise<void>;
}

const ESC = "\u001b";
const BEL = "\u0007";
/** OSC (titles, hyperlinks), SGR (colours, styles), any other CSI (cursor moves, erases), two-byte escapes. */
const OSC = new RegExp(`${ESC}\\][^${BEL}${ESC}]*(${BEL}|${ESC}\\\\)`, "g");
const SGR = new RegExp(`${ESC}\\[[0-9;?<>=]*m`, "g");
const CSI = new RegExp(`${ESC}\\[[0-9;?<>=]*[ -/]*[@-~]`, "g");
const ESC_PAIR = new RegExp(`${ESC}[@-_]`, "g");

/** Quote one word for sh. */
const sh = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

export function startPty(
	argv: readonly string[],
	opts: { cwd: string; env: NodeJS.ProcessEnv; cols: number; rows: number },
): PtyRun {
	const { cols, rows } = opts;
	const term = new xterm.Terminal({ cols, rows, allowProposedApi: true, scrollback: 1000 });
	const command = `stty cols ${cols} rows ${rows}; exec ${argv.map(sh).join(" ")}`;
	const child: ChildProcessWithoutNullStreams = spawn("script", ["-qfec", command, "/dev/null"], {
		cwd: opts.cwd,
		env: { ...opts.env, TERM: "xterm-256color", COLORTERM: "truecolor" },
	});
	let raw = "";
	let written: Promise<void> = Promise.resolve();
	const feed = (chunk: Buffer) => {
		const text = chunk.toString("utf8");
		raw += text;
		written = written.then(() => new Promise<void>((resolve) => term.write(text, resolve)));
	};
	child.stdout.on("data", feed);
	child.stderr.on("data", feed);
	// The terminal's answers to the TUI's queries (cursor position, device attributes) go back to it.
	term.onData((data) => {
		if (!child.stdin.destroyed) child.stdin.write(data);
	});
	const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));

	const screen = async (): Promise<string[]> => {
		await written;
		const buffer = term.buffer.active;
		const out: string[] = [];
		for (let y = 0; y < rows; y++) out.push(buffer.getLine(buffer.viewportY + y)?.translateToString(false) ?? "");
		return out;
	};

	return {
		send: (data) => child.stdin.write(data),
		screen,
		async waitFor(found, what, timeoutMs = 30_000) {
			const until = Date.now() + timeoutMs;
			for (;;) {
				const rowsNow = await screen();
				if (found(rowsNow)) return rowsNow;
				if (Date.now() > until) {
					throw new Error(`timed out waiting for ${what}; the screen:\n${rowsNow.map((r) => r.trimEnd()).join("\n")}`);
				}
				await new Promise((resolve) => setTimeout(resolve, 50));
			}
		},
		drawn: () => raw.replace(OSC, "").replace(SGR, "").replace(CSI, "\n").replace(ESC_PAIR, "").replaceAll("\r", "\n"),
		async close() {
			if (child.exitCode === null) child.kill("SIGTERM");
			await exited;
			term.dispose();
		},
	};
}
