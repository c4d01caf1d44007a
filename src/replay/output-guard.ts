// What `pi-fold view --out` and `pi-fold replay --svg` may write: never the session they read, any
// other Pi session file, or a file inside a fold store (each replaced whole by the atomic write).
// Checked before anything runs, so a refused path costs nothing and nothing is written.
import { closeSync, existsSync, openSync, readSync, realpathSync, type Stats, statSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { STORE_DIR_NAME } from "../store/index.ts";

/** Whether `file` begins with a Pi session header (read without blocking: a FIFO is not waited on). */
export function startsWithSessionHeader(file: string): boolean {
	const buf = Buffer.alloc(256);
	let fd: number;
	try {
		if (!statSync(file).isFile()) return false;
		fd = openSync(file, "r");
	} catch {
		return false;
	}
	try {
		const n = readSync(fd, buf, 0, buf.length, 0);
		return /^\s*\{"type"\s*:\s*"session"/.test(buf.subarray(0, n).toString("utf8"));
	} finally {
		closeSync(fd);
	}
}

const STORE_PARTS = ["objects", "records", "packs"];

/** The fold store `dir` is in (a `pi-fold/<session id>/` folder holding objects, records or packs), if any. */
function storeAround(dir: string): string | undefined {
	for (let d = dir; dirname(d) !== d; d = dirname(d)) {
		if (basename(dirname(d)) !== STORE_DIR_NAME) continue;
		if (STORE_PARTS.some((p) => existsSync(join(d, p)))) return d;
	}
	return undefined;
}

/** The path as it really is (symlinks resolved); for a file not there yet, its folder's real path. */
function realOf(path: string): string | undefined {
	try {
		return realpathSync(path);
	} catch {
		try {
			return join(realpathSync(dirname(path)), basename(path));
		} catch {
			return undefined;
		}
	}
}

/** The file's stat, following symlinks; undefined when there is none to follow (missing, a loop). */
export function statOf(path: string): Stats | undefined {
	try {
		return statSync(path);
	} catch {
		return undefined;
	}
}

/** Why `out` must not be written by a command reading `input`, or undefined when it may. */
export function outputProblem(out: string, input: string, what: string): string | undefined {
	const target = resolve(out);
	const real = realOf(target);
	const inputStat = statOf(input);
	const outStat = statOf(target);
	const refuse = (why: string) => `${out}: ${why}: the ${what} is not written there (give another path)`;
	if (inputStat && outStat && inputStat.dev === outStat.dev && inputStat.ino === outStat.ino) {
		return refuse("is the session file being read");
	}
	if (outStat && startsWithSessionHeader(target)) return refuse("is a Pi session file");
	const store = real === undefined ? undefined : storeAround(dirname(real));
	if (store !== undefined) return refuse(`is inside the fold store ${store}`);
	return undefined;
}
