// Pi's CLI as a child process: where its bin is, and the environment to run it (or npm) in, for the
// tests, the benchmarks and the scripts that start a real `pi`.
import { homedir } from "node:os";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { PiEnv } from "./pi-harness.ts";

/** Pi 1.6's `pi` bin (the bundled CLI) from the repo's devDependencies. */
export const PI_CLI = fileURLToPath(
	new URL("../node_modules/@earendil-works/pi-coding-agent/dist/bundle/cli.js", import.meta.url),
);

// Read before any test changes HOME: child npm runs share the developer's/CI's download cache.
const NPM_CACHE = process.env.npm_config_cache ?? `${homedir()}/.npm`;

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
