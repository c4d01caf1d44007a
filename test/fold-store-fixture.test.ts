// The fold store and lattice on a real session: fold every complete tool batch of the 2.4 MB
// fixture, consolidate roots, write the store and the session records, then reopen everything
// in a new process and check that every fold verifies and every leaf comes back byte for byte.
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { copyFixture, FIXTURE_MISSING, skipFixture } from "../harness/fixture.ts";
import { foldEverything } from "../harness/fold-fixture.ts";
import { removeTempDirs, tempDir } from "../harness/pi-harness.ts";

if (skipFixture) console.log(`fold-store-fixture: ${FIXTURE_MISSING}`);
afterAll(removeTempDirs);

describe.skipIf(skipFixture)("a real 2.4 MB session, folded and reopened", () => {
	it("verifies every fold and restores every leaf byte for byte in a new process", () => {
		const dir = tempDir("fixture");
		const file = copyFixture(dir);
		const core = nodeCore();
		const sm = SessionManager.open(file, dir);
		const folded = foldEverything(sm, core);
		expect(folded.batches).toBeGreaterThan(100); // the fixture has hundreds of tool results in context
		expect(folded.consolidations).toBeGreaterThan(0);
		const mine = folded.lattice.folds().map((f) => [f.id, f.kind, f.start, f.end, f.parent, f.brief]);

		const child = spawnSync(
			process.execPath,
			[fileURLToPath(new URL("./fixtures/reopen-folded-session.ts", import.meta.url)), file, dir],
			{ encoding: "utf8", maxBuffer: 64 * 1024 * 1024 },
		);
		expect(child.status, child.stderr).toBe(0);
		const seen = JSON.parse(child.stdout.trim().split("\n").at(-1) ?? "{}");

		expect(seen.problems).toEqual([]);
		expect(seen.mismatches).toEqual([]);
		expect(seen.snapshot).toEqual(mine); // the same lattice, rebuilt from the records alone
		expect(seen.verified).toBe(mine.length);
		expect(seen.leavesCompared).toBeGreaterThanOrEqual(folded.batches * 2); // each batch: a call and a result
		expect(seen.allRaw).toBe(true);
		expect(seen.roots).toBeLessThan(folded.batches); // consolidation reduced the visible roots
		// the store is next to the session file, under the session id
		expect(readdirSync(dir)).toContain("pi-fold");
	});
});
