// What the `pi-fold` command checks before it loads anything else (bin.ts): the Node it runs on, and
// its own version. Plain Node APIs only, so it runs, and says what is wrong, on any Node from 18 on.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";

/** The oldest Node that Pi 1.x, and so the replay, runs on (package.json "engines"). */
export const MIN_NODE: readonly [number, number] = [22, 19];

/** Why `version` (as in process.versions.node) is too old, or undefined when it will do. */
export function nodeVersionProblem(version: string): string | undefined {
	const [major, minor] = version.split(".").map((n) => Number.parseInt(n, 10));
	const ok = major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
	return ok ? undefined : `needs Node >= ${MIN_NODE.join(".")} (found ${version})`;
}

/**
 * pi-fold's version, from its own package.json found by the package's name: from inside a package,
 * Node resolves that name through the package's "exports" (a clone and an installed copy alike).
 */
export function ownVersion(): string {
	try {
		const file = createRequire(import.meta.url).resolve("pi-fold/package.json");
		const pkg = JSON.parse(readFileSync(file, "utf8")) as { version?: unknown };
		return typeof pkg.version === "string" ? pkg.version : "unknown";
	} catch {
		return "unknown";
	}
}
