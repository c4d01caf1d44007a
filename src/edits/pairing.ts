// Tool results without their call, in the requests Pi is about to send. Pi does not check pairing
// and providers refuse such a request, so the fence stops it. A request that only appends to the
// last one checked is read from where that one ended (the state carries over), so the watch costs
// what was appended, not the session's length.

type Loose = { role?: unknown; toolCallId?: unknown; stopReason?: unknown; content?: unknown };

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
			const m = messages[i] as Loose;
			if (m.role === "toolResult") {
				const id = String(m.toolCallId);
				if (!this.#open.delete(id)) this.#orphans.push(id);
				continue;
			}
			// System messages travel apart from the turns; every other message closes the open calls.
			if (m.role === "system") continue;
			this.#open = new Set();
			// Aborted and failed assistant messages never reach a provider: their calls pair with nothing.
			if (
				m.role === "assistant" &&
				m.stopReason !== "aborted" &&
				m.stopReason !== "error" &&
				Array.isArray(m.content)
			) {
				for (const b of m.content as { type?: unknown; id?: unknown }[]) {
					if (b?.type === "toolCall") this.#open.add(String(b.id));
				}
			}
		}
		this.#count = messages.length;
		return this.#orphans;
	}
}
