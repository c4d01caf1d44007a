// Reading a recorded Pi session for replay, line by line, before anything else loads (no Pi import
// here: a bad file is refused at once). Like Pi's own loader, a line that is not a session entry
// (malformed JSON, a last line cut short by a crash) is skipped, but never silently: each one is
// named with its line number. The path is opened without blocking and only a regular file is read,
// in chunks, up to a size guard (a FIFO, a device or /dev/zero is refused, never waited on).
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
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

/** How much reading a file took, for the check that it stays linear in the file's size. */
export interface ReadWork {
	/** Bytes looked at in the search for line ends. */
	scanned: number;
	/** Bytes decoded into text. */
	decoded: number;
}

/** A line longer than this is skipped unread: far above any Pi entry, far below a string JavaScript cannot hold. */
const MAX_LINE_BYTES = 256 * 1024 * 1024;
/** What is kept of a line that cannot be JSON (it does not start with "{" or "["), for its message. */
const JUNK_KEPT_BYTES = 64;

/** One line: its text, or when it was too long or not JSON, its size and first bytes. */
type FileLine = { line: string; last: boolean } | { junk: string; bytes: number; long: boolean; last: boolean };

/** The bytes of the line being read, kept as the chunks they came in (copied: the read buffer is reused). */
class LineBytes {
	#parts: Buffer[] = [];
	#kept = 0;
	bytes = 0;
	/** undefined: nothing but blanks yet; true: starts as JSON may; false: cannot be JSON. */
	#json: boolean | undefined;

	add(chunk: Buffer): void {
		if (chunk.length === 0) return;
		if (this.#json === undefined) {
			const first = chunk.findIndex((b) => b !== 0x20 && b !== 0x09 && b !== 0x0d);
			if (first >= 0) this.#json = chunk[first] === 0x7b || chunk[first] === 0x5b;
		}
		this.bytes += chunk.length;
		const room = this.#json === false ? JUNK_KEPT_BYTES - this.#kept : MAX_LINE_BYTES - this.#kept;
		if (room <= 0) return;
		const kept = Buffer.from(chunk.subarray(0, room));
		this.#parts.push(kept);
		this.#kept += kept.length;
	}

	/** Whether what is read so far already says it cannot be JSON. */
	get junk(): boolean {
		return this.#json === false || this.bytes > MAX_LINE_BYTES;
	}

