// Pi's interactive TUI in a real pseudo-terminal (harness/pty.ts), with pi-fold loaded and an
// offline scripted model: what a person sees. The commit receipt is one styled line, the first
// declined auto-compaction is explained, /fold-editor paints the whole screen (nothing of the chat
// behind it shows), and after an edit the fold bar, the editor and /fold-status show one figure.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { piEnv, removeTempDirs } from "../harness/pi-harness.ts";
import { type PtyRun, startPty } from "../harness/pty.ts";
import { WORKLOAD_PROMPT, WORKLOAD_ROOT } from "../harness/workload.ts";
import { CANCEL_EXPLAINED } from "../src/host/hooks.ts";
import { KEY_HELP } from "../src/ui/editor-model.ts";
import { TUI_MODEL, TUI_PROVIDER, TUI_STAGES } from "./fixtures/tui-session-ext.ts";
import { childEnv, PI_CLI, REPO_ROOT } from "./helpers/pi-cli.ts";

const COLS = 120;
const ROWS = 40;
const DONE = `Done: surveyed the package in ${TUI_STAGES} stages.`;
const FIGURE = /window ~([\d.]+k?) of ([\d.]+k?) tokens \((\d+)%\)/;
const BAR = /pi-fold ▕[^▏]*▏ (\d+)% of ([\d.]+k?)/;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const text = (rows: readonly string[]) => rows.map((r) => r.trimEnd()).join("\n");

let pty: PtyRun;
let afterRun: string[];
/** Everything drawn up to the end of the run, as text. */
let history: string;

beforeAll(async () => {
	const args = [process.execPath, PI_CLI, "-e", `${REPO_ROOT}test/fixtures/tui-session-ext.ts`];
	args.push("--provider", TUI_PROVIDER, "--model", TUI_MODEL, "--tools", "read,bash,ls", "--no-session");
	args.push(WORKLOAD_PROMPT);
	const env = childEnv(piEnv());
	// Pi compacts only what lies before its last keepRecentTokens: small, so there is something to compact.
	writeFileSync(
		join(env.PI_CODING_AGENT_DIR ?? "", "settings.json"),
		JSON.stringify({ compaction: { keepRecentTokens: 2000 } }),
	);
	pty = startPty(args, { cwd: WORKLOAD_ROOT, env, cols: COLS, rows: ROWS });
	await pty.waitFor((rows) => rows.some((r) => r.includes(DONE)), "the workload to finish", 90_000);
	// Pi checks for compaction as the run settles; the bar is drawn at the last boundary.
	afterRun = await pty.waitFor(
		(rows) =>
			rows.some((r) => BAR.test(r)) &&
			rows.some((r) => r.includes("Auto-compaction cancelled")) &&
			rows.some((r) => r.includes(DONE)),
		"the settled run",
	);
	history = pty.drawn();
}, 300_000);

afterAll(async () => {
	await pty?.close();
	removeTempDirs();
});

