// `pi-fold unfold` killed (kill -9) at every step of its write: the session file is either as it was
// or wholly unfolded, never half; the temp copy a kill leaves is removed by the next run, which then
// finishes the job. Bounded: six kill points, each one run killed and one run after it.
import { readdirSync, readFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { piEnv, removeTempDirs } from "../../harness/pi-harness.ts";
import { CLI } from "../../harness/view-server.ts";
import { childEnv, REPO_ROOT, run } from "../helpers/pi-cli.ts";
import { copySession, recordedFold } from "../helpers/replay-recordings.ts";

afterAll(removeTempDirs);
const CHILD = fileURLToPath(new URL("./unfold-kill-child.ts", import.meta.url));
const STEPS = ["open", "first write", "second write", "fsync", "close", "rename"];

const leftovers = (file: string) =>
	readdirSync(dirname(file)).filter((n) => n.startsWith(`${basename(file)}.pi-fold-unfold-`));

describe("pi-fold unfold killed while it writes", () => {
	let source: string;
	let unfolded: string;

	beforeAll(async () => {
		source = (await recordedFold()).file;
		// The file as an unkilled run leaves it, for comparison (its new entries' ids are random: compare lines before them).
		unfolded = copySession(source, "unfold-whole");
		const r = await run(process.execPath, [CLI, "unfold", unfolded], { cwd: REPO_ROOT, env: childEnv(piEnv()) });
		expect(r.code, r.stderr).toBe(0);
	}, 300_000);

	it.each(STEPS.map((step, i) => [i + 1, step] as const))(
		"after step %i (%s): the file is whole, and the next run leaves no temp copy",
		async (at) => {
			const file = copySession(source, "unfold-kill");
			const original = readFileSync(file);
			const killed = await run(process.execPath, [CHILD, "unfold", file], {
				cwd: REPO_ROOT,
				env: { ...childEnv(piEnv()), KILL_AT: String(at) },
			});
			expect(killed.code, killed.stderr).toBeNull(); // killed by the signal
			const after = readFileSync(file);
			const renamed = at === STEPS.length;
			if (renamed) expect(after.length).toBe(readFileSync(unfolded).length);
			else expect(after.equals(original)).toBe(true);
			expect(leftovers(file)).toHaveLength(renamed ? 0 : 1);

			const next = await run(process.execPath, [CLI, "unfold", file], { cwd: REPO_ROOT, env: childEnv(piEnv()) });
			expect(next.code, next.stderr).toBe(0);
			expect(next.stdout).toMatch(renamed ? /nothing to unfold/ : /The session now reads the same without pi-fold\./);
			expect(leftovers(file)).toEqual([]);
			expect(readFileSync(file).length).toBe(readFileSync(unfolded).length);
		},
		60_000,
	);
});
