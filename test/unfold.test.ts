// The way out of pi-fold, through the real `pi-fold` CLI: `peek` reads one fold of a session file
// without Pi, verified from the store; `unfold` gives every fold its original back. The round
// trip: a session folded by pi-fold inside a real Pi (faux model), unfolded, then reopened by Pi
// alone (no pi-fold loaded): the request the model receives holds every original and nothing of
// pi-fold's (no brief, no notice, no mention of its tool).
import { cpSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { fauxAssistantMessage, fauxText } from "@earendil-works/pi-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSession, piEnv, removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { WORKLOAD_ROOT } from "../harness/workload.ts";
import { type PiFold, registerPiFold } from "../src/index.ts";
import { FOLD_TOOL_NAME } from "../src/vocabulary.ts";
import { type FileLine, fileEntries } from "./helpers/fixture-entries.ts";
import { childEnv, REPO_ROOT, type RunResult, run } from "./helpers/pi-cli.ts";
import { recordingUi } from "./helpers/recording-ui.ts";
import { committedFolds, copySession, FOLD_BUDGET, FOLD_WINDOW, recordedFold } from "./helpers/replay-recordings.ts";
import { pairingProblems } from "./helpers/requests.ts";

const CLI = fileURLToPath(new URL("../src/cli/cli.ts", import.meta.url));
const ENV = childEnv(piEnv());

afterAll(removeTempDirs);

function cli(args: readonly string[]): Promise<RunResult> {
	return run(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, env: ENV, timeoutMs: 240_000 });
}

/** What the model receives when Pi alone (no pi-fold) reopens a copy of `file` and is asked one thing. */
async function modelView(file: string): Promise<unknown[]> {
	const dir = tempDir("pi-alone");
	const copy = join(dir, basename(file));
	cpSync(file, copy);
	const h = await makeSession({ open: copy, sessionDir: dir, cwd: WORKLOAD_ROOT });
	try {
		h.script([fauxAssistantMessage(fauxText("noted"))]);
		await h.session.prompt("Where were we?");
		expect(h.captured).toHaveLength(1);
		return h.captured[0].context.messages as unknown[];
	} finally {
		h.dispose();
	}
}

let recorded: string;
beforeAll(async () => {
	recorded = (await recordedFold()).file;
	expect(committedFolds(recorded).length).toBeGreaterThan(1);
}, 300_000);

describe("pi-fold unfold: the session reads the same in a Pi without pi-fold", () => {
	it("every original comes back, from the store, and nothing of pi-fold is left in the model's view", async () => {
		const file = copySession(recorded, "unfold-session");
		const briefs = committedFolds(file).map((f) => f.brief);
		// Before: Pi alone shows the briefs, which send the model to a tool it no longer has.
		const before = JSON.stringify((await modelView(file)).filter((m) => (m as { role: string }).role !== "system"));
		expect(before).toContain(FOLD_TOOL_NAME);
		expect(briefs.some((b) => before.includes(JSON.stringify(b).slice(1, -1)))).toBe(true);

		const lines = fileEntries(file).length;
		const r = await cli(["unfold", file]);
		expect(r.code, r.stderr).toBe(0);
		expect(r.stdout).toMatch(/unfolded: \d+ entries of \d+ folds back to their originals .*verified by SHA-256/);
		// After the edits, pi-fold's own expand records, outermost first, so that a pi-fold installed
		// again reads the session as unfolded; every one names a fold the session recorded.
		const appended = fileEntries(file).slice(lines);
		const expands = appended.filter((e) => e.type === "custom").map((e) => e.data as { op: string; id: string });
		expect(expands.length).toBeGreaterThan(0);
		expect(new Set(expands.map((d) => d.op))).toEqual(new Set(["expand"]));
		const foldIds = new Set(committedFolds(file).map((f) => f.id));
		for (const d of expands) expect(foldIds.has(d.id), d.id).toBe(true);
		expect(appended.slice(0, appended.length - expands.length).every((e) => e.type === "context_edit")).toBe(true);
		const after = await modelView(file);
		// Pi's own system entries record the tool set as it changes (and tell the model the tool was
		// removed); they are Pi's, not editable, and not pi-fold's to take back.
		const conversation = after.filter((m) => (m as { role: string }).role !== "system");
		expect(JSON.stringify(after)).toContain('"toolsRemoved":[{"name":"pi_fold_context"}]');
		const text = JSON.stringify(conversation);
		expect(text).not.toContain(FOLD_TOOL_NAME);
		for (const b of briefs) expect(text).not.toContain(JSON.stringify(b).slice(1, -1));
		// Every message the session recorded is in the request as it was recorded, in order, and the new prompt.
		const originals = fileEntries(file)
			.filter((e) => e.type === "message" && (e.message as { role: string }).role !== "system")
			.map((e) => e.message);
		expect(originals.length).toBeGreaterThan(10);
		expect(conversation.slice(0, originals.length)).toEqual(originals);
		expect(conversation).toHaveLength(originals.length + 1);
	}, 300_000);

	it("a second run finds nothing to do; --dry-run writes nothing", async () => {
		const file = copySession(recorded, "unfold-session");
		const bytes = readFileSync(file);
		const dry = await cli(["unfold", file, "--dry-run"]);
		expect(dry.code, dry.stderr).toBe(0);
		expect(dry.stdout).toContain("nothing written (--dry-run)");
		expect(readFileSync(file).equals(bytes)).toBe(true);
		expect((await cli(["unfold", file])).code).toBe(0);
		const grown = readFileSync(file);
		expect(grown.subarray(0, bytes.length).equals(bytes)).toBe(true); // appended, never rewritten
		const again = await cli(["unfold", file]);
		expect(again.code, again.stderr).toBe(0);
		expect(again.stdout).toContain("nothing to unfold");
		expect(readFileSync(file).equals(grown)).toBe(true);
	}, 300_000);
});

