// The table for test/tool-bad-input.test.ts: every bad call to pi_fold_context, with its
// arguments (built from the targets the session provides), who refuses it (Pi's schema check or
// pi-fold) and what the refusal must say. Data only; the session and the checks are in the test.
import type { FoldView } from "../../src/lattice/index.ts";
import type { ToolArgs } from "./fold-agent.ts";

/** What the bad calls aim at, found when the agent gets to them. */
export interface Targets {
	/** The consolidation (expanded before most cases), its first child, and that child's first entry. */
	parent: FoldView;
	child: FoldView;
	inside: string;
	/** The first entry of the consolidation's second child: a span from it out of the consolidation cuts across it. */
	across: string;
	/** The pending mark: its id, its first entry (an assistant with several calls) and that batch's first result. */
	mark: FoldView;
	markCall: string;
	markResult: string;
	markLast: string;
	/** Raw entries: the user prompt and the system entry; a pinned entry. */
	raw: string;
	system: string;
	pinned: string;
}

export interface Case {
	name: string;
	args: (t: Targets) => ToolArgs;
	/** Who refuses: Pi's schema check (pi-fold never runs) or pi-fold. */
	by: "pi" | "pi-fold";
	/** What the refusal must say. */
	says: (t: Targets) => RegExp;
	/** Aimed at the consolidation while it is still collapsed (before the valid expand). */
	early?: boolean;
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const says = (text: string) => () => new RegExp(esc(text));
const UNKNOWN_FOLD = "f0123456789";

export const CASES: Case[] = [
	// Any action
	{ name: "no action", args: () => ({}), by: "pi", says: () => /action: missing/ },
	{ name: "action of the wrong type", args: () => ({ action: 7 }), by: "pi", says: () => /action: expected one of/ },
	{ name: "no agent-callable commit", args: () => ({ action: "commit" }), by: "pi", says: () => /expected one of/ },
	{ name: "action with a space", args: () => ({ action: " status" }), by: "pi", says: () => /expected one of/ },
	{
		name: "a __proto__ argument",
		args: () => JSON.parse('{"action":"status","__proto__":{"polluted":true}}'),
		by: "pi-fold",
		says: says('argument "__proto__" does not apply to action "status" (it takes "detail", "offset")'),
	},
	{
		name: "a constructor argument",
		args: () => ({ action: "status", constructor: "x" }),
		by: "pi-fold",
		says: says('argument "constructor" does not apply to action "status"'),
	},
	// status
	{
		name: "status detail not tree",
		args: () => ({ action: "status", detail: "all" }),
		by: "pi",
		says: () => /detail: expected one of \["tree"\]/,
	},
	{
		name: "status with an id",
		args: (t) => ({ action: "status", id: t.parent.id }),
		by: "pi-fold",
		says: says('argument "id" does not apply to action "status" (it takes "detail", "offset")'),
	},
	// peek
	{ name: "peek without id", args: () => ({ action: "peek" }), by: "pi-fold", says: says('action "peek" needs "id"') },
	{
		name: "peek with a number id",
		args: () => ({ action: "peek", id: 12345 }),
		by: "pi-fold",
		says: says('"id" the string "12345" is not a fold id (f + 10 lower-case hex digits)'),
	},
	{
		name: "peek with a path",
		args: () => ({ action: "peek", id: "../../../etc/passwd" }),
		by: "pi-fold",
		says: says('"id" the string "../../../etc/passwd" is not a fold id'),
	},
	{
		name: "peek with an upper-case id",
		args: () => ({ action: "peek", id: "F0123456789" }),
		by: "pi-fold",
		says: says('"id" the string "F0123456789" is not a fold id'),
	},
	{
		name: "peek an unknown fold",
		args: () => ({ action: "peek", id: UNKNOWN_FOLD }),
		by: "pi-fold",
		says: says(`unknown fold ${UNKNOWN_FOLD} (status lists every fold with detail "tree")`),
	},
	{
		name: "peek an entry id",
		args: (t) => ({ action: "peek", id: t.raw }),
		by: "pi-fold",
		says: (t) => new RegExp(esc(`"id" the string "${t.raw}" is not a fold id`)),
	},
	{
		name: "peek a negative offset",
		args: (t) => ({ action: "peek", id: t.child.id, offset: -1 }),
		by: "pi",
		says: () => /offset: expected >= 0/,
	},
	{
		name: "peek past the end",
		args: (t) => ({ action: "peek", id: t.child.id, offset: 10_000_000 }),
		by: "pi-fold",
		says: (t) => new RegExp(`offset 10000000 is past the end of fold ${t.child.id}'s text \\(\\d+ bytes\\)`),
	},
	{
		name: "peek zero bytes",
		args: (t) => ({ action: "peek", id: t.child.id, bytes: 0 }),
		by: "pi",
		says: () => /bytes: expected >= 1/,
	},
	{
		name: "peek a billion bytes",
		args: (t) => ({ action: "peek", id: t.child.id, bytes: 1e9 }),
		by: "pi",
		says: () => /bytes: expected <= 200000/,
	},
	{
		name: "peek ephemeral not a boolean",
		args: (t) => ({ action: "peek", id: t.child.id, ephemeral: "maybe" }),
		by: "pi",
		says: () => /ephemeral: expected boolean/,
	},
	{
		name: "peek with a brief text",
		args: (t) => ({ action: "peek", id: t.child.id, text: "x" }),
		by: "pi-fold",
		says: says('argument "text" does not apply to action "peek" (it takes "id", "offset", "bytes", "ephemeral")'),
	},
	{
		name: "peek kept raw over the pin cap",
		args: (t) => ({ action: "peek", id: t.parent.id, bytes: 60_000, ephemeral: false }),
		by: "pi-fold",
		says: () =>
			/ephemeral: false would pin this peek's result \(~\d+ tokens\) on top of ~\d+ pinned, over the cap of \d+/,
	},
	{
		name: "status paged without the tree",
		args: () => ({ action: "status", offset: 20 }),
		by: "pi-fold",
		says: says('"offset" pages the fold tree: give it with detail "tree"'),
	},
	// search (answers that are bounded rather than refused are in tool-search.test.ts)
	{
		name: "search without query",
		args: () => ({ action: "search" }),
		by: "pi-fold",
		says: says('action "search" needs "query"'),
	},
	{
		name: "search an empty query",
		args: () => ({ action: "search", query: "" }),
		by: "pi-fold",
		says: says('"query" is empty: give the text to look for'),
	},
	{
		name: "search only spaces",
		args: () => ({ action: "search", query: " \t " }),
		by: "pi-fold",
		says: says('"query" is empty'),
	},
	{
		name: "search 100 KB",
		args: () => ({ action: "search", query: "x".repeat(100 * 1024) }),
		by: "pi-fold",
		says: says('"query" has 102400 characters; a search takes at most 512'),
	},
	{
		name: "search two lines",
		args: () => ({ action: "search", query: "a\nb" }),
		by: "pi-fold",
		says: says('"query" spans lines; search matches one line at a time'),
	},
	{
		name: "search an invalid regex",
		args: () => ({ action: "search", query: "(unclosed", regex: true }),
		by: "pi-fold",
		says: says('"query" is not a pattern search can run: a group is not closed with ) at character 10'),
	},
	{
		name: "search a backreference",
		args: () => ({ action: "search", query: "(a)\\1", regex: true }),
		by: "pi-fold",
		says: says("backreferences (\\1) are not supported at character 6: they need backtracking"),
	},
	{
		name: "search a lookahead",
		args: () => ({ action: "search", query: "foo(?=bar)", regex: true }),
		by: "pi-fold",
		says: says("lookaround and inline flags"),
	},
	{
		name: "search a repetition too large",
		args: () => ({ action: "search", query: "((a{1000}){1000}){1000}", regex: true }),
		by: "pi-fold",
		says: says("the pattern is too large once its repetitions are counted"),
	},
	{
		name: "search regex not a boolean",
		args: () => ({ action: "search", query: "x", regex: "yes" }),
		by: "pi",
		says: () => /regex: expected boolean/,
	},
	{
		name: "search limit 0",
		args: () => ({ action: "search", query: "x", limit: 0 }),
		by: "pi",
		says: () => /limit: expected >= 1/,
	},
	{
		name: "search limit 1000",
		args: () => ({ action: "search", query: "x", limit: 1000 }),
		by: "pi",
		says: () => /limit: expected <= 30/,
	},
	{
		name: "search a negative offset",
		args: () => ({ action: "search", query: "x", offset: -5 }),
		by: "pi",
		says: () => /offset: expected >= 0/,
	},
	{
		name: "search with an id",
		args: (t) => ({ action: "search", query: "x", id: t.child.id }),
		by: "pi-fold",
		says: says('argument "id" does not apply to action "search" (it takes "query", "regex", "limit", "offset")'),
	},
	// brief
	{
		name: "brief without text",
		args: (t) => ({ action: "brief", id: t.mark.id }),
		by: "pi-fold",
		says: says('action "brief" needs "text"'),
	},
	{
		name: "brief with empty text",
		args: (t) => ({ action: "brief", id: t.mark.id, text: "" }),
		by: "pi-fold",
		says: says('"text" must be a non-empty string'),
	},
	{
		name: "brief with blank text",
		args: (t) => ({ action: "brief", id: t.mark.id, text: " \n\t " }),
		by: "pi-fold",
		says: says('"text" must be a non-empty string'),
	},
	{
		name: "brief too long",
		args: (t) => ({ action: "brief", id: t.mark.id, text: "é".repeat(2001) }),
		by: "pi-fold",
		says: says('"text" has 2001 characters; a brief holds at most 2000'),
	},
	{
		name: "brief on a committed fold",
		args: (t) => ({ action: "brief", id: t.child.id, text: "A better brief." }),
		by: "pi-fold",
		says: (t) =>
			new RegExp(
				esc(
					`fold ${t.child.id} is committed: a standing fold's brief is never rewritten; brief works on pending marks`,
				),
			),
	},
	{
		name: "brief on an expanded fold",
		args: (t) => ({ action: "brief", id: t.parent.id, text: "A better brief." }),
		by: "pi-fold",
		says: (t) => new RegExp(esc(`fold ${t.parent.id} is expanded: a standing fold's brief is never rewritten`)),
	},
	{
		name: "brief an unknown fold",
		args: () => ({ action: "brief", id: UNKNOWN_FOLD, text: "x" }),
		by: "pi-fold",
		says: says(`unknown fold ${UNKNOWN_FOLD}`),
	},
	// expand
	{
		name: "expand without id",
		args: () => ({ action: "expand" }),
		by: "pi-fold",
		says: says('action "expand" needs "id"'),
	},
	{
		name: "expand a hidden child",
		early: true,
		args: (t) => ({ action: "expand", id: t.child.id }),
		by: "pi-fold",
		says: (t) =>
			new RegExp(
				`${t.child.id}.* is hidden inside .*${t.parent.id}.*: expand that first \\(one level at a time, outside-in\\)`,
			),
	},
	{
		name: "expand a raw entry",
		args: (t) => ({ action: "expand", id: t.raw }),
		by: "pi-fold",
		says: (t) => new RegExp(esc(`"id" the string "${t.raw}" is not a fold id`)),
	},
	{
		name: "expand a pending mark",
		args: (t) => ({ action: "expand", id: t.mark.id }),
		by: "pi-fold",
		says: (t) =>
			new RegExp(esc(`fold ${t.mark.id} is a pending mark, not in the window yet: nothing to expand (peek reads it)`)),
	},
	{
		name: "expand an expanded fold",
		args: (t) => ({ action: "expand", id: t.parent.id }),
		by: "pi-fold",
		says: (t) => new RegExp(esc(`fold ${t.parent.id} is already expanded`)),
	},
	{
		name: "expand with ids",
		args: (t) => ({ action: "expand", ids: [t.child.id] }),
		by: "pi-fold",
		says: says('argument "ids" does not apply to action "expand" (it takes "id")'),
	},
	// refold
	{
		name: "refold without id",
		args: () => ({ action: "refold" }),
		by: "pi-fold",
		says: says('action "refold" needs "id"'),
	},
	{
		name: "refold a number",
		args: () => ({ action: "refold", id: 7 }),
		by: "pi-fold",
		says: says('"id" the string "7" is not a fold id'),
	},
	{
		name: "refold a collapsed fold",
		args: (t) => ({ action: "refold", id: t.child.id }),
		by: "pi-fold",
		says: (t) => new RegExp(esc(`fold ${t.child.id} is committed, not expanded: nothing to refold`)),
	},
	{
		name: "refold a pending mark",
		args: (t) => ({ action: "refold", id: t.mark.id }),
		by: "pi-fold",
		says: (t) => new RegExp(esc(`fold ${t.mark.id} is pending, not expanded: nothing to refold`)),
	},
	{
		name: "peek a NaN offset (broken model output)",
		args: (t) => ({ action: "peek", id: t.child.id, offset: Number.NaN }),
		by: "pi",
		says: () => /offset: expected integer, got NaN/,
	},
	{
		name: "peek an infinite slice",
		args: (t) => ({ action: "peek", id: t.child.id, bytes: Number.POSITIVE_INFINITY }),
		by: "pi",
		says: () => /bytes: expected integer, got Infinity/,
	},
	// pin
	{ name: "pin without ids", args: () => ({ action: "pin" }), by: "pi-fold", says: says('action "pin" needs "ids"') },
	{
		name: "pin the system entry",
		args: (t) => ({ action: "pin", ids: [t.system] }),
		by: "pi-fold",
		says: () => /is a system entry: it never folds, so it is not pinned/,
	},
	{ name: "pin nothing", args: () => ({ action: "pin", ids: [] }), by: "pi-fold", says: says('"ids" is empty') },
	{
		name: "pin a bare string",
		args: () => ({ action: "pin", ids: "abc" }),
		by: "pi-fold",
		says: says('"abc" is neither a fold id nor an entry id of this session\'s context'),
	},
	{
		name: "pin an entry twice",
		args: (t) => ({ action: "pin", ids: [t.raw, t.raw] }),
		by: "pi-fold",
		says: (t) => new RegExp(esc(`"ids"[1] repeats the string "${t.raw}" (listed at 0)`)),
	},
	{
		name: "pin a pinned entry",
		args: (t) => ({ action: "pin", ids: [t.pinned] }),
		by: "pi-fold",
		says: (t) => new RegExp(`entry "${t.pinned}" .* is already pinned`),
	},
	{
		name: "pin a committed fold",
		args: (t) => ({ action: "pin", ids: [t.child.id] }),
		by: "pi-fold",
		says: (t) =>
			new RegExp(esc(`fold ${t.child.id} is committed: its entries are folded, and only raw entries can be pinned`)),
	},
	{
		name: "pin a folded entry",
		args: (t) => ({ action: "pin", ids: [t.inside] }),
		by: "pi-fold",
		says: (t) => new RegExp(`entry "${t.inside}" .* is inside .*${t.child.id}.*: a folded entry cannot be pinned`),
	},
	{
		name: "pin a mark over the cap",
		args: (t) => ({ action: "pin", ids: [t.mark.id] }),
		by: "pi-fold",
		says: () =>
			/pinning \d+ entries \(~\d+ tokens\) would hold ~\d+ tokens pinned, over the cap of \d+ .*: unpin something first/,
	},
	{
		name: "pin 300 ids",
		args: () => ({ action: "pin", ids: Array.from({ length: 300 }, (_, i) => `e${i}`) }),
		by: "pi-fold",
		says: says('"ids" has 300 ids; at most 256'),
	},
	{
		name: "pin a 5000-character id",
		args: () => ({ action: "pin", ids: ["x".repeat(5000)] }),
		by: "pi-fold",
		says: () => /"ids"\[0\] is the string "x{80}…", not an id/,
	},
	// unpin
	{
		name: "unpin without ids",
		args: () => ({ action: "unpin" }),
		by: "pi-fold",
		says: says('action "unpin" needs "ids"'),
	},
	{
		name: "unpin an entry not pinned",
		args: (t) => ({ action: "unpin", ids: [t.raw] }),
		by: "pi-fold",
		says: (t) => new RegExp(`entry "${t.raw}" .* is not pinned`),
	},
	{
		name: "unpin a fold",
		args: (t) => ({ action: "unpin", ids: [t.child.id] }),
		by: "pi-fold",
		says: (t) => new RegExp(esc(`${t.child.id} is a fold id: a pinned entry is never inside a fold`)),
	},
	{
		name: "unpin an unknown id",
		args: () => ({ action: "unpin", ids: ["nope"] }),
		by: "pi-fold",
		says: says('"nope" is neither a fold id nor an entry id'),
	},
	// reboundary
	{
		name: "reboundary with nothing",
		args: () => ({ action: "reboundary" }),
		by: "pi-fold",
		says: says('reboundary takes either "ids" or "from" and "to"'),
	},
	{
		name: "reboundary with ids and from",
		args: (t) => ({ action: "reboundary", ids: [t.mark.id], from: t.markCall }),
		by: "pi-fold",
		says: says('reboundary takes either "ids" or "from" and "to"'),
	},
	{
		name: "reboundary from alone",
		args: (t) => ({ action: "reboundary", from: t.markCall }),
		by: "pi-fold",
		says: says('reboundary needs both "from" and "to"'),
	},
	{
		name: "reboundary over unknown entries",
		args: () => ({ action: "reboundary", from: "nope", to: "nope2" }),
		by: "pi-fold",
		says: says('unknown from entry "nope"'),
	},
	{
		name: "reboundary backwards",
		args: (t) => ({ action: "reboundary", from: t.markLast, to: t.markCall }),
		by: "pi-fold",
		says: () => /comes after the to entry .*: a span runs from the earlier entry/,
	},
	{
		name: "reboundary a committed fold",
		args: (t) => ({ action: "reboundary", ids: [t.child.id] }),
		by: "pi-fold",
		says: (t) => new RegExp(esc(`fold ${t.child.id} is committed: reboundary re-cuts pending marks only`)),
	},
	{
		name: "reboundary a mark with a committed fold",
		args: (t) => ({ action: "reboundary", ids: [t.mark.id, t.child.id] }),
		by: "pi-fold",
		says: (t) => new RegExp(esc(`fold ${t.child.id} is committed: reboundary merges pending marks only`)),
	},
	{
		name: "reboundary a mark twice",
		args: (t) => ({ action: "reboundary", ids: [t.mark.id, t.mark.id] }),
		by: "pi-fold",
		says: (t) => new RegExp(esc(`"ids"[1] repeats the string "${t.mark.id}"`)),
	},
	{
		name: "reboundary partly over a standing fold",
		args: (t) => ({ action: "reboundary", from: t.across, to: t.markLast }),
		by: "pi-fold",
		says: () => /partially overlaps .*: reboundary never changes standing folds/,
	},
	{
		name: "reboundary splitting a tool batch",
		args: (t) => ({ action: "reboundary", from: t.markCall, to: t.markResult }),
		by: "pi-fold",
		says: () => /splits tool call "[^"]+" of entry .* from its result, .*: a fold covers whole tool batches/,
	},
	{
		name: "reboundary over the system entry",
		args: (t) => ({ action: "reboundary", from: t.system, to: t.raw }),
		by: "pi-fold",
		says: (t) => new RegExp(esc(`contains system entry "${t.system}" (position 0): system entries never fold`)),
	},
	// unmark
	{
		name: "unmark without id",
		args: () => ({ action: "unmark" }),
		by: "pi-fold",
		says: says('action "unmark" needs "id"'),
	},
	{
		name: "unmark a committed fold",
		args: (t) => ({ action: "unmark", id: t.child.id }),
		by: "pi-fold",
		says: (t) => new RegExp(esc(`fold ${t.child.id} is committed, not a pending mark: nothing to withdraw`)),
	},
	{
		name: "unmark an expanded fold",
		args: (t) => ({ action: "unmark", id: t.parent.id }),
		by: "pi-fold",
		says: (t) => new RegExp(esc(`fold ${t.parent.id} is expanded, not a pending mark`)),
	},
	{
		name: "unmark an unknown fold",
		args: () => ({ action: "unmark", id: UNKNOWN_FOLD }),
		by: "pi-fold",
		says: says(`unknown fold ${UNKNOWN_FOLD}`),
	},
	{
		name: "unmark with ids",
		args: (t) => ({ action: "unmark", ids: [t.mark.id] }),
		by: "pi-fold",
		says: says('argument "ids" does not apply to action "unmark" (it takes "id")'),
	},
];
