// The size of a request, estimated: the core's estimator over the text a provider bills for each
// message (roles, text, thinking, tool names and arguments, tool output, the system prompt and
// tool declarations), not the message JSON: usage, api/model, details, ids and timestamps never
// reach a model, and JSON escaping inflates code. Metadata would weigh far more in a window of
// briefs than in one of raw output, so with JSON the calibration ratio would shift at every
// commit, which changes exactly that mix. A commit's "tokens freed" per mark uses the same
// function (estimateMessages), so the amount to free and the amount freed are in one unit.
import type { PiFoldCore } from "../../bindings/index.ts";
import { canonicalJson } from "../values/canonical-json.ts";
import { NOT_PLAIN, plainCopy, samePlainValue } from "../values/plain-value.ts";

/** Images are billed by pixels, not by their base64 text; a fixed allowance per image (about a 1 MP image). */
export const IMAGE_TOKENS = 1600;

/** What the estimator sees of one message: its billed text, and how many images it carries. */
interface BilledParts {
	text: string;
	images: number;
}

type Block = { type?: unknown; text?: unknown; thinking?: unknown; name?: unknown; arguments?: unknown };

function blocksText(content: unknown, parts: string[]): number {
	if (typeof content === "string") {
		parts.push(content);
		return 0;
	}
	if (!Array.isArray(content)) return 0;
	let images = 0;
	for (const raw of content as Block[]) {
		if (typeof raw !== "object" || raw === null) continue;
		if (raw.type === "text" && typeof raw.text === "string") parts.push(raw.text);
		else if (raw.type === "thinking" && typeof raw.thinking === "string") parts.push(raw.thinking);
		else if (raw.type === "toolCall") parts.push(`${String(raw.name)} ${canonicalJson(raw.arguments ?? {})}`);
		else if (raw.type === "image") images++;
		else parts.push(canonicalJson(raw)); // a block kind this code does not know: count all of it
	}
	return images;
}

/**
 * Exactly what billedParts reads of a message: which way it is read, and the fields read that way
 * (of a message without content, all of it). The billed parts are a function of this alone
 * (billedParts is partsOf of it), so it is what RequestMemo compares: not a tool result's details,
 * not an assistant's usage, ids or timestamps, which are not billed.
 */
type BilledInput =
	| { way: "none" }
	| { way: "system"; content: unknown; sections: unknown; toolsAdded: unknown; toolsRemoved: unknown }
	| { way: "content"; role: unknown; toolName: unknown; content: unknown }
	| { way: "whole"; message: Record<string, unknown> };

function billedInput(message: unknown): BilledInput {
	if (typeof message !== "object" || message === null) return { way: "none" };
	const m = message as Record<string, unknown>;
	if (m.role === "system") {
		return {
			way: "system",
			content: m.content,
			sections: m.sections,
			toolsAdded: m.toolsAdded,
			toolsRemoved: m.toolsRemoved,
		};
	}
	if ("content" in m) {
		return {
			way: "content",
			role: m.role,
			toolName: m.role === "toolResult" ? m.toolName : undefined,
			content: m.content,
		};
	}
	return { way: "whole", message: m };
}

function partsOf(input: BilledInput): BilledParts {
	if (input.way === "none") return { text: "", images: 0 };
	let images = 0;
	if (input.way === "system") {
		const parts = ["system"];
		images += blocksText(input.content, parts);
		if (typeof input.sections === "object" && input.sections !== null) {
			for (const section of Object.values(input.sections)) if (typeof section === "string") parts.push(section);
		}
		if (input.toolsAdded !== undefined) parts.push(canonicalJson(input.toolsAdded));
		if (input.toolsRemoved !== undefined) parts.push(canonicalJson(input.toolsRemoved));
		return { text: parts.join("\n"), images };
	}
	if (input.way === "content") {
		const parts = [typeof input.role === "string" ? input.role : "message"];
		if (input.role === "toolResult" && typeof input.toolName === "string") parts.push(input.toolName);
		images += blocksText(input.content, parts);
		return { text: parts.join("\n"), images };
	}
	// Pi's own kinds without content (bash executions, summaries): all of it, overestimated.
	const m = input.message;
	return { text: [typeof m.role === "string" ? m.role : "message", canonicalJson(m)].join("\n"), images: 0 };
}

/** The billed text of one message (any Pi AgentMessage or pi-ai Message). */
export function billedParts(message: unknown): BilledParts {
	return partsOf(billedInput(message));
}

/** A request's uncalibrated estimate, message by message, with the billed texts it was made from. */
export interface RequestEstimate {
	texts: string[];
	/** Per message, image allowance included. */
	tokens: Uint32Array;
	total: number;
}

/**
 * Estimate a request carrying `messages` (pass all of them, system messages included). With a
 * `memo` (the previous request of the same stream, see RequestMemo) the answer is the same, from
 * less work.
 */
export function estimateRequestDetail(
	core: PiFoldCore,
	messages: readonly unknown[],
	memo?: RequestMemo,
): RequestEstimate {
	if (memo) return memo.estimate(core, messages);
	const parts = messages.map(billedParts);
	const texts = parts.map((p) => p.text);
	const tokens = core.estimateTokensBatch(texts);
	let total = 0;
	for (let i = 0; i < parts.length; i++) {
		tokens[i] += parts[i].images * IMAGE_TOKENS;
		total += tokens[i];
	}
	return { texts, tokens, total };
}

/**
 * The sizes of a message's billed strings (role, tool name, each block's type and text), mixed
 * into one number: read without walking the message. See RequestMemo's `sameAs`.
 */
