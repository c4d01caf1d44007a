// A tool run that outlives the prompt cache's lifetime, in a real AgentSession (faux provider,
// offline) on an injected clock: the cache expires while the tools run, after pi-fold decided at
// the assistant message's end not to listen at turn_end. It must hear that turn_end all the same,
// as the tool results end, and commit there while the next request is written whole anyway.
import { afterAll, describe, expect, it } from "vitest";
import { longToolRuns } from "../harness/long-tool-runs.ts";
import { expireCache, type FauxCost, makeSession, removeTempDirs } from "../harness/pi-harness.ts";
import { WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "../harness/workload.ts";
import { type PiFold, registerPiFold } from "../src/index.ts";

const COST: FauxCost = { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 0 };
/** The model declares a 5-second cache; three tool runs take 6 seconds each. */
const TTL_SECONDS = 5;
const RUN_SECONDS = 6;
const LONG_BATCHES = new Set([10, 18, 26]);

afterAll(removeTempDirs);

async function run(long: ReadonlySet<number>) {
	let now = 1_000_000;
	const clock = () => now;
	let fold: PiFold | undefined;
	const commits = () => fold?.runtime.get()?.status().commits.length ?? 0;
	const runs = longToolRuns(
		long,
		RUN_SECONDS,
		(ms) => {
			now += ms;
		},
		commits,
	);
	const h = await makeSession({
		cwd: WORKLOAD_ROOT,
		persist: true,
		contextWindow: 80_000,
		maxTokens: 4_096,
		cost: COST,
		promptCache: { short: TTL_SECONDS },
		extensions: [
			(pi) => {
				fold = registerPiFold(pi, { clock });
			},
			runs.extension,
		],
	});
	expireCache(h, TTL_SECONDS, clock);
	h.script(workloadSteps(32, { seed: 5, readLines: { min: 300, max: 1000 } }));
	await h.session.prompt(WORKLOAD_PROMPT);
	const status = fold?.runtime.get()?.status();
	if (!status) throw new Error("no pi-fold runtime");
	return { h, status, runs };
}

describe("a tool run longer than the prompt cache's lifetime", () => {
	it("ends its turn at a commit: pi-fold hears the boundary and folds while the cache is cold", async () => {
		const { h, status, runs } = await run(LONG_BATCHES);
		try {
			expect(h.extensionErrors).toEqual([]);
			expect(status.problems).toEqual([]);
			expect(status.rewrites.unattributed).toBe(0);
			expect(runs.runs.map((r) => r.batch)).toEqual([...LONG_BATCHES]);
			expect(runs.used()).toBe(LONG_BATCHES.size);
			expect(status.policy.coldCommits).toBe(LONG_BATCHES.size);
			expect(status.policy.lastCold).toBeDefined();
		} finally {
			h.dispose();
		}
	});

	it("no run outlives the cache: no commit is counted cold", async () => {
		const { h, status } = await run(new Set());
		try {
			expect(status.problems).toEqual([]);
			expect(status.policy.coldCommits).toBe(0);
		} finally {
			h.dispose();
		}
	});
});
