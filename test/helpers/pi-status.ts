// Asking an installed pi-fold for its status through the Pi CLI (`pi -p` with the scripted offline
// model of test/fixtures/faux-status-ext.ts), and checking that the answer came from the Wasm core
// of the copy Pi loaded. Shared by the install-route tests (the packed tarball, a git clone).
import { hash } from "node:crypto";
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { loadCoreFile } from "../../bindings/node.ts";
import { STATUS_PROBE } from "../../src/operations/core-report.ts";
import { FIXTURE_MODEL, FIXTURE_PROVIDER } from "../fixtures/faux-status-ext.ts";
import { REPO_ROOT, type RunResult, runPi } from "./pi-cli.ts";

const versionOf = (path: string) => (JSON.parse(readFileSync(path, "utf8")) as { version: string }).version;
/** This checkout's package version, and the Pi the tests run. */
export const PKG_VERSION = versionOf(join(REPO_ROOT, "package.json"));
export const PI_VERSION = versionOf(join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent/package.json"));
const FIXTURE = join(REPO_ROOT, "test/fixtures/faux-status-ext.ts");

/** A command's whole result, for an assertion's message. */
export const show = (r: RunResult) => `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

/** `pi -p` with the scripted model that calls pi_fold_context status; more `-e` extensions before it. */
export function askStatus(
	env: NodeJS.ProcessEnv,
	cwd: string,
	extensions: string[] = [],
	flags: string[] = [],
): Promise<RunResult> {
	const args = ["-p", "report pi-fold status", ...flags, ...extensions.flatMap((e) => ["-e", e]), "-e", FIXTURE];
	args.push("--provider", FIXTURE_PROVIDER, "--model", FIXTURE_MODEL, "--no-session");
	return runPi(args, { cwd, env });
}

/** The tool answered inside Pi, from the core in `packageDir` (the copy Pi loaded). */
export function expectAnsweredFrom(result: RunResult, packageDir: string, env: NodeJS.ProcessEnv): void {
	expect(result.code, show(result)).toBe(0);
	const out = result.stdout;
	expect(out, show(result)).toContain("pi_fold_context answered:\npi-fold ");
	expect(out).not.toContain("<error>");
	const wasmFile = join(realpathSync(packageDir), "wasm/pi-fold-core.wasm");
	// Version read from that .wasm in this process; Pi's run must report the same core, from that file.
	const coreVersion = loadCoreFile(wasmFile).version;
	expect(coreVersion).toMatch(/^\d+\.\d+\.\d+$/);
	expect(out).toContain(`core: pi-fold-core ${coreVersion} (WebAssembly) from ${wasmFile}`);
	expect(out).toContain("self-check: ok");
	expect(out).toContain(`probe sha256 (by the core): ${hash("sha256", STATUS_PROBE, "hex")}`);
	expect(out).toContain(`pi-fold ${PKG_VERSION} status`);
	expect(out).toContain(`host: Pi ${PI_VERSION}`);
	// The run stayed inside the temp dirs.
	expect(existsSync(join(env.HOME!, ".pi"))).toBe(false);
}