describe("the TUI under a pty", () => {
	it("draws a commit receipt as one short styled line, not the raw message block", () => {
		expect(history).toMatch(
			/⊟ pi-fold folded \d+ spans?( \(\+\d+ consolidations?\))?: window \d+% → \d+% of 14k tokens, ~[\d.]+k? freed; originals kept on disk/,
		);
		expect(history).not.toContain("[pi-fold-receipt]");
		expect(history).not.toContain("[pi-fold] commit:");
		expect(history).not.toContain("<pi-fold-notice>");
	});

	it("explains the first declined auto-compaction in one line, once", () => {
		// Pi cancels again after later turns; only the first says why, later ones are Pi's plain line.
		const lines = history.split("\n").map((l) => l.trim());
		const first = lines.indexOf(CANCEL_EXPLAINED);
		expect(first).toBeGreaterThanOrEqual(0);
		expect(lines.lastIndexOf("Auto-compaction cancelled")).toBeGreaterThan(first);
		expect(
			new Set(
				history
					.split("\n")
					.filter((l) => l.includes(CANCEL_EXPLAINED))
					.map((l) => l.trim()),
			),
		).toEqual(new Set([CANCEL_EXPLAINED]));
	});

	it("/fold-editor paints the whole screen: none of the chat behind it shows", async () => {
		// What only the chat and Pi's own chrome draw, all on screen before the editor opens.
		const chatOnly = [
			(r: string) => BAR.test(r),
			(r: string) => r.includes(WORKLOAD_ROOT),
			(r: string) => /^ (read|bash|ls) \S/.test(r),
		];
		for (const seen of chatOnly) expect(afterRun.some(seen), text(afterRun)).toBe(true);
		pty.send("/fold-editor");
		await sleep(300);
		pty.send("\r");
		const open = await pty.waitFor((rows) => rows.some((r) => r.includes(KEY_HELP)), "the fold editor");
		await sleep(300);
		const screen = await pty.screen();
		for (const seen of chatOnly) expect(screen.some(seen), text(screen)).toBe(false);
		// Top and bottom borders span the full width; every row in between belongs to the map.
		expect(screen[0]).toBe("─".repeat(COLS));
		expect(screen[ROWS - 1]).toBe("─".repeat(COLS));
		expect(open.some((r) => FIGURE.test(r))).toBe(true);
	});

	it("after an edit, the editor, the fold bar and /fold-status show the same figure and say what is staged", async () => {
		// Move to the first committed fold (▣) and stage its expand with Enter.
		for (let i = 0; i < 60; i++) {
			const rows = await pty.screen();
			if (rows.some((r) => r.includes("→") && r.includes("▣"))) break;
			pty.send("\x1b[B");
			await sleep(60);
		}
		pty.send("\r");
		const edited = await pty.waitFor(
			(rows) => rows.some((r) => r.includes("staged for the next turn: expand")),
			"the staged expand in the header",
		);
		const [, tokens, budget, percent] = FIGURE.exec(edited.find((r) => FIGURE.test(r)) ?? "") ?? [];
		const staged = /expand (f[0-9a-f]{10})/.exec(edited.find((r) => r.includes("staged for the next turn")) ?? "")?.[1];
		expect(staged).toBeDefined();
		pty.send("\x1b");
		const closed = await pty.waitFor((rows) => rows.some((r) => BAR.test(r)), "the fold bar after the editor");
		// The bar: its head row and the legend rows under it (indented to the percentage).
		const head = closed.findIndex((r) => r.includes("pi-fold ▕"));
		const indent = (closed[head] ?? "").indexOf("▏") + 2;
		const rest = closed.slice(head + 1);
		const legend = rest.slice(
			0,
			Math.max(
				0,
				rest.findIndex((r) => !r.startsWith(" ".repeat(indent)) || r.trim() === ""),
			),
		);
		const bar = [closed[head], ...legend].join(" ");
		expect(BAR.exec(bar)?.slice(1)).toEqual([percent, budget]);
		expect(bar).toContain(`incl. staged expand ${staged}`);
		// The bar's base is pi-fold's budget, and it names the model's window, the base of Pi's footer.
		const footerWindow = /\d+(?:\.\d+)?%\/([\d.]+k)/.exec(text(closed))?.[1];
		expect(footerWindow).toBeDefined();
		expect(bar).toContain(`of ${budget} budget (`);
		expect(bar).toContain(`window ${footerWindow}`);
		// One count everywhere: the staged expand is no longer counted folded in the bar.
		const [, folded, expanded, marks] = /(\d+) folded · (\d+) expanded · (\d+) marks/.exec(text(edited)) ?? [];
		expect(Number(expanded)).toBeGreaterThan(0);
		const part = (name: string) => /(\S+) \((\d+)\)/.exec(bar.slice(bar.indexOf(` ${name} `) + name.length + 2)) ?? [];
		const inBar = (name: string) => (bar.includes(` ${name} `) ? Number(part(name)[2]) : 0);
		expect(inBar("deep") + inBar("folded")).toBe(Number(folded));
		expect(inBar("pending")).toBe(Number(marks));
		pty.send("/fold-status");
		await sleep(300);
		pty.send("\r");
		const status = await pty.waitFor((rows) => rows.some((r) => r.includes("pi-fold: window ~")), "/fold-status");
		const line = status.find((r) => r.includes("pi-fold: window ~")) ?? "";
		expect(FIGURE.exec(line)?.slice(1)).toEqual([tokens, budget, percent]);
		expect(text(status)).toContain(`staged for the next turn: expand ${staged} (counted in the window)`);
		// The pending marks: the bar's figure for what they take of the window, and the same count.
		expect(text(status)).toContain(
			`pending marks: ${marks}, ~${part("pending")[1]} of the window (the fold bar's "pending")`,
		);
		expect(text(status)).toMatch(
			new RegExp(`in the window: ${folded} folds? shown as a short brief each.*, ${expanded} expanded`),
		);
	});

	it("/fold-search: every match can be reached in the picker, Esc lists them in words, a match opens at a line", async () => {
		const query = "export";
		const title = /pi-fold search: (\d+) matching lines for "export".*; open one/;
		const openPicker = async () => {
			pty.send(`/fold-search ${query}`);
			await sleep(300);
			pty.send("\r");
			return pty.waitFor((rows) => rows.some((r) => title.test(r)), "the search picker");
		};
		const picker = await openPicker();
		const total = Number(title.exec(picker.find((r) => title.test(r)) ?? "")?.[1]);
		// More than one of the agent's pages (30): the person's list holds them all.
		expect(total).toBeGreaterThan(30);
		for (let i = 1; i < total; i++) pty.send("\x1b[B");
		const end = await pty.waitFor((rows) => rows.some((r) => r.includes(`(${total}/${total})`)), "the last match");
		expect(end.some((r) => r.includes(`${total}. f`))).toBe(true);
		const drawnBefore = pty.drawn().length;
		pty.send("\x1b");
		// The list is printed in the chat: its last line on screen, the picker gone.
		await pty.waitFor(
			(rows) => rows.some((r) => r.startsWith(` ${total}. f`)) && !rows.some((r) => r.includes(`(${total}/${total})`)),
			"the list after Esc",
		);
		await sleep(300);
		const listed = pty.drawn().slice(drawnBefore);
		for (const agentSyntax of ["next:", '{"action"', "[pi-fold search]"]) expect(listed).not.toContain(agentSyntax);
		await openPicker();
		pty.send("\r");
		// The opened match fits the screen: its header, the line before, the match's own line.
		const header = /: bytes \d+-\d+ of \d+, the match at \d+, verified by/;
		const opened = await pty.waitFor((rows) => rows.some((r) => header.test(r)), "the opened match");
		const blank = opened.findIndex((r, i) => i > opened.findIndex((h) => header.test(h)) && r.trim() === "");
		expect(
			opened.slice(blank + 1, blank + 3).some((r) => r.toLowerCase().includes(query)),
			text(opened),
		).toBe(true);
	});
});
