// `npm run capture:tui`: the README's pictures of the TUI, from a real run. Pi's interactive TUI runs
// under a pseudo-terminal (`script`, util-linux) with pi-fold loaded and the offline scripted model of
// the TUI test (test/fixtures/tui-session-ext.ts: 14 stages over Pi's own dist/, a small budget, so
// folds commit on screen); @xterm/headless plays the terminal and keeps every cell with its colours.
// Each screen is drawn as an HTML grid of those cells and photographed by headless Chromium
// (playwright-core): docs/images/tui.png after the run (fold bar, folded rows, the receipt) and
// docs/images/fold-editor.png with /fold-editor open. Nothing in the test suite runs this.
//
// Chromium: CHROMIUM_PATH, else the pinned build the browser test unpacks into node_modules/.cache
// (run `npm test`, or `npx vitest run test/browser.test.ts`, once first).
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import xterm from "@xterm/headless";
import { chromium } from "playwright-core";
import { piEnv, removeTempDirs } from "../harness/pi-harness.ts";
import { WORKLOAD_PROMPT, WORKLOAD_ROOT } from "../harness/workload.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const PI_CLI = join(ROOT, "node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js");
const EXTENSION = join(ROOT, "test/fixtures/tui-session-ext.ts");
const OUT = join(ROOT, "docs/images");
const COLS = 110;
/** Tall enough to hold the last commit's receipt above the fold bar once the run settles. */
const ROWS = 60;
const DONE = "Done: surveyed the package in";
const BAR = /pi-fold ▕[^▏]*▏ \d+% of/;
const CANCELLED = "Auto-compaction cancelled";

type Terminal = InstanceType<typeof xterm.Terminal>;
type Cell = NonNullable<ReturnType<NonNullable<ReturnType<Terminal["buffer"]["active"]["getLine"]>>["getCell"]>>;

/** The 16 ANSI colours (a dark theme), then xterm's 6x6x6 cube and grey ramp. */
const ANSI = ["#1e1e1e", "#e06c75", "#98c379", "#e5c07b", "#61afef", "#c678dd", "#56b6c2", "#d0d0d0"];
const BRIGHT = ["#7f848e", "#ff7b86", "#b5e890", "#ffd68a", "#82c4ff", "#de9bf0", "#7fd4e0", "#ffffff"];
const FG = "#d0d0d0";
const BG = "#1e1e1e";
function palette(n: number): string {
	if (n < 8) return ANSI[n] ?? FG;
	if (n < 16) return BRIGHT[n - 8] ?? FG;
	if (n < 232) {
		const level = (v: number) => (v === 0 ? 0 : 55 + v * 40);
		const i = n - 16;
		return rgb((level(Math.floor(i / 36)) << 16) | (level(Math.floor(i / 6) % 6) << 8) | level(i % 6));
	}
	const grey = 8 + (n - 232) * 10;
	return rgb((grey << 16) | (grey << 8) | grey);
}
const rgb = (v: number) => `#${v.toString(16).padStart(6, "0")}`;
const color = (rgbMode: boolean, paletteMode: boolean, value: number, fallback: string) =>
	rgbMode ? rgb(value) : paletteMode ? palette(value) : fallback;

const escapeHtml = (s: string) => s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");

/** One cell as an inline-styled span (wide characters span two columns). */
function cellHtml(cell: Cell): string {
	let fg = color(cell.isFgRGB(), cell.isFgPalette(), cell.getFgColor(), FG);
	let bg = color(cell.isBgRGB(), cell.isBgPalette(), cell.getBgColor(), BG);
	if (cell.isInverse()) [fg, bg] = [bg, fg];
	const style = [`color:${fg}`, `background:${bg}`];
	if (cell.isBold()) style.push("font-weight:bold");
	if (cell.isItalic()) style.push("font-style:italic");
	if (cell.isDim()) style.push("opacity:0.6");
	if (cell.isUnderline()) style.push("text-decoration:underline");
	if (cell.getWidth() === 2) style.push("width:2ch");
	return `<span style="${style.join(";")}">${escapeHtml(cell.getChars() || " ")}</span>`;
}

/** The screen's rows up to `last` (a contiguous crop from the top; the whole screen by default). */
function screenHtml(term: Terminal, last = term.rows - 1): string {
	const buffer = term.buffer.active;
	const rows: string[] = [];
	for (let y = 0; y <= last; y++) {
		const line = buffer.getLine(buffer.viewportY + y);
		let html = "";
		for (let x = 0; x < term.cols; x++) {
			const cell = line?.getCell(x);
			if (cell && cell.getWidth() > 0) html += cellHtml(cell);
		}
		rows.push(`<div class="row">${html}</div>`);
	}
	return `<!doctype html><meta charset="utf-8"><style>
body{margin:0;background:${BG}}
.screen{display:inline-block;padding:12px 14px;background:${BG};font:14px/1.25 "DejaVu Sans Mono",monospace}
.row{white-space:pre;height:1.25em}
.row span{display:inline-block;width:1ch;height:1.25em}
</style><div class="screen">${rows.join("")}</div>`;
}

