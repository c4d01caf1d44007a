// An early window: edits shown on the next request before the boundary that appends them. Two use
// it: a window repair found at open, and a fold planned while Pi is idle (a person's /fold, a model
// switch, a prompt's first request), its folds written to the store at once. The next request is
// shown with them through the `context` event, the only public
// way to change a request before its turn ends (edits returned at a boundary are appended only
// after the request of that turn went out). The same marks then commit at that
// prompt's first turn_end as context_edit entries, which project to exactly the messages shown, so
// the request after extends the bridged one byte for byte and Pi's accounting sees the fold.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { ContextEditEntryDraft, ExtensionContext } from "@earendil-works/pi-coding-agent";
import { samePlainValue } from "../values/plain-value.ts";
import { applyDrafts } from "./drafts.ts";

type SessionView = Pick<ExtensionContext["sessionManager"], "buildSessionProjection">;

function withoutSystem(messages: readonly AgentMessage[]): AgentMessage[] {
	return messages.filter((m) => (m.role as string) !== "system");
}

export type Shown = { ok: true; messages: AgentMessage[]; first: boolean } | { ok: false; reason: string };

export class EarlyWindow {
	#drafts: ContextEditEntryDraft[] | undefined;
	#shown = false;

	/** Show these edits on requests until `take`. */
	arm(drafts: readonly ContextEditEntryDraft[]): void {
		this.#drafts = [...drafts];
		this.#shown = false;
	}

	get armed(): boolean {
		return this.#drafts !== undefined;
	}

	/** A request has shown the armed edits: the boundary that takes them must commit exactly them. */
	get shown(): boolean {
		return this.#drafts !== undefined && this.#shown;
	}

	/**
	 * The request with the armed edits applied, when its messages are exactly the session's
	 * projection (the first request of a prompt); undefined when nothing is armed.
	 */
	show(messages: readonly unknown[], sm: SessionView): Shown | undefined {
		const drafts = this.#drafts;
		if (!drafts) return undefined;
		// The context event carries the projection without its system messages (they travel apart).
		const projection = sm.buildSessionProjection();
		const session = withoutSystem(projection.messages);
		if (session.length !== messages.length) {
			return { ok: false, reason: `the request has ${messages.length} messages, the session ${session.length}` };
		}
		for (let i = 0; i < messages.length; i++) {
			if (!samePlainValue(session[i], messages[i])) {
				return { ok: false, reason: `request message ${i} is not the session's` };
			}
		}
		const applied = applyDrafts(drafts, projection.entries);
		if (!applied.ok) return { ok: false, reason: applied.reason };
		const first = !this.#shown;
		this.#shown = true;
		return { ok: true, messages: withoutSystem(applied.messages), first };
	}

	/** Disarm (at the turn_end that commits): whether a request showed it, and a check of the commit. */
	take():
		| { shown: boolean; matches(drafts: readonly unknown[]): { ok: true } | { ok: false; reason: string } }
		| undefined {
		const drafts = this.#drafts;
		if (!drafts) return undefined;
		const shown = this.#shown;
		this.#drafts = undefined;
		this.#shown = false;
		return {
			shown,
			matches: (committed) => {
				const edits = committed.filter((d) => (d as { type?: string }).type === "context_edit");
				if (edits.length !== drafts.length)
					return { ok: false, reason: `${edits.length} edits, ${drafts.length} shown` };
				for (let i = 0; i < edits.length; i++) {
					if (!samePlainValue(edits[i], drafts[i])) {
						return { ok: false, reason: `edit ${i} (${drafts[i].targetId}) differs` };
					}
				}
				return { ok: true };
			},
		};
	}
}
