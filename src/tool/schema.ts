// The pi_fold_context tool's arguments: the TypeBox schema the model sees, and our own parser.
// Pi validates against the schema before execute; the parser re-checks per action (which
// arguments an action takes, their types and ranges) so every caller, also ones that skip Pi's
// validation, gets a specific refusal rather than an exception or a partial change.
import { type Static, Type } from "typebox";
import {
	BRIEF_MAX_CHARS,
	describeValue,
	errorMessage,
	isFoldId,
	PEEK_MAX_BYTES,
	SEARCH_DEFAULT_LIMIT,
	SEARCH_MAX_LIMIT,
} from "../vocabulary.ts";

/** Every action the tool accepts; each one is implemented by one module in src/tool/. */
const ACTIONS = [
	"status",
	"peek",
	"search",
	"brief",
	"expand",
	"refold",
	"pin",
	"unpin",
	"reboundary",
	"unmark",
] as const;
export type ActionName = (typeof ACTIONS)[number];

const ACTION_HELP =
	"status: occupancy, thresholds, marks, pins, fold roots (detail tree: every fold, a page at a time from offset). " +
	"peek: a fold's exact source as text (id; offset/bytes for a slice; ephemeral false keeps the result raw). " +
	"search: find text in every fold (query; case-insensitive, literal unless regex is true; limit/offset page the matches); each match names its fold and the offset peek lands on. " +
	"brief: your sentence on a pending mark (id, text). expand / refold: show a committed fold's contents one level / collapse it again (id). " +
	"pin / unpin: hold entries raw (ids: entry or fold ids). reboundary: ids of pending marks become one mark, one id returns it to raw (or from/to entry ids). " +
	"unmark: withdraw a pending mark (id).";

export const foldToolParameters = Type.Object({
	// A plain string enum (what pi-ai's StringEnum emits, which every provider accepts), typed for TypeBox.
	action: Type.Unsafe<ActionName>({ type: "string", enum: [...ACTIONS], description: ACTION_HELP }),
	id: Type.Optional(Type.String({ description: "A fold id (f + 10 hex digits)" })),
	ids: Type.Optional(Type.Array(Type.String(), { description: "Fold ids or entry ids (pin, unpin, reboundary)" })),
	text: Type.Optional(Type.String({ description: `brief: the brief, at most ${BRIEF_MAX_CHARS} characters` })),
	offset: Type.Optional(
		Type.Integer({
			minimum: 0,
			description: "peek: first byte of the slice; search: matches to skip; status tree: folds to skip",
		}),
	),
	query: Type.Optional(Type.String({ description: "search: the text to find (one line, case-insensitive)" })),
	regex: Type.Optional(
		Type.Boolean({ description: "search: true reads query as a regular expression (no backreferences or lookaround)" }),
	),
	limit: Type.Optional(
		Type.Integer({
			minimum: 1,
			maximum: SEARCH_MAX_LIMIT,
			description: `search: matches to show (default ${SEARCH_DEFAULT_LIMIT})`,
		}),
	),
	bytes: Type.Optional(
		Type.Integer({ minimum: 1, maximum: PEEK_MAX_BYTES, description: "peek: length of the slice in bytes" }),
	),
	ephemeral: Type.Optional(
		Type.Boolean({ description: "peek: true (default) folds the peek result at the next commit; false pins it" }),
	),
	detail: Type.Optional(
		Type.Unsafe<"tree">({ type: "string", enum: ["tree"], description: "status: list every fold" }),
	),
	from: Type.Optional(Type.String({ description: "reboundary: first entry id of the span" })),
	to: Type.Optional(Type.String({ description: "reboundary: last entry id of the span" })),
});

export type FoldToolArgs = Static<typeof foldToolParameters>;

export type ParsedArgs = { ok: true; args: FoldToolArgs } | { ok: false; action: string | null; reason: string };

type Key = Exclude<keyof FoldToolArgs, "action">;

/** Per action: arguments it requires and arguments it also accepts. */
const SHAPES: Record<ActionName, { required: Key[]; optional: Key[] }> = {
	status: { required: [], optional: ["detail", "offset"] },
	peek: { required: ["id"], optional: ["offset", "bytes", "ephemeral"] },
	search: { required: ["query"], optional: ["regex", "limit", "offset"] },
	brief: { required: ["id", "text"], optional: [] },
	expand: { required: ["id"], optional: [] },
	refold: { required: ["id"], optional: [] },
	pin: { required: ["ids"], optional: [] },
	unpin: { required: ["ids"], optional: [] },
	reboundary: { required: [], optional: ["ids", "from", "to"] },
	unmark: { required: ["id"], optional: [] },
};

const MAX_IDS = 256;
const MAX_ID_LENGTH = 256;