function billedShape(input: BilledInput): number {
	if (input.way !== "content") return 0;
	let h = mix(lengthOf(input.role), lengthOf(input.toolName));
	const content = input.content;
	if (!Array.isArray(content)) return mix(h, lengthOf(content));
	h = mix(h, content.length);
	for (const raw of content as Block[]) {
		if (typeof raw !== "object" || raw === null) continue;
		h = mix(mix(mix(h, lengthOf(raw.type)), lengthOf(raw.text ?? raw.thinking)), lengthOf(raw.name));
	}
	return h;
}

const lengthOf = (x: unknown): number => (typeof x === "string" ? x.length : -1);
const mix = (h: number, x: number): number => (Math.imul(h, 31) + x) | 0;

/** One message as a memo keeps it. Never changed once kept (two memos may share it). */
interface Billed {
	/** The message the parts were read from. */
	readonly source: unknown;
	/** billedShape of its billed input. */
	readonly shape: number;
	/** A private copy of its billed input then (NOT_PLAIN: none could be made; never matched by value). */
	readonly copy: unknown;
	readonly text: string;
	readonly images: number;
	/** The estimator's tokens for `text` (images not included). */
	tokens: number;
}

/**
 * What one stream of requests keeps of its previous request, message by message: the billed text
 * and its tokens. Consecutive requests share all but their newest messages, so message i is read
 * and estimated again only when it is neither the object message i was last time nor has the
 * same billed input (what billedParts reads of it) as the private copy kept of that (plainCopy;
 * keys in the same order, since billedParts iterates a system message's `sections`): billed text
 * and tokens are functions of that value.
 * - The same object: turn_end's preview of the next request hands over the session entries' own
 *   message objects, and a session entry never changes once appended (the lattice's leaf hashes
 *   and the frontier rely on that too).
 * - The same value: the request as sent is a fresh clone every time, so identity never holds
 *   there; the comparison walks the values instead (no serializing, no joining, no estimating).
 * - Proven the same value: `sameAs` (the rewrite recorder's) answers, for a message of the request
 *   as sent, the message of the request before that it compared equal by value, keys in order, in
 *   the `context` event just before: when that is the one kept at its index, the walk is not done
 *   twice. The request as sent holds the very objects the `context` event had (unless a handler
 *   replaced them); a later handler that changed one in place since is caught when it changed the
 *   size of a billed string (billedShape), and otherwise moves the estimate by a few tokens at most.
 * A message new to this stream is first looked for at the same index in a `partner` stream, by
 * value: the request as sent carries, cloned, the messages turn_end's preview read just before,
 * so their texts and tokens are taken from there (and the two streams then share the same text
 * strings, which Calibration compares). A message whose billed text comes out as it was at its
 * index last time keeps its tokens. What is reused is kept with this request's object as its
 * source, so the next request finds it by identity, or through `sameAs`.
 */
export class RequestMemo {
	#kept: readonly Billed[] = [];

	estimate(
		core: PiFoldCore,
		messages: readonly unknown[],
		partner?: RequestMemo,
		sameAs?: (message: unknown) => unknown,
	): RequestEstimate {
		const kept = this.#kept;
		const other = partner === undefined ? undefined : partner.#kept;
		const n = messages.length;
		const next = new Array<Billed>(n);
		const missing: number[] = [];
		for (let i = 0; i < n; i++) {
			const m = messages[i];
			const k = kept[i];
			if (k !== undefined && m === k.source) {
				next[i] = k;
				continue;
			}
			const input = billedInput(m);
			if (k !== undefined && sameAs !== undefined && sameAs(m) === k.source && billedShape(input) === k.shape) {
				next[i] = { ...k, source: m };
				continue;
			}
			if (k !== undefined && sameInput(input, k)) {
				next[i] = { ...k, source: m };
				continue;
			}
			const o = other?.[i];
			if (o !== undefined && (m === o.source || sameInput(input, o))) {
				next[i] = m === o.source ? o : { ...o, source: m };
				continue;
			}
			// partsOf first: it throws on what cannot be read (a BigInt), leaving the memo as it was.
			const parts = partsOf(input);
			const same = k !== undefined && k.text === parts.text;
			next[i] = {
				source: m,
				shape: billedShape(input),
				copy: plainCopy(input),
				text: same ? k.text : parts.text,
				images: parts.images,
				tokens: same ? k.tokens : 0,
			};
			if (!same) missing.push(i);
		}
		if (missing.length > 0) {
			const fresh = core.estimateTokensBatch(missing.map((i) => next[i].text));
			missing.forEach((i, j) => {
				next[i].tokens = fresh[j];
			});
		}
		const texts = new Array<string>(n);
		const tokens = new Uint32Array(n);
		let total = 0;
		for (let i = 0; i < n; i++) {
			const b = next[i];
			texts[i] = b.text;
			tokens[i] = b.tokens + b.images * IMAGE_TOKENS;
			total += tokens[i];
		}
		this.#kept = next;
		return { texts, tokens, total };
	}
}

/** Whether a message's billed input is the same value as the copy `b` was read from. */
function sameInput(input: BilledInput, b: Billed): boolean {
	return b.copy !== NOT_PLAIN && samePlainValue(input, b.copy, true);
}

/** Estimated tokens of each message, in order (uncalibrated): also the unit of a mark's "tokens freed". */
export function estimateMessages(core: PiFoldCore, messages: readonly unknown[]): Uint32Array {
	return estimateRequestDetail(core, messages).tokens;
}

/** Estimated tokens of a whole request (uncalibrated). */
export function estimateRequest(core: PiFoldCore, messages: readonly unknown[]): number {
	return estimateRequestDetail(core, messages).total;
}
