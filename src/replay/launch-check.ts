// What the `pi-fold` command checks before it loads anything else (bin.ts): the Node it runs on, and
// its own version. Plain Node APIs only, so it runs, and says what is wrong, on any Node from 18 on.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The oldest Node that Pi 1.x, and so the replay, runs on (package.json "engines"). */
export const MIN_NODE: readonly [number, number] = [22, 19];

/** Why `version` (as in process.versions.node) is too old, or undefined when it will do. */
export function nodeVersionProblem(version: string): string | undefined {
	const [major, minor] = version.split(".").map((n) => Number.parseInt(n, 10));
	const ok = major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
	return ok ? undefined : `needs Node >= ${MIN_NODE.join(".")} (found ${version})`;
}

/** pi-fold's version: the first package.json named pi-fold above `from` (src/replay, or dist/cli/src/replay). */
export function ownVersion(from: string = fileURLToPath(import.meta.url)): string {
	let dir = dirname(from);
	for (let up = 0; up < 6; up++, dir = dirname(dir)) {
		const file = join(dir, "package.json");
		if (!existsSync(file)) continue;
		try {
			const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: unknown; version?: unknown };
			if (pkg.name === "pi-fold" && typeof pkg.version === "string") return pkg.version;
		} catch {
			// An unreadable package.json on the way up: keep looking.
		}
	}
	return "unknown";
}
