// /fold-leave: how to leave pi-fold with this session readable without it, as commands to copy.
// The unfolding itself is `pi-fold unfold` (src/replay/unfold-command.ts), run with Pi closed: it
// must work after pi-fold is removed from Pi, and it appends to the session file, which Pi must
// not be writing at the same time. Inside Pi nothing could do it: Pi appends context edits only at
// a turn boundary, and the whole transcript unfolded is usually far past the serving budget that
// pi-fold's fence holds every request to.
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { FoldHandle } from "../operations/view.ts";
import type { CommandAnswer } from "./fold.ts";

export const FOLD_LEAVE_COMMAND = "fold-leave";

/** The `pi-fold` command of this copy of the package (its package.json "bin"), wherever this file is built to. */
function ownBin(): { root: string; bin: string } | undefined {
	for (let dir = dirname(fileURLToPath(import.meta.url)); dirname(dir) !== dir; dir = dirname(dir)) {
		try {
			const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: unknown; bin?: unknown };
			const bin = (pkg.bin as Record<string, unknown> | undefined)?.["pi-fold"];
			if (pkg.name === "pi-fold" && typeof bin === "string") return { root: dir, bin: join(dir, bin) };
		} catch {
			// No package.json here: look further up.
		}
	}
	return undefined;
}

/** A POSIX shell word for `text` (single-quoted unless it needs nothing). */
function shellWord(text: string): string {
	return /^[\w./@%+=:,-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * The Node that runs Pi now, by its path: pi-fold needs what Pi needs (Node >= 22.19, which runs
 * TypeScript), while the `node` on PATH may be older (Node 20 refuses a `.ts` file outright).
 */
function nodeCommand(): string {
	return process.versions.bun === undefined ? shellWord(process.execPath) : "node";
}

/**
 * How to run this copy's command: its built bin, else its source (a checkout Pi installed from git
 * is never built; Node runs TypeScript, except under node_modules), else by name.
 */
function commandOf(own: { root: string; bin: string } | undefined): string {
	if (!own) return "pi-fold";
	if (existsSync(own.bin)) return `${nodeCommand()} ${shellWord(own.bin)}`;
	const source = join(own.root, "src/cli/bin.ts");
	if (existsSync(source) && !own.root.split(sep).includes("node_modules"))
		return `${nodeCommand()} ${shellWord(source)}`;
	return `pi-fold (this copy is not built: \`npm run build\` in ${shellWord(own.root)} first)`;
}

export function runFoldLeave(handle: FoldHandle, ctx: Pick<ExtensionContext, "sessionManager">): CommandAnswer {
	const file = ctx.sessionManager.getSessionFile();
	if (!file) {
		return {
			text: "/fold-leave: this session has no file (--no-session): nothing of it stays folded once Pi exits. Remove pi-fold with `pi remove` (the source `pi list` shows).",
			level: "info",
		};
	}
	const command = commandOf(ownBin());
	const evidence = handle.get()?.status().evidence?.dir;
	const lines = [
		"To leave pi-fold with this session reading the same without it:",
		"  1. quit Pi (unfold appends to the session file, which Pi must not be writing);",
		`  2. ${command} unfold ${shellWord(file)}`,
		"     gives every fold its original back from the store, verified by SHA-256, and takes pi-fold's notices out of the model's view (--dry-run first to see what it would do);",
		"  3. pi remove <the source `pi list` shows>, or drop your extension that calls registerPiFold.",
		`Then, if you like, delete what pi-fold wrote: the pi-fold/ folder beside the session file${evidence ? ` and ${evidence}` : ""} ("What pi-fold writes where" in pi-fold's docs/LEAVING.md lists all of it).`,
	];
	return { text: lines.join("\n"), level: "info" };
}