function screenText(term: Terminal): string[] {
	const buffer = term.buffer.active;
	const out: string[] = [];
	for (let y = 0; y < term.rows; y++) out.push(buffer.getLine(buffer.viewportY + y)?.translateToString(true) ?? "");
	return out;
}

function findChromium(): { executablePath: string; env: NodeJS.ProcessEnv } {
	if (process.env.CHROMIUM_PATH) return { executablePath: process.env.CHROMIUM_PATH, env: process.env };
	const cache = join(ROOT, "node_modules/.cache/pi-fold-chromium");
	const version = existsSync(cache)
		? readdirSync(cache).find((d) => existsSync(join(cache, d, "chromium")))
		: undefined;
	if (!version) {
		throw new Error(
			"no Chromium: run `npx vitest run test/browser.test.ts` once (it unpacks the pinned one), or set CHROMIUM_PATH",
		);
	}
	const lib = join(cache, version, "lib");
	return {
		executablePath: join(cache, version, "chromium"),
		env: { ...process.env, LD_LIBRARY_PATH: [lib, process.env.LD_LIBRARY_PATH].filter(Boolean).join(":") },
	};
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function main(): Promise<void> {
	const browserAt = findChromium();
	const pi = piEnv();
	// Pi compacts only what lies before its last keepRecentTokens: small, so pi-fold declines a compaction.
	writeFileSync(
		join(pi.PI_CODING_AGENT_DIR, "settings.json"),
		JSON.stringify({ compaction: { keepRecentTokens: 2000 } }),
	);
	const env: NodeJS.ProcessEnv = { ...process.env, ...pi, TERM: "xterm-256color", COLORTERM: "truecolor" };
	for (const key of Object.keys(env)) if (/^npm_/i.test(key)) delete env[key];
	const argv = [process.execPath, PI_CLI, "-e", EXTENSION, "--provider", "pi-fold-faux-tui", "--model", "faux-tui"];
	argv.push("--tools", "read,bash,ls", "--no-session", WORKLOAD_PROMPT);
	const quoted = argv.map((w) => `'${w.replaceAll("'", `'\\''`)}'`).join(" ");
	const child = spawn("script", ["-qfec", `stty cols ${COLS} rows ${ROWS}; exec ${quoted}`, "/dev/null"], {
		cwd: WORKLOAD_ROOT,
		env,
	});
	const term = new xterm.Terminal({ cols: COLS, rows: ROWS, allowProposedApi: true, scrollback: 1000 });
	let written: Promise<void> = Promise.resolve();
	const feed = (chunk: Buffer) => {
		const text = chunk.toString("utf8");
		written = written.then(() => new Promise<void>((resolve) => term.write(text, resolve)));
	};
	child.stdout.on("data", feed);
	child.stderr.on("data", feed);
	term.onData((data) => {
		if (!child.stdin.destroyed) child.stdin.write(data);
	});
	const waitFor = async (found: (rows: string[]) => boolean, what: string): Promise<void> => {
		const until = Date.now() + 180_000;
		for (;;) {
			await written;
			if (found(screenText(term))) return;
			if (Date.now() > until) throw new Error(`timed out waiting for ${what}:\n${screenText(term).join("\n")}`);
			await sleep(100);
		}
	};
	const browser = await chromium.launch({ executablePath: browserAt.executablePath, env: browserAt.env });
	const shoot = async (name: string, last?: (rows: string[]) => number) => {
		await sleep(500); // let the last redraw land
		await written;
		const page = await browser.newPage({ deviceScaleFactor: 1 });
		const lastRow = last?.(screenText(term)) ?? -1;
		await page.setContent(screenHtml(term, lastRow >= 0 ? lastRow : undefined));
		await page.locator(".screen").screenshot({ path: join(OUT, name) });
		await page.close();
		console.log(`wrote docs/images/${name}`);
	};
	try {
		mkdirSync(OUT, { recursive: true });
		// Settled: the bar drawn, and Pi's compaction check after the last turn declined below the last line.
		await waitFor((rows) => {
			const done = rows.findIndex((r) => r.includes(DONE));
			return done >= 0 && rows.some((r) => BAR.test(r)) && rows.findLastIndex((r) => r.includes(CANCELLED)) > done;
		}, "the settled run");
		await shoot("tui.png");
		child.stdin.write("/fold-editor");
		await sleep(300);
		child.stdin.write("\r");
		await waitFor((rows) => rows[0] === "─".repeat(COLS) && rows.some((r) => /window ~/.test(r)), "the fold editor");
		// The editor fills the screen; the picture ends at its key help, below which the map is empty.
		await shoot("fold-editor.png", (rows) => rows.findIndex((r) => r.includes("Esc close")));
	} finally {
		await browser.close();
		child.kill("SIGTERM");
		removeTempDirs();
	}
}

await main();
process.exit(0);
