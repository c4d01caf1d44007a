// `pi-fold view` refuses what it cannot use with one sentence and the right exit code, and without
// a file opens the current folder's most recent Pi session (here written to a file with --out).
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { piEnv, removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { CLI } from "../harness/view-server.ts";
import { sessionDirOf } from "../src/view/recent-session.ts";
import { childEnv, REPO_ROOT, type RunResult, run } from "./helpers/pi-cli.ts";
import { FOLD_WINDOW, recordedFold } from "./helpers/replay-recordings.ts";

afterAll(removeTempDirs);

function view(args: readonly string[], env = childEnv(piEnv()), cwd = REPO_ROOT): Promise<RunResult> {
	return run(process.execPath, [CLI, "view", ...args], { cwd, env, timeoutMs: 240_000 });
}

describe("pi-fold view refuses, naming the problem", () => {
	it("a missing file, a file that is not a session, a folder with no sessions: exit 1, and why", async () => {
		const dir = tempDir("view-bad");
		const notSession = join(dir, "notes.jsonl");
		writeFileSync(notSession, '{"hello":"world"}\n');
		const cases: [string[], RegExp][] = [
			[[join(dir, "missing.jsonl")], /^pi-fold view: .*missing\.jsonl: no such file\n$/],
			[[notSession], /^pi-fold view: .*notes\.jsonl: not a valid Pi session:\n {2}line 1: not a Pi session entry/],
			[[], /^pi-fold view: no Pi sessions for .* give a session file\n$/],
		];
		for (const [args, message] of cases) {
			const r = await view(args, childEnv(piEnv()), dir);
			expect(r.code, r.stderr).toBe(1);
			expect(r.stderr).toMatch(message);
			expect(r.stdout).toBe("");
		}
	}, 300_000);

	it("bad usage: exit 2 with the usage", async () => {
		const r = await view(["--port", "80"]);
		expect(r.code).toBe(2);
		expect(r.stderr).toContain("pi-fold: unknown option --port for view");
		expect(r.stderr).toContain("pi-fold view [session.jsonl]");
	});

	it("an --out it cannot write: exit 1, and nothing left behind", async () => {
		const file = (await recordedFold()).file;
		const out = join(tempDir("view-out"), "no-such-dir", "view.html");
		const r = await view([file, "--out", out, "--window", String(FOLD_WINDOW)]);
		expect(r.code, r.stderr).toBe(1);
		expect(r.stderr).toMatch(/^pi-fold view: .*view\.html: cannot write the page \(ENOENT\)\n$/);
		expect(existsSync(dirname(out))).toBe(false);
	}, 300_000);
});

describe("pi-fold view without a file", () => {
	it("opens the most recent session of the folder it runs in, where Pi keeps it", async () => {
		const env = childEnv(piEnv());
		const cwd = tempDir("view-project");
		const recorded = (await recordedFold()).file;
		const dir = sessionDirOf(cwd, env);
		mkdirSync(dir, { recursive: true });
		cpSync(dirname(recorded), dir, { recursive: true });
		const out = join(tempDir("view-out"), "view.html");
		const r = await view(["--out", out, "--window", String(FOLD_WINDOW)], env, cwd);
		expect(r.code, r.stderr).toBe(0);
		const html = readFileSync(out, "utf8");
		expect(html).toContain(basename(recorded));
		expect(html).toContain('"mode":"file"');
	}, 300_000);
});
