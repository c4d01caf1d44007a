// One session as the view shows it: its branch read from the file (nothing written, no lock: Pi
// may have it open), the window of every request, the fold tree and the store that holds the
// originals, which the page fetches by address and verifies itself.
import type { PiFoldCore } from "../../bindings/index.ts";
import { estimateMessages } from "../meter/estimate.ts";
import { ownVersion } from "../replay/launch-check.ts";
import { ReplayInputError, readSessionFile, skippedWarning } from "../replay/session-lines.ts";
import { FoldStore } from "../store/index.ts";
import { errorMessage } from "../vocabulary.ts";
import { foldTree } from "./fold-tree.ts";
import { sessionBranch } from "./session-branch.ts";
import type { ViewData } from "./view-data.ts";
import { windowHistory } from "./window-history.ts";

export interface SessionView {
	data: ViewData;
	store: FoldStore;
}

/** Read a session file for the view (ReplayInputError when it is not a Pi session). */
export function sessionView(file: string, core: PiFoldCore): SessionView {
	const checked = readSessionFile(file);
	const branch = sessionBranch(checked);
	const notes: string[] = [];
	const skipped = skippedWarning(checked);
	if (skipped !== undefined) notes.push(skipped);
	if (branch.unreadable > 0) notes.push(`${branch.unreadable} pi-fold record(s) on the branch could not be read`);
	let store: FoldStore;
	try {
		store = FoldStore.forSession({ sessionFile: file, sessionId: branch.sessionId }, core);
	} catch (err) {
		throw new ReplayInputError(
			`${file}: no store for session id ${JSON.stringify(branch.sessionId)}: ${errorMessage(err)}`,
		);
	}
	const history = windowHistory(branch, core);
	const briefTokens = (text: string) =>
		estimateMessages(core, [{ role: "assistant", content: [{ type: "text", text }] }])[0];
	const tree = foldTree(branch, store, history.tokens, briefTokens);
	const data: ViewData = {
		file: checked.file,
		sessionId: branch.sessionId,
		version: ownVersion(),
		requests: history.requests,
		commits: history.commits,
		folds: tree.folds,
		pinned: tree.pinned,
		notes,
	};
	return { data, store };
}
