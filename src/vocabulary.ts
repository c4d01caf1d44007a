// The words pi-fold's parts share, each defined once: fold types and ids, the agent's tool, the
// custom entry types pi-fold appends to a session, the caps more than one part holds to, the
// outcome of an operation, and how an error or an outside value is put into a message.
import type { FoldId } from "./fold-types.ts";

export type { BriefProvenance, FoldId, FoldKind, FoldState, HexHash } from "./fold-types.ts";
export { BRIEF_MAX_CHARS, isFoldId } from "./fold-types.ts";
export type { Outcome, Refusal } from "./lattice/outcome.ts";

/** The agent's tool: every brief names it, as the way to read its fold back. */
export const FOLD_TOOL_NAME = "pi_fold_context";

/** The custom entry pi-fold records every lattice change as (the session is the journal). */
export const RECORD_TYPE = "pi-fold";
/** The custom messages pi-fold appends: a commit's receipt, the overflow notice, the unbriefed-marks notice. */
export const RECEIPT_TYPE = "pi-fold-receipt";
export const OVERFLOW_NOTICE_TYPE = "pi-fold-overflow";
export const UNBRIEFED_NOTICE_TYPE = "pi-fold-unbriefed";
const NOTICE_TYPES: ReadonlySet<string> = new Set([RECEIPT_TYPE, OVERFLOW_NOTICE_TYPE, UNBRIEFED_NOTICE_TYPE]);

/**
 * Whether a session entry is one of pi-fold's own notices (a receipt, the overflow or unbriefed
 * notice). Each says what one commit did, and leaves the window with the next commit.
 */
export function isPiFoldNotice(entry: unknown): boolean {
	const e = entry as { type?: unknown; customType?: unknown } | null;
	return e?.type === "custom_message" && typeof e.customType === "string" && NOTICE_TYPES.has(e.customType);
}

/** The same, for a message of a request (a custom message, as Pi projects such an entry). */
export function isPiFoldNoticeMessage(message: unknown): boolean {
	const m = message as { role?: unknown; customType?: unknown } | null;
	return m?.role === "custom" && typeof m.customType === "string" && NOTICE_TYPES.has(m.customType);
}

/**
 * Pi hands every custom message to the model as a user-role message, and pi-fold's receipt and
 * notices arrive mid-turn, right after a tool result: unframed, a model can take one for a new
 * instruction and restart its work. So each one is wrapped in this tag and opens by saying who wrote
 * it and that the task goes on; the tool's description names the tag as well.
 */
export const AUTOMATED_NOTICE_TAG = "pi-fold-notice";
const NOTICE_OPEN = `<${AUTOMATED_NOTICE_TAG}>\nAutomated, not from the user; carry on with your task.\n`;
const NOTICE_CLOSE = `\n</${AUTOMATED_NOTICE_TAG}>`;
/** UTF-8 bytes the framing adds to a notice's body (ASCII: one byte a character). */
export const AUTOMATED_NOTICE_FRAME_BYTES = NOTICE_OPEN.length + NOTICE_CLOSE.length;

/** A message for the model, framed as pi-fold's automated notice. */
export function automatedNotice(body: string): string {
	return NOTICE_OPEN + body + NOTICE_CLOSE;
}

/** The body of a framed notice (a text without the frame, as older sessions hold, comes back as it is). */
export function automatedNoticeBody(text: string): string {
	return text.startsWith(NOTICE_OPEN) && text.endsWith(NOTICE_CLOSE)
		? text.slice(NOTICE_OPEN.length, text.length - NOTICE_CLOSE.length)
		: text;
}

/** What a commit's receipt says, and carries as its details (the TUI draws it from them). */
export interface ReceiptFacts {
	/** Marks committed, stalest first, and consolidations made. */
	committed: readonly FoldId[];
	consolidated: readonly FoldId[];
	/** Calibrated tokens of the next request before and after the commit. */
	before: number;
	after: number;
	budget: number;
}

export interface ReceiptDetails extends ReceiptFacts {
	v: 1;
}

/** The folding policy's four settings: the person sets them by these names (options, settings file, /fold-settings). */
export interface Thresholds {
	/** A commit fires when the next request would reach this share of the serving budget. */
	maxTarget: number;
	/** A commit folds, stalest first, until occupancy is back at or below this share. */
	minTarget: number;
	/** More visible unpinned fold roots than this are consolidated at the next commit. */
	consolidateAfter: number;
	/** A pending mark must cover at least this many characters. */
	minFoldChars: number;
	/** The newest tool batches of the current chapter that stay raw whatever folding would save (at least 3). */
	rawBatches: number;
}

export const THRESHOLD_KEYS = ["maxTarget", "minTarget", "consolidateAfter", "minFoldChars", "rawBatches"] as const;

/** What one runtime runs with: the options, checked, with the thresholds in force (the settings file may replace them). */
export interface RuntimeSettings {
	thresholds: Thresholds;
	/**
	 * The person fixed the band (maxTarget/minTarget in the options, or other than the defaults in the
	 * settings file): commits fire at maxTarget and fold to minTarget. Otherwise the cost model decides
	 * when and how far to fold, within maxTarget, for any model whose card prices a cache read.
	 */
	bandFixed: boolean;
	providerInputBudget?: number;
	blacklistAutoFoldTools: ReadonlySet<string>;
	/** Milliseconds now, for the prompt cache's lifetime (default Date.now; a simulation passes its own). */
	clock?: () => number;
	/**
	 * Pi's compaction settings for a model, when Pi compacts (undefined: it does not, or cannot say
	 * yet): the budget stays at or below where Pi's own compaction acts. Absent: no such limit.
	 */
	piCompaction?: (model: { provider: string; id: string } | undefined) => PiCompactionSettings | undefined;
}

/** Pi's `compaction.reserveTokens` and `keepRecentTokens` for one model. */
export interface PiCompactionSettings {
	reserveTokens: number;
	keepRecentTokens: number;
}

/** Peek's default slice (a few thousand tokens) and largest slice, in UTF-8 bytes of a fold's text view. */
export const PEEK_DEFAULT_BYTES = 8_000;
export const PEEK_MAX_BYTES = 200_000;
/** Search matches per page: by default, and at most. */
export const SEARCH_DEFAULT_LIMIT = 8;
export const SEARCH_MAX_LIMIT = 30;

export { errorMessage } from "./values/error-message.ts";

/**
 * An outside value (a tool argument, a field of a file) as a refusal names it: a string quoted and
 * cut to `max` characters, a number or boolean with its type, anything else by its kind.
 */
export function describeValue(value: unknown, max = 80): string {
	if (value === undefined) return "missing";
	if (value === null) return "null";
	if (Array.isArray(value)) return "an array";
	if (typeof value === "string")
		return `the string ${JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value)}`;
	if (typeof value === "object") return "an object";
	if (typeof value === "function" || typeof value === "symbol") return `a ${typeof value}`;
	return `${typeof value} ${String(value)}`;
}

/**
 * How a reported problem stands: still to be dealt with (the default), repaired already, or to be
 * repaired once the runtime settles what it waits for (`until`, e.g. a window repair made durable).
 */
export type ProblemState = "open" | "repaired" | { until: string };

/** `value` as a record of fields when it is a plain object (not null, not an array); otherwise undefined. */
export function asRecord(value: unknown): Record<string, unknown> | undefined {
	return typeof value === "object" && value !== null && !Array.isArray(value)
		? (value as Record<string, unknown>)
		: undefined;
}
