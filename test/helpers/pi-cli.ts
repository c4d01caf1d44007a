// Running Pi's CLI (and npm) as child processes for tests: the repo's Node 22, a clean
// environment, and results that never throw, so a failing command shows its output in the assertion.
import { execFile } from "node:child_process";
import { homedir } from "node:os";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { PiEnv } from "../../harness/pi-harness.ts";

/** Pi 1.6's `pi` bin (the bundled CLI) from the repo's devDependencies. */
export const PI_CLI = fileURLToPath(
	new URL("../../node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js", import.meta.url),
);

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

// Read before any test changes HOME: child npm runs share the developer's/CI's download cache.
const NPM_CACHE = process.env.npm_config_cache ?? `${homedir()}/.npm`;

export interface RunResult {
	code: number | null;
	stdout: string;
	stderr: string;
}

/** Run a command to completion; a non-zero exit is reported in `code`, not thrown. */
export function run(
	command: string,
	args: readonly string[],
	opts: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<RunResult> {
	return new Promise((resolve) => {
		const child = execFile(
			command,
			args,
			{ cwd: opts.cwd, env: opts.env, timeout: opts.timeoutMs ?? 60_000, maxBuffer: 16 * 1024 * 1024 },
			(error, stdout, stderr) => {
				const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
				resolve({ code, stdout: String(stdout), stderr: String(stderr) });
			},
		);
		// `pi -p` reads piped stdin until EOF (it appends it to the prompt): give it an empty one.
		child.stdin?.end();
	});
}

/**
 * The environment for a child Pi or npm: this process's, minus inherited npm lifecycle and Pi
 * variables (an outer `npm test` exports npm_config_*), with this Node first on PATH (so `npm`,
 * which Pi spawns for installs, runs on Node 22 too), the shared npm cache and the Pi isolation vars.
 */
export function childEnv(pi: PiEnv): NodeJS.ProcessEnv {
	const env: NodeJS.ProcessEnv = {};
	for (const [key, value] of Object.entries(process.env)) {
		if (!/^(npm_|PI_)/i.test(key) && key !== "NODE_OPTIONS") env[key] = value;
	}
	return {
		...env,
		...pi,
		PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ""}`,
		npm_config_cache: NPM_CACHE,
		npm_config_prefer_offline: "true", // use cached registry data when present; fetch only what is missing
		npm_config_update_notifier: "false",
		npm_config_fund: "false",
		npm_config_audit: "false",
	};
}

/** Run the Pi CLI with Node 22 (vitest's own process.execPath). */
export function runPi(args: readonly string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<RunResult> {
	return run(process.execPath, [PI_CLI, ...args], { ...opts, timeoutMs: 60_000 });
}
