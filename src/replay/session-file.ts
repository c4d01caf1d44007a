// A checked session file (session-lines.ts) opened by Pi's SessionManager, in memory (never the
// file: opening a legacy file migrates and rewrites it in place). Pi migrates any version it knows,
// legacy v1 included, and gives the branch that was active when the file was saved.
import { type FileEntry, SessionManager } from "@earendil-works/pi-coding-agent";
import { errorMessage } from "../vocabulary.ts";
import { type CheckedSession, ReplayInputError, readSessionFile } from "./session-lines.ts";

export { ReplayInputError } from "./session-lines.ts";

export interface LoadedSession extends Omit<CheckedSession, "entries"> {
	/** Pi's manager over the recorded entries (migrated), leaf at the last entry in file order. */
	manager: SessionManager;
}

export function openSession(checked: CheckedSession): LoadedSession {
	let manager: SessionManager;
	try {
		// Pi migrates in place: give it copies, so `checked` stays as read.
		const entries = checked.entries.map((e) => ({ ...e }) as FileEntry);
		manager = SessionManager.inMemory(checked.cwd, undefined, entries);
	} catch (err) {
		throw new ReplayInputError(`${checked.file}: Pi cannot open it: ${errorMessage(err)}`);
	}
	const { file, version, cwd, skipped, skippedCount } = checked;
	return { file, version, cwd, skipped, skippedCount, manager };
}

/** Read, check and open a session file (ReplayInputError for a file that cannot be replayed). */
export function loadSession(file: string): LoadedSession {
	return openSession(readSessionFile(file));
}
