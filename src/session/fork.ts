// Forks: a forked session has a new id, so a new store directory, while the records it inherited
// name folds whose bytes sit in the parent's store. The first time the fork needs such a fold, it
// is adopted: verified in the parent store, then written into the fork's own (nothing is moved or
// deleted; the parent's store stays as it is).
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";
import type { PiFoldCore } from "../../bindings/index.ts";
import type { HexHash } from "../fold-types.ts";
import { FoldStore } from "../store/index.ts";
import { errorMessage } from "../vocabulary.ts";

const MAX_ANCESTORS = 32;
/** A session header is one JSON line; more than this is not one. */
const MAX_HEADER_BYTES = 64 * 1024;

type Header = { ok: true; id: string; parentSession?: string } | { ok: false; reason: string };

/**
 * The header line of a session file. The path comes from another session's header, so it is
 * opened without blocking (a FIFO or a device would otherwise hang the session's opening), only a
 * regular file is read, and only its first MAX_HEADER_BYTES.
 */
function headerOf(file: string): Header {
	let fd: number | undefined;
	try {
		fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
		if (!fstatSync(fd).isFile()) return { ok: false, reason: `${file} is not a regular file` };
		const buf = Buffer.alloc(MAX_HEADER_BYTES);
		const n = readSync(fd, buf, 0, buf.length, 0);
		const line = buf.subarray(0, n).toString("utf8").split("\n", 1)[0];
		const h: unknown = JSON.parse(line);
		if (typeof h !== "object" || h === null || (h as { type?: unknown }).type !== "session") {
			return { ok: false, reason: `${file} does not start with a session header` };
		}
		const { id, parentSession } = h as { id?: unknown; parentSession?: unknown };
		if (typeof id !== "string") return { ok: false, reason: `${file}: the session header has no id` };
		return { ok: true, id, parentSession: typeof parentSession === "string" ? parentSession : undefined };
	} catch (err) {
		return {
			ok: false,
			reason: `${file} cannot be read as a session: ${errorMessage(err)}`,
		};
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}

/**
 * The stores of the sessions this one was forked from, nearest first, and why the climb stopped
 * early when it did (an unreadable parent, a path that is not a session file).
 */
export function ancestorStores(
	parentSession: string | undefined,
	core: PiFoldCore,
): { stores: FoldStore[]; problems: string[] } {
	const stores: FoldStore[] = [];
	const problems: string[] = [];
	const seen = new Set<string>();
	for (let file = parentSession; file && stores.length < MAX_ANCESTORS && !seen.has(file); ) {
		seen.add(file);
		const header = headerOf(file);
		if (!header.ok) {
			problems.push(`parent session: ${header.reason}; folds inherited from it cannot be adopted`);
			break;
		}
		try {
			stores.push(FoldStore.forSession({ sessionFile: file, sessionId: header.id }, core));
		} catch (err) {
			problems.push(`parent session ${file}: ${errorMessage(err)}`);
			break;
		}
		file = header.parentSession;
	}
	return { stores, problems };
}

/**
 * Make `record` (and everything under it) present in `target`, copying from the first source
 * store that holds it. Every byte is verified on the way out of the source and on the way in.
 * Returns false when no source has it.
 */
export function adoptFold(target: FoldStore, sources: readonly FoldStore[], record: HexHash): boolean {
	if (target.records.has(record)) return true;
	const source = sources.find((s) => s.records.has(record));
	if (!source) return false;
	const verified = source.verifyFold(record); // the whole fold, leaves included, checked in the source
	// One batch: the leaves, then each record after its children.
	const batch = target.batch();
	batch.putLeaves(verified.leaves.map((l) => l.bytes));
	const copied = new Set<HexHash>();
	const copy = (hash: HexHash): void => {
		if (copied.has(hash) || target.records.has(hash)) return;
		copied.add(hash);
		const r = source.readRecord(hash);
		for (const child of r.children) if (child.type === "fold") copy(child.record);
		batch.putRecords([r]);
	};
	copy(record);
	batch.commitSync();
	return true;
}
