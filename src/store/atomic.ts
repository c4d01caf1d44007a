// Write-once publication of immutable files. A file appears under its final name only complete,
// durable and read-only, and an existing final file is never replaced:
//
//   1. open a temp file beside the final name (O_CREAT|O_EXCL), write every byte, fsync, fchmod 0444;
//   2. link(temp, final): atomic, and fails with EEXIST instead of replacing;
//   3. fsync the directory, so the new name survives a power loss;
//   4. unlink the temp name (the final name keeps the inode).
// A batch runs each step for all its files before the next (chunked), so its fsyncs can be
// issued together: publishAllAsync runs them concurrently on libuv's pool, publishAll one by one.
//
// EEXIST at step 2 means another writer (or an earlier run) published that name first; the caller
// verifies the existing file. A writer killed mid-way leaves at most a temp file, named
//   .<final name>.<pid>.<16 hex>.tmp
// (hidden, and never a 64-hex final name). Readers and list() ignore such files. Nothing removes
// them later: a writer only ever unlinks its own temp files, within the call that made them.
// link() rather than rename(): rename would silently replace a file another writer published.
import { randomBytes } from "node:crypto";
import {
	closeSync,
	existsSync,
	fchmodSync,
	fsync,
	fsyncSync,
	linkSync,
	mkdirSync,
	openSync,
	unlinkSync,
	writeSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
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
function ensureDir(dir: string): void {
	if (knownDirs.has(dir)) return;
	let first: string | undefined;
	try {
		first = mkdirSync(dir, { recursive: true });
	} catch (err) {
		throw ioError("cannot create directory", dir, mkdirReason(dir, err));
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

/**
 * The real reason a recursive mkdir failed: Node reports ENOENT when a missing parent cannot be
 * created (on a read-only file system, say), so the first missing one is made alone to learn why.
 */
function mkdirReason(dir: string, err: unknown): unknown {
	if (fsCode(err) !== "ENOENT") return err;
	let first = dir;
	while (dirname(first) !== first && !existsSync(dirname(first))) first = dirname(first);
	try {
		mkdirSync(first);
	} catch (real) {
		if (fsCode(real) !== "ENOENT") return real;
	}
	return err;
}

function openDir(dir: string): number {
	try {
		return openSync(dir, "r");
	} catch (err) {
		throw ioError("cannot open directory for fsync", dir, err);
	}
}

/** fsync a directory, making the names created in it durable. */
export function syncDir(dir: string): void {
	// Windows cannot open a directory for fsync; NTFS journals the metadata itself.
	if (process.platform === "win32") return;
	const fd = openDir(dir);
	try {
		fsyncSync(fd);
	} catch (err) {
		throw ioError("cannot fsync directory", dir, err);
	} finally {
		closeSync(fd);
	}
}

/** A temp file being written: its path and open descriptor (-1 once closed). */
interface OpenTemp {
	temp: string;
	fd: number;
}

/** Step 1a: create a temp file beside the final name (O_CREAT|O_EXCL, 0600 until complete). */
function openTemp(dir: string, name: string): OpenTemp {
	for (let attempt = 0; ; attempt++) {
		const temp = join(dir, tempNameFor(name));
		try {
			return { temp, fd: openSync(temp, "wx", 0o600) };
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
}

/** Close quietly (a failure path: the error being thrown is the one that matters). */
function closeQuietly(t: OpenTemp): void {
	if (t.fd < 0) return;
	try {
		closeSync(t.fd);
	} catch {
		// Ignored: see above.
	}
	t.fd = -1;
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

/** Files written before their fsyncs are awaited, at most: bounds open descriptors and in-flight bytes. */
const PUBLISH_CHUNK = 128;

/**
 * The per-fd result of a flush: null when the fsync succeeded, else its error. A flush always
 * waits for every fsync it started, so no descriptor is closed while an fsync on it is in flight.
 */
type FlushResults = readonly unknown[];

/**
 * The one publication algorithm, for both drivers. It yields each set of descriptors that must be
 * fsynced (first the temp files of a chunk, at the end the touched directories) and resumes with
 * the per-fd results; everything else (names, modes, link, EEXIST, errors, cleanup) happens here.
 * Per chunk: open and write every temp file; fsync them all; fchmod 0444 and close each; link each.
 * Then fsync each directory that got a new name, once. Temp names are removed in every case.
 */
function* publishSteps(items: readonly PublishItem[]): Generator<number[], PublishOutcome[], FlushResults> {
	const outcomes: PublishOutcome[] = [];
	const temps: string[] = [];
	const dirs = new Set<string>();
	try {
		for (let start = 0; start < items.length; start += PUBLISH_CHUNK) {
			const chunk = items.slice(start, start + PUBLISH_CHUNK);
			const open: OpenTemp[] = [];
			try {
				for (const { dir, name, bytes } of chunk) {
					ensureDir(dir);
					const t = openTemp(dir, name);
					open.push(t);
					temps.push(t.temp);
					try {
						for (let off = 0; off < bytes.byteLength; ) off += writeSync(t.fd, bytes, off, bytes.byteLength - off);
					} catch (err) {
						throw ioError("cannot write temp file", t.temp, err);
					}
				}
				// Every byte is durable before any name can point at it.
				const synced = yield open.map((t) => t.fd);
				synced.forEach((err, i) => {
					if (err !== null) throw ioError("cannot write temp file", open[i].temp, err);
				});
				for (const t of open) {
					try {
						fchmodSync(t.fd, FINAL_MODE);
					} catch (err) {
						throw ioError("cannot write temp file", t.temp, err);
					}
					try {
						closeSync(t.fd);
						t.fd = -1;
					} catch (err) {
						t.fd = -1; // a failed close still releases the descriptor on Linux; never close twice
						throw ioError("cannot close temp file", t.temp, err);
					}
				}
			} finally {
				for (const t of open) closeQuietly(t);
			}
			chunk.forEach(({ dir, name }, i) => {
				const outcome = linkFinal(open[i].temp, join(dir, name));
				// "exists" too: another writer may have linked that name and died before its directory
				// fsync; relying on the name, this call makes it durable.
				dirs.add(dir);
				outcomes.push(outcome);
			});
		}
		// Windows cannot open a directory for fsync; NTFS journals the metadata itself.
		if (dirs.size > 0 && process.platform !== "win32") {
			const order = [...dirs];
			const fds: number[] = [];
			try {
				for (const dir of order) fds.push(openDir(dir));
				const synced = yield fds;
				synced.forEach((err, i) => {
					if (err !== null) throw ioError("cannot fsync directory", order[i], err);
				});
			} finally {
				for (const fd of fds) closeSync(fd);
			}
		}
	} finally {
		for (const temp of temps) removeTemp(temp);
	}
	return outcomes;
}

function flushSync(fds: readonly number[]): FlushResults {
	return fds.map((fd) => {
		try {
			fsyncSync(fd);
			return null;
		} catch (err) {
			return err;
		}
	});
}

const fsyncAsync = promisify(fsync);

/** All fsyncs at once on libuv's thread pool (the kernel can share journal commits between them). */
function flushAsync(fds: readonly number[]): Promise<FlushResults> {
	return Promise.all(
		fds.map((fd) =>
			fsyncAsync(fd).then(
				() => null,
				(err: unknown) => err,
			),
		),
	);
}

/**
 * Publish several files, each written once. Returns, per item, "written" if this call created the
 * final name or "exists" if a final file was already there (the caller must verify it). All files
 * are durable when this returns: each fsynced before its link, each directory fsynced once after.
 */
export function publishAll(items: readonly PublishItem[]): PublishOutcome[] {
	const steps = publishSteps(items);
	try {
		let step = steps.next();
		while (!step.done) step = steps.next(flushSync(step.value));
		return step.value;
	} finally {
		steps.return([]); // a no-op when finished; otherwise runs the cleanup
	}
}

/**
 * publishAll with the fsyncs run concurrently off the main thread. Same names, modes, outcomes,
 * errors and guarantees: nothing is linked before every temp file of its chunk is fsynced, and the
 * promise resolves only after every touched directory is fsynced.
 */
export async function publishAllAsync(items: readonly PublishItem[]): Promise<PublishOutcome[]> {
	const steps = publishSteps(items);
	try {
		let step = steps.next();
		while (!step.done) step = steps.next(await flushAsync(step.value));
		return step.value;
	} finally {
		steps.return([]);
	}
}

/** Publish one file once; see publishAll. */
export function publishOnce(dir: string, name: string, bytes: Uint8Array): PublishOutcome {
	return publishAll([{ dir, name, bytes }])[0];
}
