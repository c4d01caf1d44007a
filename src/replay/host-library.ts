// Pi's library for `pi-fold replay`. The replay rebuilds a session the way Pi does (its session
// manager, projection, compaction and model catalog, through the same runtime the extension runs),
// so it runs on Pi's own code, never on a copy that could drift from the Pi a person has. Pi is an
// optional peer: a plain `npm install pi-fold` has none beside it. The replay then uses the Pi
// installed on the machine, found from the `pi` command on PATH, and says which one; without any,
// it says what to install. Plain Node APIs only: this runs before anything of Pi's is loaded.
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { registerHooks } from "node:module";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { REQUIRED_PI_VERSION } from "../host/version-guard.ts";

const PI_PACKAGE = "@earendil-works/pi-coding-agent";
/** The bare imports the replay's modules make that Pi's folder can answer (Pi's own dependencies). */
const HOST_SPECIFIER = /^(@earendil-works\/[^/]+|typebox)(\/|$)/;

interface HostLibrary {
	/** Pi's package folder. */
	dir: string;
	version: string;
	/** "beside": resolvable from pi-fold itself (a clone, a project that has Pi); "path": the `pi` on PATH. */
	via: "beside" | "path";
}

function packageAt(dir: string): { name?: unknown; version?: unknown } | undefined {
	try {
		return JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: unknown; version?: unknown };
	} catch {
		return undefined;
	}
}

function piPackage(dir: string): { dir: string; version: string } | undefined {
	const pkg = packageAt(dir);
	if (pkg?.name !== PI_PACKAGE) return undefined;
	return { dir, version: typeof pkg.version === "string" ? pkg.version : "unknown" };
}

/** Pi's folder from a `pi` launcher: the folder holding the file it links to, or npm's layout beside it. */
function piFromLauncher(launcher: string): { dir: string; version: string } | undefined {
	let real: string;
	try {
		real = realpathSync(launcher);
	} catch {
		return undefined;
	}
	for (let dir = dirname(real); ; dir = dirname(dir)) {
		const found = piPackage(dir);
		if (found) return found;
		if (dirname(dir) === dir) break;
	}
	// A launcher that is not a link (npm's shims on Windows): npm puts the package beside or below it.
	const bin = dirname(launcher);
	for (const dir of [join(bin, "node_modules", PI_PACKAGE), join(bin, "..", "lib", "node_modules", PI_PACKAGE)]) {
		const found = piPackage(dir);
		if (found) return found;
	}
	return undefined;
}

/** Pi as `pi-fold` itself resolves it (a clone, or a project that installed Pi too). */
function piBeside(): { dir: string; version: string } | undefined {
	let entry: string;
	try {
		entry = fileURLToPath(import.meta.resolve(PI_PACKAGE));
	} catch {
		return undefined;
	}
	for (let dir = dirname(entry); dirname(dir) !== dir; dir = dirname(dir)) {
		const found = piPackage(dir);
		if (found) return found;
	}
	return undefined;
}

/** The Pi the replay will run on, or undefined when none is installed that pi-fold can find. */
export function findHostLibrary(path = process.env.PATH ?? ""): HostLibrary | undefined {
	const beside = piBeside();
	if (beside) return { ...beside, via: "beside" };
	const names = process.platform === "win32" ? ["pi.cmd", "pi.exe", "pi"] : ["pi"];
	for (const dir of path.split(delimiter)) {
		if (dir === "") continue;
		for (const name of names) {
			const launcher = join(dir, name);
			if (!existsSync(launcher) || !statSync(launcher).isFile()) continue;
			const found = piFromLauncher(launcher);
			if (found) return { ...found, via: "path" };
		}
	}
	return undefined;
}

/**
 * Make the replay's imports of Pi's packages resolve from `host.dir` when they do not resolve where
 * pi-fold is installed. Pi's own dependencies (pi-ai, pi-agent-core, typebox) resolve from there too.
 */
export function useHostLibrary(host: HostLibrary): void {
	if (host.via === "beside") return;
	const parentURL = pathToFileURL(join(host.dir, "package.json")).href;
	registerHooks({
		resolve(specifier, context, nextResolve) {
			try {
				return nextResolve(specifier, context);
			} catch (err) {
				if (!HOST_SPECIFIER.test(specifier)) throw err;
				return nextResolve(specifier, { ...context, parentURL });
			}
		},
	});
}

/** Why this Pi cannot run the replay (older than pi-fold needs), or undefined when it can. */
export function hostVersionProblem(host: HostLibrary): string | undefined {
	const parts = (v: string) => v.split(/[.-]/, 3).map((n) => Number.parseInt(n, 10));
	const [have, need] = [parts(host.version), parts(REQUIRED_PI_VERSION)];
	for (let i = 0; i < 3; i++) {
		if (!(have[i] >= 0)) break; // an unreadable version: let the run say what is missing
		if (have[i] !== need[i]) {
			if (have[i] > need[i]) return undefined;
			return `the Pi found at ${host.dir} is ${host.version}; the replay needs Pi ${REQUIRED_PI_VERSION} or later: update it (npm install -g ${PI_PACKAGE})`;
		}
	}
	return undefined;
}

/** What to do when no Pi is found: one message, the commands that fix it. */
export const NO_HOST_LIBRARY =
	`the replay runs on Pi's own code (${PI_PACKAGE}), and none was found: not beside pi-fold, and no \`pi\` ` +
	`command on PATH that leads to it. Install Pi (npm install -g ${PI_PACKAGE}), or add it to this project ` +
	`(npm install ${PI_PACKAGE}), then run the replay again.`;
