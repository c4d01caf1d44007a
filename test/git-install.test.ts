// pi-fold installed the way Pi installs a git source (`pi install git:host/owner/repo`): Pi clones
// the repository and runs `npm install --omit=dev --legacy-peer-deps` in the clone, nothing else,
// then loads `pi.extensions` (./src/index.ts) with jiti. The clone holds only committed files (no
// dist/, no build) and the runtime dependencies: the committed core must be all it needs.
// The repository cloned is the one these tests run in, at its committed HEAD (uncommitted changes
// are not in it): git's url.<path>.insteadOf sends Pi's https clone of a made-up host there, so
// Pi's own installer runs unchanged, offline but for the npm registry (msgpackr, from the cache
// when it has it).
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@earendil-works/pi-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSession, piEnv, removeTempDirs, type TestSession, tempDir, textOf } from "../harness/pi-harness.ts";
import { WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "../harness/workload.ts";
import { FOLD_TOOL_NAME, RECORD_TYPE } from "../src/vocabulary.ts";
import { childEnv, REPO_ROOT, runPi } from "./helpers/pi-cli.ts";
import { askStatus, expectAnsweredFrom, show } from "./helpers/pi-status.ts";

/** A git source on a host that does not exist; git rewrites it to this repository. */
const HOST = "git.invalid";
const REPO_PATH = "pi-fold/pi-fold";
const SOURCE = `git:${HOST}/${REPO_PATH}`;

/** The child environment plus one more git config entry (after any the caller's environment has). */
function gitRedirect(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
	const n = Number(env.GIT_CONFIG_COUNT ?? 0);
	return {
		...env,
		GIT_CONFIG_COUNT: String(n + 1),
		[`GIT_CONFIG_KEY_${n}`]: `url.${REPO_ROOT}.insteadOf`,
		[`GIT_CONFIG_VALUE_${n}`]: `https://${HOST}/${REPO_PATH}`,
	};
}

const env = gitRedirect(childEnv(piEnv()));
const agentDir = env.PI_CODING_AGENT_DIR!;
/** Where Pi puts a user-scope git package: <agent dir>/git/<host>/<path>. */
const clone = join(agentDir, "git", HOST, REPO_PATH);
const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T;

afterAll(removeTempDirs);

beforeAll(async () => {
	const work = tempDir("work-git");
	const installed = await runPi(["install", SOURCE], { cwd: work, env });
	if (installed.code !== 0 || !installed.stdout.includes(`Installed ${SOURCE}`)) {
		throw new Error(`pi install ${SOURCE} failed\n${show(installed)}`);
	}
}, 300_000);

describe(`\`pi install ${SOURCE}\` (Pi clones the repository and installs its runtime dependencies)`, () => {
	it("leaves a clone of the committed tree with the committed core, no dist/, and only runtime dependencies", () => {
		expect(readJson<{ packages: string[] }>(join(agentDir, "settings.json")).packages).toEqual([SOURCE]);
		expect(existsSync(join(clone, ".git"))).toBe(true);
		expect(existsSync(join(clone, "wasm/pi-fold-core.wasm"))).toBe(true);
		expect(existsSync(join(clone, "dist"))).toBe(false);
		const pkg = readJson<{ dependencies: Record<string, string>; devDependencies: Record<string, string> }>(
			join(clone, "package.json"),
		);
		const modules = readdirSync(join(clone, "node_modules"));
		for (const dep of Object.keys(pkg.dependencies)) expect(modules, dep).toContain(dep);
		// No dev dependency (no AssemblyScript, no TypeScript, no Pi host packages): nothing could build.
		for (const dev of Object.keys(pkg.devDependencies)) {
			expect(existsSync(join(clone, "node_modules", dev)), dev).toBe(false);
		}
	});

	it("`pi -p`: Pi loads the package from its settings, and the tool answers from the clone's core", async () => {
		const result = await askStatus(env, tempDir("work-git-status"));
		expectAnsweredFrom(result, clone, env);
	}, 300_000);

	it("`pi install <that clone>` (a local folder, never built): the tool answers from the folder", async () => {
		const other = childEnv(piEnv());
		const work = tempDir("work-git-folder");
		const installed = await runPi(["install", clone], { cwd: work, env: other });
		expect(installed.code, show(installed)).toBe(0);
		expectAnsweredFrom(await askStatus(other, work), clone, other);
	}, 300_000);
});

describe("the cloned package in a real AgentSession: the core answers and a commit folds", () => {
	let h: TestSession;
	const statusCall = "status-after-work";
	const statusText = () => {
		const result = h.session.messages.find((m) => m.role === "toolResult" && m.toolCallId === statusCall);
		if (result?.role !== "toolResult") throw new Error("no status result");
		return textOf(result);
	};

	beforeAll(async () => {
		// Pi resolves the folder's pi.extensions and loads ./src/index.ts with jiti, as for `pi -e <folder>`.
		// The window is small, so the workload reaches pi-fold's commit threshold on its own.
		h = await makeSession({ cwd: WORKLOAD_ROOT, persist: true, contextWindow: 24_000, extensionPaths: [clone] });
		h.script(workloadSteps(12, { seed: 7 }));
		await h.session.prompt(WORKLOAD_PROMPT);
		h.script([
			fauxAssistantMessage(fauxToolCall(FOLD_TOOL_NAME, { action: "status" }, { id: statusCall }), {
				stopReason: "toolUse",
			}),
			fauxAssistantMessage(fauxText("noted")),
		]);
		await h.session.prompt("Report pi-fold's status.");
	}, 600_000);
	afterAll(() => h?.dispose());

	it("reports the clone's core loaded and its self-check passing", () => {
		const text = statusText();
		const core = text.split("\n").find((line) => line.startsWith("core: "));
		expect(core).toMatch(/^core: pi-fold-core \d+\.\d+\.\d+ \(WebAssembly\) from /);
		expect(core?.endsWith(` from ${join(clone, "wasm/pi-fold-core.wasm")}`)).toBe(true);
		expect(text).toContain("self-check: ok");
		expect(text).toContain("problems: none");
		expect(h.extensionErrors).toEqual([]);
	});

	it("committed folds on its own, and Pi's compaction never ran", () => {
		const commits = Number(statusText().match(/; commits: (\d+)$/m)?.[1]);
		expect(commits).toBeGreaterThan(0);
		const branch = h.session.sessionManager.getBranch();
		expect(branch.filter((e) => e.type === "context_edit").length).toBeGreaterThan(0);
		expect(branch.filter((e) => e.type === "custom" && e.customType === RECORD_TYPE).length).toBeGreaterThan(0);
		expect(branch.filter((e) => e.type === "compaction")).toEqual([]);
		// The last request shows folded spans as briefs naming the tool that reads them back.
		const last = h.captured[h.captured.length - 1].context.messages;
		expect(JSON.stringify(last)).toContain(FOLD_TOOL_NAME);
	});
});
