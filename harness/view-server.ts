// `pi-fold view` run as a person runs it: the real CLI in a child process, its URL read from the
// first line it prints; stopped with SIGINT as Ctrl-C would.
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type Browser, chromium } from "playwright-core";

export const CLI = fileURLToPath(new URL("../src/cli/cli.ts", import.meta.url));
const REPO_ROOT = fileURLToPath(new URL("../", import.meta.url));

export interface RunningView {
	url: string;
	origin: string;
	port: number;
	child: ChildProcess;
	stderr(): string;
	stop(): Promise<number | null>;
}

/** Start `pi-fold view` with `args` in `env` (a test's isolated Pi environment); resolves once it prints its URL. */
export function startView(args: readonly string[], env: NodeJS.ProcessEnv): Promise<RunningView> {
	const child = spawn(process.execPath, [CLI, "view", ...args], {
		cwd: REPO_ROOT,
		env,
		stdio: ["ignore", "pipe", "pipe"],
	});
	let out = "";
	let err = "";
	child.stderr?.setEncoding("utf8").on("data", (d: string) => {
		err += d;
	});
	const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
	return new Promise((resolve, reject) => {
		child.stdout?.setEncoding("utf8").on("data", (d: string) => {
			out += d;
			const line = out.split("\n")[0];
			if (!out.includes("\n")) return;
			const m = /^(http:\/\/127\.0\.0\.1:(\d+))\/[0-9a-f]{32}\/$/.exec(line);
			if (!m) {
				reject(new Error(`pi-fold view printed ${JSON.stringify(out)} (stderr: ${err})`));
				return;
			}
			resolve({
				url: line,
				origin: m[1],
				port: Number(m[2]),
				child,
				stderr: () => err,
				stop: () => {
					child.kill("SIGINT");
					return exited;
				},
			});
		});
		void exited.then((code) => reject(new Error(`pi-fold view exited (${code}) before printing its URL: ${err}`)));
	});
}

/** The headless Chromium the view's tests drive (`lookup` from harness/chromium.ts), with nothing that reaches the network. */
export function launchViewBrowser(lookup: { executablePath: string; env: NodeJS.ProcessEnv }): Promise<Browser> {
	return chromium.launch({
		executablePath: lookup.executablePath,
		env: lookup.env,
		args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
		timeout: 120_000,
	});
}
