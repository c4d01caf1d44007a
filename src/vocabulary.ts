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
}

export const THRESHOLD_KEYS = ["maxTarget", "minTarget", "consolidateAfter", "minFoldChars"] as const;

/** What one runtime runs with: the options, checked, with the thresholds in force (the settings file may replace them). */
export interface RuntimeSettings {
	thresholds: Thresholds;
	providerInputBudget?: number;
	blacklistAutoFoldTools: ReadonlySet<string>;
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
