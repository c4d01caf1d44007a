// Tool-call pairing of a model window: every call answered by its result, no result without its
// call. Pi does not check it and providers refuse a request that breaks it, so a batch of edits
// must not break it (pairingIssues), and a request about to be sent that already does is stopped
// by the fence (PairingWatch). Which calls a message opens is one rule (callsOpenedBy).
import { callsOpenedBy } from "../session/context-entries.ts";
import { asRecord } from "../vocabulary.ts";

/** One pairing problem: `key` names the call (stable when other messages come or go). */
interface PairingIssue {
	key: string;
	text: string;
}

/** Calls without results and results without calls in a window, in order. */
export function pairingIssues(messages: readonly unknown[]): PairingIssue[] {
	const issues: PairingIssue[] = [];
	let open = new Set<string>();
	const unanswered = (where: string) => {
		for (const id of open) issues.push({ key: `unanswered ${id}`, text: `${where}: call ${id} is unanswered` });
	};
	messages.forEach((message, i) => {
		const m = asRecord(message);
		if (m?.role === "toolResult") {
			const id = String(m.toolCallId);
			if (!open.delete(id)) issues.push({ key: `orphan ${id}`, text: `#${i}: result ${id} without its call` });
			return;
		}
		// Pi's system messages (prompt, mid-run patches) are lifted out of the turn order by every adapter.
		if (m?.role === "system") return;
		unanswered(`#${i} (${String(m?.role)})`);
		open = new Set(callsOpenedBy(m));
	});
	unanswered("end");
	return issues;
}

/**
 * Tool results without their call in the requests Pi is about to send. A request that only
 * appends to the last one checked is read from where that one ended (the state carries over), so
 * the watch costs what was appended, not the session's length.
 */
export class PairingWatch {
	#count = 0;
	/** Calls of the latest assistant message still waiting for their results. */
	#open = new Set<string>();
	#orphans: string[] = [];

	/** Orphan tool results (by call id) in `messages`; `appended`: they extend the last ones checked. */
	check(messages: readonly unknown[], appended: boolean): readonly string[] {
		if (!appended || messages.length < this.#count) {
			this.#count = 0;
			this.#open = new Set();
			this.#orphans = [];
		}
		for (let i = this.#count; i < messages.length; i++) {
			const m = asRecord(messages[i]);
			if (m?.role === "toolResult") {
				const id = String(m.toolCallId);
				if (!this.#open.delete(id)) this.#orphans.push(id);
				continue;
			}
			// System messages travel apart from the turns; every other message closes the open calls.
			if (m?.role === "system") continue;
			this.#open = new Set(callsOpenedBy(m));
		}
		this.#count = messages.length;
		return this.#orphans;
	}
}
