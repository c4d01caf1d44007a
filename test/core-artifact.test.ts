// The compiled core is committed (wasm/pi-fold-core.wasm), so a git clone, an npm install and a
// bundler get it without a toolchain. These tests keep it equal to its source: the core compiled
// now from assembly/ (in a temp copy; nothing in the repo is written) must be the committed bytes,
// and one changed byte of assembly/ without a rebuild must be caught, naming the command to run.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { CORE_FILE, copyCoreSources, coreDrift, REBUILD_COMMAND } from "../scripts/build-wasm.ts";
import { REPO_ROOT } from "./helpers/pi-cli.ts";

afterAll(removeTempDirs);

const git = (...args: string[]) => execFileSync("git", args, { cwd: REPO_ROOT, encoding: "utf8" });

describe("the committed core", () => {
	it("is tracked by git, not ignored, and marked binary", () => {
		expect(git("ls-files", "--", CORE_FILE).trim()).toBe(CORE_FILE);
		expect(() => git("check-ignore", "-q", CORE_FILE)).toThrow(); // exit 1: not ignored
		expect(git("check-attr", "binary", "--", CORE_FILE)).toContain("binary: set");
	});

	it("is exactly what assembly/ compiles to now", () => {
		expect(coreDrift(REPO_ROOT)).toBeUndefined();
	}, 600_000);

	it("fails, naming the command, when one byte of assembly/ changed without a rebuild", () => {
		const copy = tempDir("core-drift");
		copyCoreSources(REPO_ROOT, copy);
		// One digit of the ABI version: a change the compiled module must show.
		const file = join(copy, "assembly/index.ts");
		const before = readFileSync(file);
		const at = before.indexOf(" << 8)") - 1;
		expect(at).toBeGreaterThan(0);
		const after = Buffer.from(before);
		after[at] = before[at] === 0x39 ? 0x30 : before[at] + 1;
		expect(after.filter((b, i) => b !== before[i])).toHaveLength(1);
		writeFileSync(file, after);
		const drift = coreDrift(REPO_ROOT, copy);
		expect(drift).toContain(`${CORE_FILE} (`);
		expect(drift).toContain("is not what assembly/ compiles to");
		expect(drift).toContain(`run \`${REBUILD_COMMAND}\` and commit ${CORE_FILE}`);
	}, 600_000);
});