/** Why one argument's value is wrong for its key, or undefined when it is fine. */
function checkValue(key: Key, v: unknown): string | undefined {
	const isId = (x: unknown) => typeof x === "string" && x.length > 0 && x.length <= MAX_ID_LENGTH;
	switch (key) {
		case "id":
			if (typeof v !== "string") return `"id" must be a fold id string, got ${describeValue(v)}`;
			if (!isFoldId(v)) return `"id" ${describeValue(v)} is not a fold id (f + 10 lower-case hex digits)`;
			return undefined;
		case "ids":
			if (!Array.isArray(v)) return `"ids" must be a list of ids, got ${describeValue(v)}`;
			if (v.length === 0) return `"ids" is empty`;
			if (v.length > MAX_IDS) return `"ids" has ${v.length} ids; at most ${MAX_IDS}`;
			for (const [i, x] of v.entries()) {
				if (!isId(x)) return `"ids"[${i}] is ${describeValue(x)}, not an id`;
				if (v.indexOf(x) !== i) return `"ids"[${i}] repeats ${describeValue(x)} (listed at ${v.indexOf(x)})`;
			}
			return undefined;
		case "from":
		case "to":
			return isId(v) ? undefined : `"${key}" must be an entry id string, got ${describeValue(v)}`;
		case "text":
			return typeof v === "string" ? undefined : `"text" must be a string, got ${describeValue(v)}`;
		case "offset":
			return Number.isSafeInteger(v) && (v as number) >= 0
				? undefined
				: `"offset" must be a whole number >= 0, got ${describeValue(v)}`;
		case "bytes":
			return Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= PEEK_MAX_BYTES
				? undefined
				: `"bytes" must be a whole number from 1 to ${PEEK_MAX_BYTES}, got ${describeValue(v)}`;
		case "ephemeral":
			return typeof v === "boolean" ? undefined : `"ephemeral" must be true or false, got ${describeValue(v)}`;
		case "detail":
			return v === "tree" ? undefined : `"detail" may only be "tree", got ${describeValue(v)}`;
		case "query":
			return typeof v === "string" ? undefined : `"query" must be a string, got ${describeValue(v)}`;
		case "regex":
			return typeof v === "boolean" ? undefined : `"regex" must be true or false, got ${describeValue(v)}`;
		case "limit":
			return Number.isSafeInteger(v) && (v as number) >= 1 && (v as number) <= SEARCH_MAX_LIMIT
				? undefined
				: `"limit" must be a whole number from 1 to ${SEARCH_MAX_LIMIT}, got ${describeValue(v)}`;
	}
}

/** What a thrown value says, without trusting it (its message or its toString may throw too). */
function thrownText(err: unknown): string {
	try {
		return errorMessage(err);
	} catch {
		return "a value that cannot be shown";
	}
}

/**
 * The arguments as plain values, read once: a getter or a Proxy trap that throws is met here (and
 * refused) rather than in an action, and nothing later reads the caller's object again.
 */
function readArgs(raw: unknown): { ok: true; value: unknown } | { ok: false; reason: string } {
	let at = "the arguments' keys";
	try {
		if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return { ok: true, value: raw };
		// No prototype: a "__proto__" key is copied as the own key it was, not as a prototype.
		const copy: Record<string, unknown> = Object.create(null);
		for (const key of Object.keys(raw)) {
			at = JSON.stringify(key);
			const value = (raw as Record<string, unknown>)[key];
			copy[key] = Array.isArray(value) ? Array.from(value) : value;
		}
		return { ok: true, value: copy };
	} catch (err) {
		return { ok: false, reason: `arguments could not be read: reading ${at} threw (${thrownText(err)})` };
	}
}

/** Check raw tool arguments; the reason names the argument, what was given and what is allowed. */
export function parseFoldArgs(given: unknown): ParsedArgs {
	const read = readArgs(given);
	if (!read.ok) return { ok: false, action: null, reason: read.reason };
	const raw = read.value;
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
		return {
			ok: false,
			action: null,
			reason: `arguments must be an object with an "action", got ${describeValue(raw)}`,
		};
	}
	const record = raw as Record<string, unknown>;
	const action = record.action;
	const allowed = ACTIONS.map((a) => JSON.stringify(a)).join(", ");
	if (action === undefined) return { ok: false, action: null, reason: `"action" is missing; use one of ${allowed}` };
	if (typeof action !== "string") {
		return {
			ok: false,
			action: null,
			reason: `"action" must be a string, got ${describeValue(action)}; use one of ${allowed}`,
		};
	}
	if (!(ACTIONS as readonly string[]).includes(action)) {
		return { ok: false, action, reason: `unknown action ${JSON.stringify(action)}; use one of ${allowed}` };
	}
	const name = action as ActionName;
	const shape = SHAPES[name];
	const takes = new Set<string>([...shape.required, ...shape.optional]);
	const stray = Object.keys(record).filter((k) => k !== "action" && !takes.has(k) && record[k] !== undefined);
	if (stray.length > 0) {
		const list = takes.size === 0 ? "no other arguments" : [...takes].map((k) => JSON.stringify(k)).join(", ");
		return {
			ok: false,
			action,
			reason: `argument ${stray.map((k) => JSON.stringify(k)).join(", ")} does not apply to action "${name}" (it takes ${list})`,
		};
	}
	for (const key of shape.required) {
		if (record[key] === undefined) return { ok: false, action, reason: `action "${name}" needs "${key}"` };
	}
	for (const key of takes) {
		if (record[key] === undefined) continue;
		const why = checkValue(key as Key, record[key]);
		if (why) return { ok: false, action, reason: why };
	}
	if (name === "status" && record.offset !== undefined && record.detail !== "tree") {
		return { ok: false, action, reason: '"offset" pages the fold tree: give it with detail "tree"' };
	}
	if (name === "reboundary") {
		const hasIds = record.ids !== undefined;
		const hasSpan = record.from !== undefined || record.to !== undefined;
		if (hasIds === hasSpan) return { ok: false, action, reason: 'reboundary takes either "ids" or "from" and "to"' };
		if (hasSpan && (record.from === undefined || record.to === undefined)) {
			return { ok: false, action, reason: 'reboundary needs both "from" and "to"' };
		}
	}
	const args: Record<string, unknown> = { action: name };
	for (const key of takes) if (record[key] !== undefined) args[key] = record[key];
	return { ok: true, args: args as FoldToolArgs };
}