describe("unfolded, then opened again with pi-fold still installed", () => {
	it("the expands are the truth: nothing needs action, and the next prompt reaches the model", async () => {
		const file = copySession(recorded, "unfold-reopen");
		const r = await cli(["unfold", file]);
		expect(r.code, r.stderr).toBe(0);
		let fold: PiFold | undefined;
		const h = await makeSession({
			open: file,
			sessionDir: dirname(file),
			cwd: WORKLOAD_ROOT,
			// Room for the whole unfolded session (one past the window would be Pi's compaction's to take).
			contextWindow: 2 * FOLD_WINDOW,
			extensions: [
				(pi) => {
					// Its defaults: the unfolded session fits the window (a providerInputBudget below it would hold).
					fold = registerPiFold(pi);
				},
			],
		});
		try {
			h.script([fauxAssistantMessage(fauxText("noted"))]);
			await h.session.prompt("Where were we?");
			expect(h.captured).toHaveLength(1);
			const status = fold?.runtime.get()?.status();
			expect(status?.fence.stopped, JSON.stringify(status?.fence)).toBe(0);
			expect(status?.problemsOpen, JSON.stringify(status?.problems)).toBe(0);
			// Every fold the records name is expanded: none is shown as a brief.
			expect(JSON.stringify(h.captured[0].context.messages)).not.toContain("[pi-fold f");
			expect(pairingProblems(h.captured[0].context.messages)).toEqual([]);
		} finally {
			h.dispose();
		}
	}, 300_000);
});

describe("/fold-leave: the way out, asked inside Pi", () => {
	it("names the unfold command for this session; run as given with Pi closed, Pi alone reads the originals", async () => {
		const file = copySession(recorded, "unfold-session");
		const h = await makeSession({
			open: file,
			sessionDir: dirname(file),
			cwd: WORKLOAD_ROOT,
			extensions: [(pi) => void registerPiFold(pi, { providerInputBudget: FOLD_BUDGET })],
		});
		const { ui, notes } = recordingUi();
		try {
			await h.session.bindExtensions({ uiContext: ui, mode: "tui" });
			await h.session.prompt("/fold-leave");
		} finally {
			h.dispose(); // quit Pi, as the answer says
		}
		expect(h.captured).toEqual([]);
		const answer = notes.find((n) => n.message.startsWith("To leave pi-fold"));
		expect(answer?.type).toBe("info");
		const line = answer?.message.split("\n").find((l) => l.startsWith(`  2. ${process.execPath} `));
		expect(line, answer?.message).toBeDefined();
		const command = (line as string).replace(/^ {2}2\. /, "");
		expect(command).toContain(`unfold ${file}`);
		const r = await run("sh", ["-c", command], { cwd: REPO_ROOT, env: ENV });
		expect(r.code, r.stderr).toBe(0);
		expect(r.stdout).toContain("The session now reads the same without pi-fold.");
		const view = JSON.stringify((await modelView(file)).filter((m) => (m as { role: string }).role !== "system"));
		expect(view).not.toContain(FOLD_TOOL_NAME);
	}, 300_000);
});

