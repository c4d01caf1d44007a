// Running Pi's CLI (and npm) as child processes for tests: the repo's Node 22, a clean
// environment, and results that never throw, so a failing command shows its output in the assertion.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { PI_CLI } from "../../harness/pi-cli.ts";

export { childEnv, PI_CLI } from "../../harness/pi-cli.ts";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));

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
			{ cwd: opts.cwd, env: opts.env, timeout: opts.timeoutMs ?? 240_000, maxBuffer: 16 * 1024 * 1024 },
			(error, stdout, stderr) => {
				const code = error ? (typeof error.code === "number" ? error.code : null) : 0;
				resolve({ code, stdout: String(stdout), stderr: String(stderr) });
			},
		);
		// `pi -p` reads piped stdin until EOF (it appends it to the prompt): give it an empty one.
		child.stdin?.end();
	});
}

/** Run the Pi CLI with Node 22 (vitest's own process.execPath). */
export function runPi(args: readonly string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): Promise<RunResult> {
	return run(process.execPath, [PI_CLI, ...args], { ...opts, timeoutMs: 240_000 });
}
