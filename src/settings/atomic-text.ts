// Replacing a small, user-owned text file (the settings file) atomically: a reader sees the old
// bytes or the new ones, never a mix, and a failed write leaves the old file as it was.
//   temp file beside the target (O_CREAT|O_EXCL) -> write -> fsync -> rename over the target -> fsync the dir.
// The store's publisher (src/store/atomic.ts) is write-once (link, 0444) and cannot replace a
// file, which is exactly what a settings edit must do; only its directory fsync is shared.
import { randomBytes } from "node:crypto";
import {
	closeSync,
	fchmodSync,
	fsyncSync,
	lstatSync,
	mkdirSync,
	openSync,
	realpathSync,
	renameSync,
	statSync,
	unlinkSync,
	writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { syncDir } from "../store/atomic.ts";
import { fsCode } from "../store/errors.ts";
import { errorMessage } from "../vocabulary.ts";

/** Mode of a new file; an existing file keeps its own. */
const NEW_FILE_MODE = 0o644;

/** The file a write must replace: a symlinked settings file (dotfile managers) is written through, not replaced by a copy. */
function targetOf(path: string): string {
	try {
		return lstatSync(path).isSymbolicLink() ? realpathSync(path) : path;
	} catch (err) {
		if (fsCode(err) === "ENOENT") return path;
		throw err;
	}
}

function modeOf(path: string): number {
	try {
		return statSync(path).mode & 0o777;
	} catch {
		return NEW_FILE_MODE;
	}
}

/**
 * Write `text` to `path`, replacing any file there in one rename. Creates missing directories.
 * Throws an Error naming the file and the failing step; then the old file (if any) is untouched
 * and no temp file is left behind.
 */
export function replaceTextFile(path: string, text: string): void {
	let target: string;
	try {
		target = targetOf(path);
		const created = mkdirSync(dirname(target), { recursive: true });
		if (created !== undefined) syncDir(dirname(created));
	} catch (err) {
		throw new Error(`cannot prepare ${path}: ${errorMessage(err)}`, { cause: err });
	}
	const dir = dirname(target);
	const mode = modeOf(target);
	const temp = join(dir, `.${basename(target)}.${process.pid}.${randomBytes(8).toString("hex")}.tmp`);
	let fd = -1;
	let step = "create a temp file for";
	try {
		fd = openSync(temp, "wx", mode);
		step = "write";
		const bytes = Buffer.from(text, "utf8");
		for (let off = 0; off < bytes.byteLength; ) off += writeSync(fd, bytes, off, bytes.byteLength - off);
		fchmodSync(fd, mode); // openSync's mode is masked by the umask; an existing file keeps its exact mode
		fsyncSync(fd);
		step = "close";
		closeSync(fd);
		fd = -1;
		step = "replace";
		renameSync(temp, target);
	} catch (err) {
		if (fd >= 0) {
			try {
				closeSync(fd);
			} catch {
				// The error being thrown is the one that matters.
			}
		}
		try {
			unlinkSync(temp);
		} catch {
			// Never created (the open failed) or already gone.
		}
		throw new Error(`cannot ${step} ${path}: ${errorMessage(err)}`, { cause: err });
	}
	try {
		syncDir(dir);
	} catch {
		// The rename is done and atomic; only its durability across a power loss is less certain.
		// Reporting a failure now would tell the caller the old bytes are still there, which they are not.
	}
}
