// Capacity accounting (SPEC 6): one denominator, the serving budget, and one numerator, the
// estimated size of the next request, calibrated by the last usage the provider really reported.
//
// Budget: budget.ts (the serving budget, price tiers included), re-exported here.
//
// Estimate. The core's estimator over the text a provider bills for each message (roles, text,
// thinking, tool names and arguments, tool output, the system prompt and tool declarations), not
// the message JSON: usage, api/model, details, ids and timestamps never reach a model, and JSON
// escaping inflates code. Metadata would weigh far more in a window of briefs than in one of raw
// output, so with JSON the calibration ratio would shift at every commit, which changes exactly
// that mix (not measured here against a real provider: the faux provider bills chars/4).
// The commit's "tokens freed" per mark must use the same function (estimateMessages), so that
// the amount to free and the amount freed are in one unit. Calibration (class Calibration) anchors
// the estimate to the last usage the provider reported.
import type { PiFoldCore } from "../../bindings/index.ts";
import type { Thresholds } from "../policy/thresholds.ts";
import { canonicalJson } from "../values/canonical-json.ts";
import { NOT_PLAIN, plainCopy, samePlainValue } from "../values/plain-value.ts";

export {
	type Budget,
	type BudgetLimit,
	budgetText,
	budgetWhy,
	type ModelLimits,
	OUTPUT_RESERVE_SHARE,
	type PriceTierLimit,
	servingBudget,
} from "./budget.ts";

/** Images are billed by pixels, not by their base64 text; a fixed allowance per image (about a 1 MP image). */
export const IMAGE_TOKENS = 1600;
/** A calibration ratio outside [1/MAX_RATIO, MAX_RATIO] cannot describe the same request: refused. */
export const MAX_CALIBRATION_RATIO = 4;

/** What the estimator sees of one message: its billed text, and how many images it carries. */
export interface BilledParts {
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

/** One message as a memo keeps it. Never changed once kept (two memos may share it). */
interface Billed {
	/** The message the parts were read from. */
	readonly source: unknown;
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
 * A message new to this stream is first looked for at the same index in a `partner` stream, by
 * value: the request as sent carries, cloned, the messages turn_end's preview read just before,
 * so their texts and tokens are taken from there (and the two streams then share the same text
 * strings, which Calibration compares). A message whose billed text comes out as it was at its
 * index last time keeps its tokens.
 */
export class RequestMemo {
	#kept: readonly Billed[] = [];

