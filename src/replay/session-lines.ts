// Reading a recorded Pi session for replay, line by line, before anything else loads (no Pi import
// here: a bad file is refused at once). Pi's own loader skips lines it cannot parse; a replay must
// not silently replay less than was recorded, so every line is checked and a bad one is refused
// with its line number.
import { readFileSync, statSync } from "node:fs";
import type { FileEntry } from "@earendil-works/pi-coding-agent";

/** Bad lines named in one error at most (the rest are counted). */
export const MAX_REPORTED_LINES = 10;

/** A session file that cannot be replayed: the message names the file and, where it applies, the line. */
export class ReplayInputError extends Error {
	override name = "ReplayInputError";
}

/** A session file whose every line is a plausible Pi entry. */
export interface CheckedSession {
	file: string;
	/** The parsed lines, header first, as written (not migrated). */
	entries: FileEntry[];
	/** The header's version (1 when absent: a legacy file). */
	version: number;
	cwd: string;
}

function describeType(value: unknown): string {
	if (value === null) return "null";
	if (Array.isArray(value)) return "an array";
	return typeof value === "string" ? `the string ${JSON.stringify(value.slice(0, 40))}` : `a ${typeof value}`;
}

/** The problem with one parsed line, or undefined when it is a plausible Pi entry. */
function entryProblem(value: unknown, first: boolean, version: number): string | undefined {
	if (typeof value !== "object" || value === null || Array.isArray(value)) {
		return `not a Pi session entry (a JSON object), found ${describeType(value)}`;
	}
	const v = value as Record<string, unknown>;
	if (typeof v.type !== "string" || v.type === "") return 'not a Pi session entry (no "type" field)';
	if (first) {
		if (v.type !== "session") {
			return `not a Pi session file: the first line must be a session header ({"type":"session",...}), found type "${v.type}"`;
		}
		if (typeof v.id !== "string" || v.id === "") return "the session header has no id";
		return undefined;
	}
	if (v.type === "session") return "a second session header";
	if (version >= 2 && (typeof v.id !== "string" || v.id === "")) return `a ${v.type} entry without an id`;
	if (v.type === "message") {
		const m = v.message as Record<string, unknown> | undefined;
		if (typeof m !== "object" || m === null || typeof m.role !== "string")
			return "a message entry without a message role";
	}
	return undefined;
}

function readText(file: string): string {
	try {
		if (statSync(file).isDirectory()) throw new ReplayInputError(`${file}: is a directory, not a session file`);
		return readFileSync(file, "utf8");
	} catch (err) {
		if (err instanceof ReplayInputError) throw err;
		const code = (err as { code?: string }).code;
		throw new ReplayInputError(
			code === "ENOENT" ? `${file}: no such file` : `${file}: cannot read (${code ?? String(err)})`,
		);
	}
}

/**
 * Read and check a session file. Throws ReplayInputError for a missing, unreadable, empty,
 * truncated or non-Pi file, naming every bad line (up to MAX_REPORTED_LINES).
 */
export function readSessionFile(file: string): CheckedSession {
	const text = readText(file);
	if (text.trim() === "") throw new ReplayInputError(`${file}: the file is empty: nothing to replay`);
	const lines = text.split("\n");
	const endsWithNewline = text.endsWith("\n");
	const entries: FileEntry[] = [];
	const bad: string[] = [];
	let badCount = 0;
	let version = 1;
	let first = true;
	for (let i = 0; i < lines.length; i++) {
		const line = lines[i];
		if (line.trim() === "") continue;
		let problem: string | undefined;
		let value: unknown;
		try {
			value = JSON.parse(line);
		} catch (err) {
			const last = i === lines.length - 1 && !endsWithNewline;
			problem = last
				? "truncated: the file ends in the middle of an entry (was it still being written?)"
				: `not valid JSON (${err instanceof Error ? err.message : String(err)})`;
		}
		problem ??= entryProblem(value, first, version);
		if (first && problem === undefined) {
			const v = (value as { version?: unknown }).version;
			version = typeof v === "number" && Number.isFinite(v) ? v : 1;
		}
		if (problem !== undefined) {
			badCount++;
			if (bad.length < MAX_REPORTED_LINES) bad.push(`line ${i + 1}: ${problem}`);
			// Without a header nothing after it can be judged.
			if (first) break;
		} else {
			entries.push(value as FileEntry);
		}
		first = false;
	}
	if (badCount > 0) {
		const more = badCount > bad.length ? `\n  (and ${badCount - bad.length} more bad lines)` : "";
		throw new ReplayInputError(`${file}: not a valid Pi session:\n  ${bad.join("\n  ")}${more}`);
	}
	const header = entries[0] as { cwd?: unknown };
	const cwd = typeof header.cwd === "string" && header.cwd !== "" ? header.cwd : process.cwd();
	return { file, entries, version, cwd };
}
