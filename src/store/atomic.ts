// Write-once publication of immutable files. A file appears under its final name only complete,
// durable and read-only, and an existing final file is never replaced:
//
//   1. open a temp file beside the final name (O_CREAT|O_EXCL), write every byte, fsync, fchmod 0444;
//   2. link(temp, final): atomic, and fails with EEXIST instead of replacing;
//   3. fsync the directory, so the new name survives a power loss;
//   4. unlink the temp name (the final name keeps the inode).
//
// EEXIST at step 2 means another writer (or an earlier run) published that name first; the caller
// verifies the existing file. A writer killed mid-way leaves at most a temp file, named
//   .<final name>.<pid>.<16 hex>.tmp
// (hidden, and never a 64-hex final name). Readers and list() ignore such files. Nothing removes
// them later: a writer only ever unlinks its own temp files, within the call that made them.
// link() rather than rename(): rename would silently replace a file another writer published.
import { randomBytes } from "node:crypto";
import { closeSync, fchmodSync, fsyncSync, linkSync, mkdirSync, openSync, unlinkSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { fsCode, ioError } from "./errors.ts";

/** Final files are read-only for everyone: the store never modifies a published file. */
export const FINAL_MODE = 0o444;

const TEMP_NAME = /^\.(.+)\.(\d+)\.([0-9a-f]{16})\.tmp$/;

/** True for names this module gives its temp files. */
export function isTempName(name: string): boolean {
	return TEMP_NAME.test(name);
}

/** The final name a temp file was headed for, or undefined if `name` is not a temp name. */
export function finalNameOfTemp(name: string): string | undefined {
	return TEMP_NAME.exec(name)?.[1];
}

function tempNameFor(name: string): string {
	return `.${name}.${process.pid}.${randomBytes(8).toString("hex")}.tmp`;
}

/** What happened to one publication. */
export type PublishOutcome = "written" | "exists";

/** One file to publish: directory, final name, bytes. */
export interface PublishItem {
	dir: string;
	name: string;
	bytes: Uint8Array;
}

// Directories this process has already created or seen, so steady-state writes skip mkdir.
const knownDirs = new Set<string>();

/** mkdir -p, then fsync the parent of every directory it created so the new entries are durable. */
export function ensureDir(dir: string): void {
	if (knownDirs.has(dir)) return;
	let first: string | undefined;
	try {
		first = mkdirSync(dir, { recursive: true });
	} catch (err) {
		throw ioError("cannot create directory", dir, err);
	}
	if (first !== undefined) {
		// The created chain is first .. dir; each new name lives in its parent.
		const chain: string[] = [];
		for (let d = dir; ; d = dirname(d)) {
			chain.push(dirname(d));
			if (d === first || dirname(d) === d) break;
		}
		for (const parent of chain.reverse()) syncDir(parent);
	}
	knownDirs.add(dir);
}

/** fsync a directory, making the names created in it durable. */
export function syncDir(dir: string): void {
	// Windows cannot open a directory for fsync; NTFS journals the metadata itself.
	if (process.platform === "win32") return;
	let fd: number;
	try {
		fd = openSync(dir, "r");
	} catch (err) {
		throw ioError("cannot open directory for fsync", dir, err);
	}
	try {
		fsyncSync(fd);
	} catch (err) {
		throw ioError("cannot fsync directory", dir, err);
	} finally {
		closeSync(fd);
	}
}

/** Step 1: a complete, fsynced, read-only temp file beside the final name. Returns its path. */
function writeTemp(dir: string, name: string, bytes: Uint8Array): string {
	let temp = "";
	let fd = -1;
	for (let attempt = 0; fd < 0; attempt++) {
		temp = join(dir, tempNameFor(name));
		try {
			fd = openSync(temp, "wx", 0o600);
		} catch (err) {
			// A temp name collision needs the same pid and 64 random bits; retry a few times anyway.
			if (fsCode(err) === "EEXIST" && attempt < 3) continue;
			// The directory vanished after we cached it (someone removed it by hand): create it again.
			if (fsCode(err) === "ENOENT" && knownDirs.delete(dir) && attempt < 3) {
				ensureDir(dir);
				continue;
			}
			throw ioError("cannot create temp file", temp, err);
		}
	}
	try {
		for (let off = 0; off < bytes.byteLength; ) off += writeSync(fd, bytes, off, bytes.byteLength - off);
		fsyncSync(fd);
		fchmodSync(fd, FINAL_MODE);
	} catch (err) {
		closeSync(fd);
		removeTemp(temp);
		throw ioError("cannot write temp file", temp, err);
	}
	try {
		closeSync(fd);
	} catch (err) {
		removeTemp(temp);
		throw ioError("cannot close temp file", temp, err);
	}
	return temp;
}

/** Step 2: publish without replacing. */
function linkFinal(temp: string, final: string): PublishOutcome {
	try {
		linkSync(temp, final);
		return "written";
	} catch (err) {
		if (fsCode(err) === "EEXIST") return "exists";
		removeTemp(temp);
		throw ioError("cannot publish (link) temp file to", final, err);
	}
}

/** Our own temp file only; a failure to remove it leaves a temp-named file readers ignore. */
function removeTemp(temp: string): void {
	try {
		unlinkSync(temp);
	} catch {
		// Ignored on purpose: see the module comment on leftover temp files.
	}
}

/**
 * Publish several files, each written once. Returns, per item, "written" if this call created the
 * final name or "exists" if a final file was already there (the caller must verify it). All files
 * are durable when this returns: each fsynced before its link, each directory fsynced once after.
 */
export function publishAll(items: readonly PublishItem[]): PublishOutcome[] {
	const outcomes: PublishOutcome[] = [];
	const temps: string[] = [];
	const dirs = new Set<string>();
	try {
		for (const { dir, name, bytes } of items) {
			ensureDir(dir);
			const temp = writeTemp(dir, name, bytes);
			temps.push(temp);
			const outcome = linkFinal(temp, join(dir, name));
			if (outcome === "written") dirs.add(dir);
			outcomes.push(outcome);
		}
		for (const dir of dirs) syncDir(dir);
	} finally {
		for (const temp of temps) removeTemp(temp);
	}
	return outcomes;
}

/** Publish one file once; see publishAll. */
export function publishOnce(dir: string, name: string, bytes: Uint8Array): PublishOutcome {
	return publishAll([{ dir, name, bytes }])[0];
}
