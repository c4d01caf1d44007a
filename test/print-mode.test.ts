// Print mode (`pi -p`) never ends silently at pi-fold's edges: a request pi-fold had to stop says
// why on stderr, and a run whose last turn commits still prints the model's answer on stdout (the
// commit appends no receipt after it). Real `pi` child processes, an offline scripted model.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { piEnv, removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { WORKLOAD_DONE, WORKLOAD_PROMPT, WORKLOAD_ROOT } from "../harness/workload.ts";
import { PRINT_MODEL, PRINT_PROVIDER, PRINT_STAGES } from "./fixtures/print-run-ext.ts";
import { childEnv, REPO_ROOT, runPi } from "./helpers/pi-cli.ts";

afterAll(removeTempDirs);

const args = ["-e", `${REPO_ROOT}test/fixtures/print-run-ext.ts`, "--provider", PRINT_PROVIDER, "--model", PRINT_MODEL];
args.push("--tools", "read,bash,ls", "--no-session");

describe("print mode at the edges of the window", () => {
	it("a request pi-fold stops says why on stderr", async () => {
		const env = childEnv(piEnv());
		writeFileSync(
			join(env.PI_CODING_AGENT_DIR ?? "", "settings.json"),
			JSON.stringify({ compaction: { enabled: false } }),
		);
		const r = await runPi(["-p", "print the numbers", ...args], {
			cwd: tempDir("print-fence"),
			env: { ...env, PI_FOLD_PRINT_RUN: "fence" },
		});
		expect(r.stderr).toMatch(
			/pi-fold stopped a request before sending it: ~[\d,]+ tokens would exceed what the model's window of 16,000 can take/,
		);
		expect(r.stderr).toContain("Pi's compaction did not run: compaction is off in Pi's settings");
		expect(r.stdout).not.toContain("never asked");
	}, 300_000);

	it("a run that commits to its end prints the model's last answer", async () => {
		const env = childEnv(piEnv());
		const r = await runPi(["-p", WORKLOAD_PROMPT, ...args], {
			cwd: WORKLOAD_ROOT,
			env: { ...env, PI_FOLD_PRINT_RUN: "workload" },
		});
		expect(r.code, r.stderr).toBe(0);
		expect(r.stdout.trim()).toBe(`${WORKLOAD_DONE} in ${PRINT_STAGES} stages.`);
	}, 300_000);
});
