// Reading a recorded Pi session for replay, line by line, before anything else loads (no Pi import
// here: a bad file is refused at once). Like Pi's own loader, a line that is not a session entry
// (malformed JSON, a last line cut short by a crash) is skipped, but never silently: each one is
// named with its line number. The path is opened without blocking and only a regular file is read,
// in chunks, up to a size guard (a FIFO, a device or /dev/zero is refused, never waited on).
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import type { FileEntry } from "@earendil-works/pi-coding-agent";
import { describeValue, errorMessage } from "../vocabulary.ts";

/** Bad lines named at most (the rest are counted). */
const MAX_REPORTED_LINES = 10;
/** Larger session files are refused: far above any real session, far below what would exhaust memory. */
const MAX_SESSION_BYTES = 1024 * 1024 * 1024;
const CHUNK_BYTES = 1024 * 1024;

/** A session file that cannot be replayed: the message names the file and, where it applies, the line. */
export class ReplayInputError extends Error {
	override name = "ReplayInputError";
}

/** A session file's plausible Pi entries, and the lines skipped. */
export interface CheckedSession {
	file: string;
	/** The parsed lines, header first, as written (not migrated). */
	entries: FileEntry[];
	/** The header's version (1 when absent: a legacy file). */
	version: number;
	cwd: string;
	/** Lines that are not session entries, skipped: `line N: why` (the first MAX_REPORTED_LINES). */
	skipped: string[];
	/** How many lines were skipped in all. */
	skippedCount: number;
}

/** The problem with one parsed line, or undefined when it is a plausible Pi entry. */
function entryProblem(value: unknown, first: boolean, version: number): string | undefined {
	if (typeof value !== "object" || value === null || Array.isArray(value)) {
		return `not a Pi session entry (a JSON object), found ${describeValue(value, 40)}`;
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

/** Every line of a regular file, read in chunks (UTF-8 kept whole across chunk edges). */
function* fileLines(file: string): Generator<{ line: string; last: boolean }> {
	let fd: number;
	try {
		fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
	} catch (err) {
		const code = (err as { code?: string }).code;
		throw new ReplayInputError(
			code === "ENOENT" ? `${file}: no such file` : `${file}: cannot read (${code ?? String(err)})`,
		);
	}
	try {
		const stat = fstatSync(fd);
		if (stat.isDirectory()) throw new ReplayInputError(`${file}: is a directory, not a session file`);
		if (!stat.isFile()) throw new ReplayInputError(`${file}: not a regular file (a FIFO, socket or device)`);
		if (stat.size > MAX_SESSION_BYTES) {
			throw new ReplayInputError(`${file}: ${stat.size} bytes, over the ${MAX_SESSION_BYTES}-byte limit for a replay`);
		}
		const decoder = new StringDecoder("utf8");
		const buf = Buffer.alloc(CHUNK_BYTES);
		let pending = "";
		let read = 0;
		for (;;) {
			let n: number;
			try {
				n = readSync(fd, buf, 0, buf.length, null);
			} catch (err) {
				throw new ReplayInputError(`${file}: cannot read (${(err as { code?: string }).code ?? String(err)})`);
			}
			read += n;
			if (read > MAX_SESSION_BYTES)
				throw new ReplayInputError(`${file}: grew past the ${MAX_SESSION_BYTES}-byte limit while read`);
			pending += n > 0 ? decoder.write(buf.subarray(0, n)) : decoder.end();
			const parts = pending.split("\n");
			pending = parts.pop() ?? "";
			for (const line of parts) yield { line, last: false };
			if (n === 0) break;
		}
		if (pending !== "") yield { line: pending, last: true };
	} finally {
		closeSync(fd);
	}
}

/**
 * Read and check a session file. Throws ReplayInputError for a missing, unreadable, empty or
 * non-Pi file (no session header); lines that are not entries are skipped and listed.
 */
export function readSessionFile(file: string): CheckedSession {
	const entries: FileEntry[] = [];
	const skipped: string[] = [];
	let skippedCount = 0;
	let version = 1;
	let first = true;
	let lineNo = 0;
	for (const { line, last } of fileLines(file)) {
		lineNo++;
		if (line.trim() === "") continue;
		let problem: string | undefined;
		let value: unknown;
		try {
			value = JSON.parse(line);
		} catch (err) {
			problem = last
				? "truncated: the file ends in the middle of an entry (was it still being written?)"
				: `not valid JSON (${errorMessage(err)})`;
		}
		problem ??= entryProblem(value, first, version);
		if (first) {
			// Without a header nothing after it can be judged.
			if (problem !== undefined)
				throw new ReplayInputError(`${file}: not a valid Pi session:\n  line ${lineNo}: ${problem}`);
			const v = (value as { version?: unknown }).version;
			version = typeof v === "number" && Number.isFinite(v) ? v : 1;
			first = false;
		}
		if (problem !== undefined) {
			skippedCount++;
			if (skipped.length < MAX_REPORTED_LINES) skipped.push(`line ${lineNo}: ${problem}`);
		} else entries.push(value as FileEntry);
	}
	if (entries.length === 0) throw new ReplayInputError(`${file}: the file is empty: nothing to replay`);
	const header = entries[0] as { cwd?: unknown };
	const cwd = typeof header.cwd === "string" && header.cwd !== "" ? header.cwd : process.cwd();
	return { file, entries, version, cwd, skipped, skippedCount };
}

/** The skipped lines as one warning, or undefined when none was skipped. */
export function skippedWarning(checked: CheckedSession): string | undefined {
	if (checked.skippedCount === 0) return undefined;
	const more =
		checked.skippedCount > checked.skipped.length
			? `\n  (and ${checked.skippedCount - checked.skipped.length} more)`
			: "";
	return `${checked.file}: skipped ${checked.skippedCount} line${checked.skippedCount === 1 ? "" : "s"} that are not session entries (as Pi does):\n  ${checked.skipped.join("\n  ")}${more}`;
}
