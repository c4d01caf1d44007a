// The session `pi-fold view` opens when given none: the most recent one of the current folder, found
// where Pi keeps it (its agent folder's sessions/, or PI_CODING_AGENT_SESSION_DIR) and as Pi picks
// it: the newest .jsonl file by modification time whose first line is a session header.
import { readdirSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { startsWithSessionHeader } from "../replay/output-guard.ts";

/** Pi's folder for the sessions of `cwd`. */
export function sessionDirOf(cwd: string, env: NodeJS.ProcessEnv = process.env): string {
	const own = env.PI_CODING_AGENT_SESSION_DIR;
	if (own) return resolve(own);
	const agent = env.PI_CODING_AGENT_DIR ? resolve(env.PI_CODING_AGENT_DIR) : join(homedir(), ".pi", "agent");
	const safe = `--${resolve(cwd)
		.replace(/^[/\\]/, "")
		.replace(/[/\\:]/g, "-")}--`;
	return join(agent, "sessions", safe);
}

/** The most recent session file of `cwd`, or a sentence saying where none was found. */
export function recentSession(
	cwd: string,
	env: NodeJS.ProcessEnv = process.env,
): { file: string } | { problem: string } {
	const dir = sessionDirOf(cwd, env);
	let names: string[];
	try {
		names = readdirSync(dir).filter((n) => n.endsWith(".jsonl"));
	} catch {
		return { problem: `no Pi sessions for ${resolve(cwd)} (looked in ${dir}); give a session file` };
	}
	const files = names
		.map((n) => join(dir, n))
		.map((f) => ({ f, mtime: statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? 0 }))
		.sort((a, b) => b.mtime - a.mtime);
	const found = files.find(({ f }) => startsWithSessionHeader(f));
	return found ? { file: found.f } : { problem: `no Pi session file in ${dir}; give a session file` };
}