	take(last: boolean, work: ReadWork): FileLine {
		const kept = Buffer.concat(this.#parts);
		const whole = !this.junk;
		const text = kept.subarray(0, whole ? kept.length : JUNK_KEPT_BYTES).toString("utf8");
		work.decoded += whole ? kept.length : Math.min(kept.length, JUNK_KEPT_BYTES);
		const out: FileLine = whole
			? { line: text, last }
			: { junk: text, bytes: this.bytes, long: this.bytes > MAX_LINE_BYTES, last };
		this.#parts = [];
		this.#kept = 0;
		this.bytes = 0;
		this.#json = undefined;
		return out;
	}
}

/**
 * Every line of a regular file, read in chunks. Each byte is looked at once for line ends and
 * decoded at most once (a file with no newline is not read again per chunk), and a line that cannot
 * be JSON is not kept beyond its first bytes; `stop` ends the read early (a first line that says
 * the file is no session).
 */
function* fileLines(file: string, work: ReadWork, stop: (line: LineBytes) => boolean): Generator<FileLine> {
	let fd: number;
	try {
		fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
	} catch (err) {
		throw new ReplayInputError(`${file}: ${openProblem(err)}`);
	}
	try {
		const stat = fstatSync(fd);
		if (stat.isDirectory()) throw new ReplayInputError(`${file}: is a directory, not a session file`);
		if (!stat.isFile()) throw new ReplayInputError(`${file}: not a regular file (a FIFO, socket or device)`);
		if (stat.size > MAX_SESSION_BYTES) {
			throw new ReplayInputError(`${file}: ${stat.size} bytes, over the ${MAX_SESSION_BYTES}-byte limit for a replay`);
		}
		const buf = Buffer.alloc(CHUNK_BYTES);
		const line = new LineBytes();
		let read = 0;
		for (;;) {
			let n: number;
			try {
				n = readSync(fd, buf, 0, buf.length, null);
			} catch (err) {
				throw new ReplayInputError(`${file}: cannot read (${(err as { code?: string }).code ?? String(err)})`);
			}
			if (n === 0) break;
			read += n;
			if (read > MAX_SESSION_BYTES)
				throw new ReplayInputError(`${file}: grew past the ${MAX_SESSION_BYTES}-byte limit while read`);
			let at = 0;
			while (at < n) {
				const end = buf.indexOf(0x0a, at);
				const stopAt = end < 0 || end >= n ? n : end;
				work.scanned += stopAt - at + (stopAt < n ? 1 : 0);
				line.add(buf.subarray(at, stopAt));
				if (stopAt === n) break;
				yield line.take(false, work);
				at = stopAt + 1;
			}
			if (stop(line)) break;
		}
		if (line.bytes > 0) yield line.take(true, work);
	} finally {
		closeSync(fd);
	}
}

/** Why a path cannot be opened, in words (a symlink loop, a missing file, no permission). */
function openProblem(err: unknown): string {
	const code = (err as { code?: string }).code;
	if (code === "ENOENT") return "no such file";
	if (code === "ELOOP") return "a symlink loop (or too many symlinks), not a session file";
	if (code === "EACCES" || code === "EPERM") return `cannot read (${code}: permission denied)`;
	return `cannot read (${code ?? String(err)})`;
}

/** C0 and C1 controls, DEL, line and paragraph separators and bidirectional overrides: what can rewrite a terminal. */
function unprintable(c: number): boolean {
	return (
		c < 0x20 ||
		(c >= 0x7f && c <= 0x9f) ||
		c === 0x2028 ||
		c === 0x2029 ||
		(c >= 0x202a && c <= 0x202e) ||
		(c >= 0x2066 && c <= 0x2069)
	);
}

/** Text from a session file made safe to print: control characters (terminal escapes) shown as \\u escapes. */
export function printable(text: string): string {
	let out = "";
	for (let i = 0; i < text.length; i++) {
		const c = text.charCodeAt(i);
		out += unprintable(c) ? `\\u${c.toString(16).padStart(4, "0")}` : text[i];
	}
	return out;
}

/** The problem with a line that was not kept whole. */
function junkProblem(l: { junk: string; bytes: number; long: boolean; last: boolean }): string {
	if (l.long) return `a line of ${l.bytes} bytes, over the ${MAX_LINE_BYTES}-byte limit for one entry`;
	return `not valid JSON (it starts ${JSON.stringify(l.junk)})`;
}

/**
 * Read and check a session file. Throws ReplayInputError for a missing, unreadable, empty or
 * non-Pi file (no session header); lines that are not entries are skipped and listed.
 */
export function readSessionFile(file: string, work: ReadWork = { scanned: 0, decoded: 0 }): CheckedSession {
	const entries: FileEntry[] = [];
	const skipped: string[] = [];
	let skippedCount = 0;
	let version = 1;
	let first = true;
	let lineNo = 0;
	// A first line that cannot be JSON says the file is no session: the rest is not read.
	const stop = (line: LineBytes) => first && line.junk;
	for (const read of fileLines(file, work, stop)) {
		lineNo++;
		if ("line" in read && read.line.trim() === "") continue;
		let problem: string | undefined;
		let value: unknown;
		if ("junk" in read) problem = junkProblem(read);
		else {
			try {
				value = JSON.parse(read.line);
			} catch (err) {
				problem = read.last
					? "truncated: the file ends in the middle of an entry (was it still being written?)"
					: `not valid JSON (${errorMessage(err)})`;
			}
		}
		problem ??= entryProblem(value, first, version);
		if (problem !== undefined) problem = printable(problem);
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
	const one = checked.skippedCount === 1;
	return `${checked.file}: skipped ${checked.skippedCount} ${one ? "line that is not a session entry" : "lines that are not session entries"} (as Pi does):\n  ${checked.skipped.join("\n  ")}${more}`;
}
