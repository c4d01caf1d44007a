// The replay's two measuring tools: the runtime's own estimator over the text a provider bills for
// each message (estimateRequestDetail, the function pi-fold's occupancy and commit decisions use,
// so all three policies and the runtime are measured in one unit), and the prefix comparison of
// the cache model. Both are memoized per message object: the three policies' windows share most
// message objects with the recorded session, and a message never changes.
// Each billed text also gets a key with fold ids masked: a fold id is a hash over its entries'
// bytes, ids and timestamps included, so a replayed fold of the same span has another id (Pi gives
// replayed entries new ones), but its brief, receipt or notice is otherwise the same text, of the
// same length, and is billed the same (provider-tokens.ts matches texts by key).
import type { PiFoldCore } from "../../bindings/index.ts";
import { estimateRequestDetail, type RequestEstimate } from "../meter/estimate.ts";
import { canonicalJson } from "../values/canonical-json.ts";

interface Estimated {
	text: string;
	key: string;
	tokens: number;
}

/** pi-fold's fold ids (fold-types.ts: "f" and 10 hex digits), as they appear in its texts. */
const FOLD_ID_IN_TEXT = /\bf[0-9a-f]{10}\b/g;

/** A billed text with fold ids masked (the same length). */
function textKey(text: string): string {
	return text.replace(FOLD_ID_IN_TEXT, "f__________");
}

/** An estimate with each message's text key. */
export interface Estimate extends RequestEstimate {
	keys: string[];
}

export class RequestMeter {
	readonly core: PiFoldCore;
	readonly #estimates = new WeakMap<object, Estimated>();
	readonly #canonical = new WeakMap<object, string>();

	constructor(core: PiFoldCore) {
		this.core = core;
	}

	/** The uncalibrated estimate of `messages`, message by message, with their billed texts and keys. */
	estimate(messages: readonly unknown[]): Estimate {
		const missing: object[] = [];
		for (const m of messages) if (typeof m === "object" && m !== null && !this.#estimates.has(m)) missing.push(m);
		if (missing.length > 0) {
			const fresh = estimateRequestDetail(this.core, missing);
			missing.forEach((m, k) => {
				this.#estimates.set(m, { text: fresh.texts[k], key: textKey(fresh.texts[k]), tokens: fresh.tokens[k] });
			});
		}
		const texts = new Array<string>(messages.length);
		const keys = new Array<string>(messages.length);
		const tokens = new Uint32Array(messages.length);
		let total = 0;
		messages.forEach((m, i) => {
			const known = typeof m === "object" && m !== null ? this.#estimates.get(m) : undefined;
			texts[i] = known?.text ?? "";
			keys[i] = known?.key ?? "";
			tokens[i] = known?.tokens ?? 0;
			total += tokens[i];
		});
		return { texts, keys, tokens, total };
	}

	/** The uncalibrated estimate of one text billed on its own. */
	estimateText(role: "user" | "assistant", text: string): number {
		return this.estimate([{ role, content: [{ type: "text", text }] }]).total;
	}

	canonical(message: unknown): string {
		if (typeof message !== "object" || message === null) return canonicalJson(message);
		let text = this.#canonical.get(message);
		if (text === undefined) {
			text = canonicalJson(message);
			this.#canonical.set(message, text);
		}
		return text;
	}

	/** Leading messages `cur` shares with `prev` (same object, or equal canonical JSON). */
	sharedPrefix(prev: readonly unknown[], cur: readonly unknown[]): number {
		let k = 0;
		while (
			k < prev.length &&
			k < cur.length &&
			(prev[k] === cur[k] || this.canonical(prev[k]) === this.canonical(cur[k]))
		) {
			k++;
		}
		return k;
	}
}
