// Forks: a forked session has a new id, so a new store directory, while the records it inherited
// name folds whose bytes sit in the parent's store. The first time the fork needs such a fold, it
// is adopted: verified in the parent store, then written into the fork's own (nothing is moved or
// deleted; the parent's store stays as it is).
import { closeSync, openSync, readSync } from "node:fs";
import type { PiFoldCore } from "../../bindings/index.ts";
import type { HexHash } from "../fold-types.ts";
import { FoldStore } from "../store/index.ts";

const MAX_ANCESTORS = 32;

/** The header line of a session file, or undefined if it cannot be read as one. */
function headerOf(file: string): { id: string; parentSession?: string } | undefined {
	let fd: number | undefined;
	try {
		fd = openSync(file, "r");
		const buf = Buffer.alloc(64 * 1024);
		const n = readSync(fd, buf, 0, buf.length, 0);
		const line = buf.subarray(0, n).toString("utf8").split("\n", 1)[0];
		const h: unknown = JSON.parse(line);
		if (typeof h !== "object" || h === null || (h as { type?: unknown }).type !== "session") return undefined;
		const { id, parentSession } = h as { id?: unknown; parentSession?: unknown };
		if (typeof id !== "string") return undefined;
		return { id, parentSession: typeof parentSession === "string" ? parentSession : undefined };
	} catch {
		return undefined;
	} finally {
		if (fd !== undefined) closeSync(fd);
	}
}

/** The stores of the sessions this one was forked from, nearest first (missing ones skipped). */
export function ancestorStores(parentSession: string | undefined, core: PiFoldCore): FoldStore[] {
	const stores: FoldStore[] = [];
	const seen = new Set<string>();
	for (let file = parentSession; file && stores.length < MAX_ANCESTORS && !seen.has(file); ) {
		seen.add(file);
		const header = headerOf(file);
		if (!header) break;
		try {
			stores.push(FoldStore.forSession({ sessionFile: file, sessionId: header.id }, core));
		} catch {
			break; // an id the store refuses: stop climbing
		}
		file = header.parentSession;
	}
	return stores;
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
	target.putLeaves(verified.leaves.map((l) => l.bytes));
	const copy = (hash: HexHash): void => {
		if (target.records.has(hash)) return;
		const r = source.readRecord(hash);
		for (const child of r.children) if (child.type === "fold") copy(child.record);
		target.putRecord(r);
	};
	copy(record);
	return true;
}