describe("a checkout that was never built (Pi's git install)", () => {
	it("/fold-leave names the command's source, and Node runs it: the session unfolds", async () => {
		// What a git install holds: the sources, the committed core, runtime dependencies; no dist/.
		const copy = tempDir("unbuilt");
		for (const part of ["src", "bindings", "wasm", "package.json"])
			cpSync(join(REPO_ROOT, part), join(copy, part), { recursive: true });
		symlinkSync(join(REPO_ROOT, "node_modules"), join(copy, "node_modules"));
		const file = copySession(recorded, "unfold-session");
		const leave = (await import(
			pathToFileURL(join(copy, "src/commands/fold-leave.ts")).href
		)) as typeof import("../src/commands/fold-leave.ts");
		const answer = leave.runFoldLeave(
			{ get: () => undefined } as never,
			{
				sessionManager: { getSessionFile: () => file },
			} as never,
		);
		// Run by the Node that runs Pi (here, the tests'), not whichever `node` is first on PATH.
		const line = answer.text.split("\n").find((l) => l.startsWith("  2. "));
		expect(line, answer.text).toBe(`  2. ${process.execPath} ${join(copy, "src/cli/bin.ts")} unfold ${file}`);
		expect(answer.text).toContain("docs/LEAVING.md");
		// A PATH whose `node` refuses TypeScript, as Node 20 does: the command does not depend on it.
		const oldNode = tempDir("old-node");
		writeFileSync(join(oldNode, "node"), "#!/bin/sh\necho 'ERR_UNKNOWN_FILE_EXTENSION' >&2\nexit 1\n", { mode: 0o755 });
		const env = { ...ENV, PATH: `${oldNode}:${ENV.PATH ?? ""}` };
		const r = await run("sh", ["-c", (line as string).replace(/^ {2}2\. /, "")], { cwd: copy, env });
		expect(r.code, r.stderr).toBe(0);
		expect(r.stdout).toContain("The session now reads the same without pi-fold.");
	}, 300_000);
});

describe("pi-fold peek: one fold from the session file, without Pi", () => {
	it("prints the fold's entries, verified; --raw prints the exact session-file lines", async () => {
		const file = copySession(recorded, "unfold-session");
		const [fold] = committedFolds(file);
		const r = await cli(["peek", file, fold.id]);
		expect(r.code, r.stderr).toBe(0);
		expect(r.stdout).toContain(`fold ${fold.id} (`);
		expect(r.stdout).toContain("verified by SHA-256");
		expect(r.stdout).toContain(`brief: ${fold.brief}`);
		const raw = await cli(["peek", file, fold.id, "--raw"]);
		expect(raw.code, raw.stderr).toBe(0);
		const lines = new Set(readFileSync(file, "utf8").split("\n"));
		const leaves = raw.stdout.trimEnd().split("\n");
		expect(leaves.length).toBeGreaterThan(0);
		for (const leaf of leaves) expect(lines.has(leaf), leaf.slice(0, 80)).toBe(true);
		for (const leaf of leaves) expect(r.stdout).toContain(`## entry ${(JSON.parse(leaf) as FileLine).id} · `);
	}, 300_000);

	it("an unknown id is named with the folds the session has, exit 1", async () => {
		const file = copySession(recorded, "unfold-session");
		const ids = committedFolds(file).map((f) => f.id);
		for (const id of ["f0000000000", "nope"]) {
			const r = await cli(["peek", file, id]);
			expect(r.code).toBe(1);
			expect(r.stdout).toBe("");
			expect(r.stderr).toContain(`no fold ${id} in this session (its folds: ${ids[0]}`);
		}
	}, 300_000);

	it("a damaged store object is refused by its SHA-256, by peek and unfold alike, and unfold writes nothing", async () => {
		const file = copySession(recorded, "unfold-session");
		const packs = join(dirname(file), "pi-fold", (fileEntries(file)[0] as { id: string }).id, "packs");
		for (const name of readdirSync(packs)) {
			const pack = join(packs, name);
			const bytes = readFileSync(pack);
			// Flip bytes all through the pack: every object in it is damaged.
			for (let i = 64; i < bytes.length; i += 97) bytes[i] ^= 0x20;
			writeFileSync(pack, bytes);
		}
		const before = readFileSync(file);
		const [fold] = committedFolds(file);
		const peek = await cli(["peek", file, fold.id]);
		expect(peek.code).toBe(1);
		expect(peek.stderr).toContain(`fold ${fold.id} cannot be read back`);
		expect(peek.stderr).not.toMatch(/\n\s+at /);
		const unfold = await cli(["unfold", file]);
		expect(unfold.code).toBe(1);
		expect(unfold.stderr).toContain("cannot be read back");
		expect(readFileSync(file).equals(before)).toBe(true);
	}, 300_000);
});
