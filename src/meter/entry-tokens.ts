// The token cache of the window's arithmetic: each raw entry's estimated tokens (entries never
// change), and briefs' by their text.
import { type SessionEntry, sessionEntryToContextMessages } from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import { estimateMessages } from "./estimate.ts";

/** How many briefs' token counts EntryTokens keeps before it starts over. */
const BRIEF_CACHE_SIZE = 4096;

/** Estimated (uncalibrated) tokens of each raw entry's message and of briefs, cached: entries never change. */
export class EntryTokens {
	readonly #core: PiFoldCore;
	readonly #cache = new WeakMap<SessionEntry, number>();
	/** Briefs' tokens by text: the window's folds and the pending marks are weighed at every answer and boundary. */
	readonly #briefs = new Map<string, number>();

	constructor(core: PiFoldCore) {
		this.#core = core;
	}

	/** Tokens of the entries' messages as Pi shows them unedited. */
	of(sources: readonly SessionEntry[]): number[] {
		const missing = sources.filter((s) => !this.#cache.has(s));
		if (missing.length > 0) {
			const messages = missing.map((s) => sessionEntryToContextMessages(s)[0] ?? {});
			const tokens = estimateMessages(this.#core, messages);
			for (const [i, s] of missing.entries()) this.#cache.set(s, tokens[i]);
		}
		return sources.map((s) => this.#cache.get(s) ?? 0);
	}

	/** Tokens of a brief shown as an assistant text block. */
	brief(text: string): number {
		const known = this.#briefs.get(text);
		if (known !== undefined) return known;
		const tokens = estimateMessages(this.#core, [{ role: "assistant", content: [{ type: "text", text }] }])[0];
		// Bounded: past BRIEF_CACHE_SIZE texts it starts over (a window shows far fewer folds).
		if (this.#briefs.size >= BRIEF_CACHE_SIZE) this.#briefs.clear();
		this.#briefs.set(text, tokens);
		return tokens;
	}
}