	estimate(core: PiFoldCore, messages: readonly unknown[], partner?: RequestMemo): RequestEstimate {
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
			if (k !== undefined && sameInput(input, k)) {
				next[i] = k;
				continue;
			}
			const o = other?.[i];
			if (o !== undefined && (m === o.source || sameInput(input, o))) {
				next[i] = o;
				continue;
			}
			// partsOf first: it throws on what cannot be read (a BigInt), leaving the memo as it was.
			const parts = partsOf(input);
			const same = k !== undefined && k.text === parts.text;
			next[i] = {
				source: m,
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

/** The prompt side of a provider usage report. */
export interface PromptUsage {
	input: number;
	cacheRead: number;
	cacheWrite: number;
}

/** input + cacheRead + cacheWrite, or undefined when the report is missing, malformed or empty. */
export function promptTokensOf(usage: unknown): number | undefined {
	if (typeof usage !== "object" || usage === null) return undefined;
	const u = usage as Record<string, unknown>;
	let total = 0;
	for (const key of ["input", "cacheRead", "cacheWrite"] as const) {
		const v = u[key] ?? 0;
		if (typeof v !== "number" || !Number.isFinite(v) || v < 0) return undefined;
		total += v;
	}
	return total > 0 ? total : undefined;
}

export interface Occupancy {
	/** Calibrated estimate of the next request. */
	tokens: number;
	budget: number;
	/** tokens / budget. */
	share: number;
}

export function occupancyOf(tokens: number, budget: number): Occupancy {
	return { tokens, budget, share: budget > 0 ? tokens / budget : Number.POSITIVE_INFINITY };
}

/**
 * Tokens a commit must free: when the next request would reach maxTarget of the budget, enough to
 * bring it down to minTarget; otherwise 0 (no commit fires).
 */
export function commitNeed(occupancy: Occupancy, thresholds: Pick<Thresholds, "maxTarget" | "minTarget">): number {
	const { tokens, budget } = occupancy;
	if (tokens < thresholds.maxTarget * budget) return 0;
	return Math.max(0, Math.ceil(tokens - Math.floor(thresholds.minTarget * budget)));
}

export type CalibrationOutcome =
	| { ok: true; ratio: number; real: number; estimated: number }
	| { ok: false; reason: string };

/**
 * Calibration of the estimator against the provider, from the request a usage report belongs to:
 * the last one observed (observeRequest, as the request is sent) before the assistant message
 * carrying that usage. Each observation is used once.
 *
 * The next request is estimated in one of two ways:
 * - it extends the calibrated request (same billed text for every message of it, then more: the
 *   normal case between commits): the reported usage, exact, plus the calibrated estimate of the
 *   appended messages only; an error can come only from what was appended since;
 * - anything else (a commit rewrote the window): the whole estimate times the ratio real/estimated.
 *
 * The ratio is kept across a commit on purpose: it measures how the provider's tokenizer and
 * framing differ from the estimator on billed text, which a commit does not change (it swaps raw
 * output for briefs, both billed text), and dropping it would fall back to the raw estimate just
 * when the fence and the next commit decision need the best number. The first request after the
 * commit re-measures it. It is dropped when it stops describing the same thing: another model
 * (another tokenizer), or a report so far from the estimate (beyond MAX_CALIBRATION_RATIO) that it
 * cannot be this request's usage; a refused report keeps the previous calibration.
 */
export class Calibration {
	#observed: { estimate: RequestEstimate; model: string } | undefined;
	#anchor: { estimate: RequestEstimate; real: number; ratio: number; model: string } | undefined;

	/** Record the estimate of a request being sent to `model` ("provider/id"). */
	observeRequest(estimate: RequestEstimate, model: string): void {
		this.#observed = estimate.total > 0 ? { estimate, model } : undefined;
	}

	/** Take the usage of the response to the last observed request. Refusals change nothing. */
	calibrate(usage: unknown, model: string): CalibrationOutcome {
		const real = promptTokensOf(usage);
		if (real === undefined) return { ok: false, reason: "the usage report has no prompt tokens" };
		const observed = this.#observed;
		if (!observed) return { ok: false, reason: "no observed request for this usage (already used, or none yet)" };
		if (observed.model !== model) {
			return { ok: false, reason: `the usage is from ${model}, the observed request went to ${observed.model}` };
		}
		const estimated = observed.estimate.total;
		const ratio = real / estimated;
		if (ratio > MAX_CALIBRATION_RATIO || ratio < 1 / MAX_CALIBRATION_RATIO) {
			return {
				ok: false,
				reason: `implausible calibration: ${real} real vs ${estimated} estimated tokens (ratio ${ratio.toFixed(3)})`,
			};
		}
		this.#observed = undefined;
		this.#anchor = { estimate: observed.estimate, real, ratio, model };
		return { ok: true, ratio, real, estimated };
	}

	/** The ratio that applies to requests to `model` (1 until that model has reported usage). */
	ratioFor(model: string): number {
		return this.#anchor && this.#anchor.model === model ? this.#anchor.ratio : 1;
	}

	/** The calibrated token count of a request to `model`. */
	apply(estimate: RequestEstimate, model: string): number {
		const a = this.#anchor;
		if (!a || a.model !== model) return estimate.total;
		const base = a.estimate.texts;
		if (extendsTexts(base, estimate.texts)) {
			let appended = 0;
			for (let i = base.length; i < estimate.tokens.length; i++) appended += estimate.tokens[i];
			return Math.round(a.real + appended * a.ratio);
		}
		return Math.round(estimate.total * a.ratio);
	}
}

function extendsTexts(base: readonly string[], next: readonly string[]): boolean {
	if (base.length > next.length) return false;
	for (let i = 0; i < base.length; i++) if (base[i] !== next[i]) return false;
	return true;
}

/** "provider/id", the key calibration is kept under. */
export function modelKey(model: { provider: string; id: string } | undefined): string {
	return model ? `${model.provider}/${model.id}` : "(no model)";
}

/** Everything one runtime needs: the core and the calibration, together. */
export class OccupancyMeter {
	readonly calibration = new Calibration();
	readonly #core: PiFoldCore;
	/** One memo per stream of requests: as sent (system prompt first), and as turn_end sees the next one. */
	readonly #sentMemo = new RequestMemo();
	readonly #nextMemo = new RequestMemo();

	constructor(core: PiFoldCore) {
		this.#core = core;
	}

	/** The uncalibrated estimate of a request carrying `messages` (system messages included). */
	estimateRequest(messages: readonly unknown[]): RequestEstimate {
		return this.#nextMemo.estimate(this.#core, messages, this.#sentMemo);
	}

	/** Call for each request as it is sent (all its messages); returns its uncalibrated estimate. */
	observeRequest(messages: readonly unknown[], model: string): RequestEstimate {
		const estimate = this.#sentMemo.estimate(this.#core, messages, this.#nextMemo);
		this.calibration.observeRequest(estimate, model);
		return estimate;
	}

	/** Call with the usage of each assistant message (Pi's `message_end`/`turn_end`). */
	calibrate(usage: unknown, model: string): CalibrationOutcome {
		return this.calibration.calibrate(usage, model);
	}

	/** Occupancy of a request carrying `messages`, calibrated, against `budget`. */
	occupancy(messages: readonly unknown[], model: string, budget: number): Occupancy {
		return occupancyOf(this.calibration.apply(this.estimateRequest(messages), model), budget);
	}
}
