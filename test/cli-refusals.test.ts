// What the `pi-fold` command refuses, and that a refusal changes nothing: the input is never an
// output (`view --out`, `replay --svg` naming the session read, another session file or a file of a
// fold store), and a session file or a store that is a symlink loop is one clear sentence, exit 1,
// never an internal error. `--out` reports the bytes it wrote.
import { readdirSync, readFileSync, rmSync, statSync, symlinkSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { piEnv, removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { CLI } from "../harness/view-server.ts";
import { STORE_DIR_NAME } from "../src/store/index.ts";
import { fileEntries } from "./helpers/fixture-entries.ts";
import { childEnv, REPO_ROOT, type RunResult, run } from "./helpers/pi-cli.ts";
import { committedFolds, copySession, FOLD_WINDOW, recordedFold } from "./helpers/replay-recordings.ts";

afterAll(removeTempDirs);

const cli = (args: readonly string[]): Promise<RunResult> =>
	run(process.execPath, [CLI, ...args], { cwd: REPO_ROOT, env: childEnv(piEnv()), timeoutMs: 240_000 });

/** Every file under `dir` with its size and bytes' hash-free fingerprint: what a refusal must leave alone. */
function snapshot(dir: string): string[] {
	return readdirSync(dir, { recursive: true, withFileTypes: true })
		.map((e) => {
			const p = join(e.parentPath, e.name);
			const s = statSync(p, { throwIfNoEntry: false });
			return `${p} ${e.isSymbolicLink() ? "link" : (s?.size ?? "?")} ${s?.mtimeMs ?? ""}`;
		})
		.sort();
}

const storeOf = (file: string) => join(dirname(file), STORE_DIR_NAME, String(fileEntries(file)[0].id));

describe("the input is never an output", () => {
	let session: string;
	let other: string;
	let before: string[];
	const window = ["--window", String(FOLD_WINDOW)];

	beforeAll(async () => {
		const source = (await recordedFold()).file;
		session = copySession(source, "refuse-out");
		other = copySession(source, "refuse-other");
		before = [...snapshot(dirname(session)), ...snapshot(dirname(other))];
	}, 300_000);

	it("view --out and replay --svg naming the session read, another session, or a file of a fold store: exit 1, nothing written", async () => {
		const store = storeOf(session);
		const inStore = readdirSync(store, { recursive: true, withFileTypes: true }).find((e) => e.isFile());
		expect(inStore).toBeDefined();
		const cases: [string, RegExp][] = [
			[session, /is the session file being read/],
			[other, /is a Pi session file/],
			[join(inStore!.parentPath, inStore!.name), /is inside the fold store/],
			[join(store, "view.html"), /is inside the fold store/],
		];
		for (const [out, why] of cases) {
			for (const args of [
				["view", session, "--out", out, ...window],
				["replay", session, "--svg", out, ...window],
			]) {
				const r = await cli(args);
				expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(1);
				expect(r.stderr).toMatch(why);
				expect(r.stderr).toMatch(/is not written there \(give another path\)\n$/);
				expect(r.stdout).toBe("");
			}
		}
		expect([...snapshot(dirname(session)), ...snapshot(dirname(other))]).toEqual(before);
	}, 300_000);

	it("a symlink to the session is the session", async () => {
		const link = join(tempDir("refuse-link"), "page.html");
		symlinkSync(session, link);
		const was = snapshot(dirname(session));
		const r = await cli(["view", session, "--out", link, ...window]);
		expect(r.code, r.stderr).toBe(1);
		expect(r.stderr).toContain("is the session file being read");
		expect(snapshot(dirname(session))).toEqual(was);
	});

	it("--out prints the bytes it wrote (UTF-8, not UTF-16 units)", async () => {
		const out = join(tempDir("view-bytes"), "view.html");
		const r = await cli(["view", session, "--out", out, ...window]);
		expect(r.code, r.stderr).toBe(0);
		const printed = /\(([\d,]+) bytes\)/.exec(r.stdout)?.[1];
		expect(printed).toBeDefined();
		expect(Number(printed!.replaceAll(",", ""))).toBe(statSync(out).size);
		// The page holds characters outside ASCII, so the two counts differ: the test can tell them apart.
		expect(readFileSync(out, "utf8").length).not.toBe(statSync(out).size);
	}, 300_000);
});

describe("symlink loops", () => {
	it("a session file that is a symlink loop: every command refuses it in one sentence, exit 1", async () => {
		const loop = join(tempDir("loop"), "loop.jsonl");
		symlinkSync(loop, loop);
		for (const args of [
			["view", loop, "--out", join(dirname(loop), "v.html")],
			["peek", loop, "f0123456789"],
			["unfold", loop],
			["replay", loop, "--window", "1000"],
		]) {
			const r = await cli(args);
			expect(r.code, `${args[0]}: ${r.stderr}`).toBe(1);
			expect(r.stderr).toBe(`pi-fold ${args[0]}: ${loop}: a symlink loop (or too many symlinks), not a session file\n`);
		}
	}, 300_000);

	it("a fold store that is a symlink loop: view shows its folds damaged, peek and unfold refuse; never an internal error", async () => {
		const session = copySession((await recordedFold()).file, "store-loop");
		const store = storeOf(session);
		rmSync(store, { recursive: true });
		symlinkSync(store, store);
		const out = join(tempDir("store-loop-out"), "view.html");
		const viewed = await cli(["view", session, "--out", out, "--window", String(FOLD_WINDOW)]);
		expect(viewed.code, viewed.stderr).toBe(0);
		const html = readFileSync(out, "utf8");
		expect(html).toContain('"state":"damaged"');
		expect(html).toContain("is a symlink (a store's folders are never followed out of it)");
		const fold = committedFolds(session)[0].id;
		for (const args of [
			["peek", session, fold],
			["unfold", session],
		]) {
			const r = await cli(args);
			expect(r.code, `${args[0]}: ${r.stderr}`).toBe(1);
			expect(r.stderr).not.toContain("internal error");
			expect(r.stderr).toContain(fold);
		}
	}, 300_000);
});
