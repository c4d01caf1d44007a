// Bad input to pi_fold_context, table-driven, on a real session: for every action, missing,
// wrong-typed, out-of-range and hostile arguments, and actions on the wrong state (brief on a
// committed fold, expand of a raw entry or a pending mark, refold of a collapsed fold...). Each
// call must be refused with a specific reason, and change nothing: the lattice, the staged edits,
// the records and edits on the branch are as before the call, and the next request extends the
// one that carried it (the window is untouched). Some arguments never reach pi-fold: Pi checks
// them against the tool's schema first; those are in the table too, marked "pi", and pi-fold's
// own parser is checked for the same values directly (other callers skip Pi's check).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FoldView } from "../src/lattice/index.ts";
import type { FoldRuntime } from "../src/runtime/runtime.ts";
import { runFoldAction } from "../src/tool/dispatch.ts";
import { parseFoldArgs } from "../src/tool/schema.ts";
import {
	call,
	type FoldAgent,
	finish,
	foldAgent,
	once,
	resultOf,
	run,
	type ToolArgs,
	toolStep,
	work,
} from "./helpers/fold-agent.ts";
import { removeTempDirs, textOf } from "./helpers/pi-harness.ts";
import { isAppendOf } from "./helpers/requests.ts";

const ARITHMETIC = /\n-- window: ~\d+ of \d+ tokens \([\d.]+%\); .*\.$/;
const PI_SCHEMA = /^Validation failed for tool "pi_fold_context":/;

/** What the bad calls aim at, found when the agent gets to them. */
interface Targets {
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

interface Case {
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

const CASES: Case[] = [
	// Any action
	{ name: "no action", args: () => ({}), by: "pi", says: () => /action: missing/ },
	{ name: "action of the wrong type", args: () => ({ action: 7 }), by: "pi", says: () => /action: expected one of/ },
	{ name: "no agent-callable commit", args: () => ({ action: "commit" }), by: "pi", says: () => /expected one of/ },
	{ name: "action with a space", args: () => ({ action: " status" }), by: "pi", says: () => /expected one of/ },
	{
		name: "a __proto__ argument",
		args: () => JSON.parse('{"action":"status","__proto__":{"polluted":true}}'),
		by: "pi-fold",
		says: says('argument "__proto__" does not apply to action "status" (it takes "detail")'),
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
		says: says('argument "id" does not apply to action "status" (it takes "detail")'),
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
	// pin
	{ name: "pin without ids", args: () => ({ action: "pin" }), by: "pi-fold", says: says('action "pin" needs "ids"') },
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

const callId = (c: Case) => `bad-${CASES.indexOf(c)}`;

describe("pi_fold_context refuses bad input specifically and changes nothing", () => {
	let agent: FoldAgent;
	let targets: Targets | undefined;
	const rt = (): FoldRuntime => {
		const r = agent.fold.runtime.get();
		if (!r) throw new Error("no runtime");
		return r;
	};

	beforeAll(async () => {
		// A large budget: no commit fires by itself during the bad calls; a /fold makes the folds.
		// A low minTarget: a small pin cap (minTarget x 0.5 of the budget), so a mark can exceed it.
		agent = await foldAgent({ budget: 60_000, thresholds: { minTarget: 0.05 } });
		const pick = once((): Targets => {
			const r = rt();
			const lattice = r.lattice;
			const view = r.view;
			if (!lattice || !view) throw new Error("no session open");
			const parent = lattice.folds().find((f) => f.kind === "consolidation" && f.parent === null);
			const mark = lattice.pending().find((f) => (view.context.entries[f.start].toolCallIds?.length ?? 0) >= 2);
			if (!parent || !mark) throw new Error("the work made no consolidation or no mark over a batch of calls");
			const kids = parent.children.flatMap((c) => (c.type === "fold" ? [lattice.get(c.id) as FoldView] : []));
			const [child, second] = kids;
			if (!second) throw new Error("the consolidation has fewer than two fold children");
			const entries = view.context.entries;
			const pinned = lattice.pins()[0];
			if (!pinned) throw new Error("nothing pinned");
			return {
				parent,
				child,
				inside: entries[child.start].id,
				across: entries[second.start].id,
				mark,
				markCall: entries[mark.start].id,
				markResult: entries[mark.start + 1].id,
				markLast: entries[mark.end - 1].id,
				raw: entries.find((e) => e.role === "user")?.id ?? "",
				system: entries[0].id,
				pinned,
			};
		});
		const lsEntries = () =>
			(rt().lattice?.entries ?? [])
				.filter((e) => [...(e.toolCallIds ?? []), e.toolCallId].includes("pin-ls"))
				.map((e) => e.id);
		const bad = (c: Case) =>
			call(agent, callId(c), () => {
				targets = pick();
				return c.args(targets);
			});
		await run(agent, [
			...work(agent, "w-", 10, 5),
			call(agent, "fold-now", () => {
				// A person's /fold while the agent works: every mark commits at this turn's end.
				const r = agent.actions.foldNow([]);
				if (!r.ok) throw new Error(r.reason);
				return { action: "status" };
			}),
			...work(agent, "x-", 3, 7),
			toolStep(agent, "Listing the package root.", ["pin-ls", "ls", { path: "." }]),
			call(agent, "pin", () => ({ action: "pin", ids: lsEntries() })),
			call(agent, "settle", { action: "status" }),
			...CASES.filter((c) => c.early).map(bad),
			call(agent, "expand-parent", () => ({ action: "expand", id: pick().parent.id })),
			call(agent, "settled", { action: "status" }),
			...CASES.filter((c) => !c.early).map(bad),
			finish(agent, "Done."),
		]);
	}, 240_000);

	afterAll(() => {
		agent?.h.dispose();
		removeTempDirs();
	});

	it("the scene is set: a /fold commit, an expanded consolidation, a pending mark, a pin; no problem", () => {
		const r = rt();
		expect(r.commits.map((c) => c.reason)).toEqual(["fold"]);
		expect(targets).toBeDefined();
		const t = targets as Targets;
		expect(r.lattice?.get(t.parent.id)?.state).toBe("expanded");
		expect(r.lattice?.get(t.mark.id)?.state).toBe("pending");
		for (const id of ["fold-now", "pin", "settle", "expand-parent", "settled"]) {
			expect(resultOf(agent, id).isError, textOf(resultOf(agent, id))).toBe(false);
		}
		expect(r.status().problems).toEqual([]);
		expect(r.status().rewrites.unattributed).toBe(0);
		expect(agent.h.extensionErrors).toEqual([]);
		expect(r.status().fence.stopped).toBe(0);
	});

	it.each(CASES.map((c) => [c.name, c] as const))("%s", (_name, c) => {
		const id = callId(c);
		const t = targets as Targets;
		const r = resultOf(agent, id);
		const text = textOf(r);
		expect(r.isError, text).toBe(true);
		expect(text).toMatch(c.says(t));
		const after = agent.afterCall.get(id);
		expect(after?.ran, "who refused").toBe(c.by === "pi-fold");
		if (c.by === "pi-fold") {
			expect(text.startsWith("pi_fold_context refused: "), text).toBe(true);
			expect(text, "ends with the arithmetic").toMatch(ARITHMETIC);
		} else expect(text).toMatch(PI_SCHEMA);
		// Nothing changed: the runtime as the call found it and as it left it.
		const at = agent.issuedAt.get(id) as number;
		const { ran: _ran, ...left } = after ?? { ran: false };
		expect(left).toEqual(agent.atRequest[at]);
		// And the window: the next request extends the one that carried the call.
		const [carried, next] = [agent.h.captured[at], agent.h.captured[at + 1]];
		expect(isAppendOf(carried.context.messages, next.context.messages)).toBe(true);
		expect(agent.atRequest[at + 1]?.rewrites.pureAppends).toBe((agent.atRequest[at]?.rewrites.pureAppends ?? 0) + 1);
	});

	it("no hostile argument reached an object's prototype", () => {
		expect(({} as Record<string, unknown>).polluted).toBeUndefined();
	});
});

describe("pi-fold's own argument check, for callers that skip Pi's schema check", () => {
	const refused: [string, unknown, RegExp][] = [
		["arguments not an object", "status", /arguments must be an object with an "action", got the string "status"/],
		["arguments an array", ["status"], /arguments must be an object with an "action", got an array/],
		["arguments null", null, /got null/],
		["action missing", {}, /"action" is missing; use one of "status", "peek"/],
		["action a number", { action: 7 }, /"action" must be a string, got number 7/],
		["action unknown", { action: "commit" }, /unknown action "commit"; use one of/],
		["id a number", { action: "peek", id: 5 }, /"id" must be a fold id string, got number 5/],
		["id an array", { action: "peek", id: ["f0123456789"] }, /"id" must be a fold id string, got an array/],
		["ids a string", { action: "pin", ids: "e1" }, /"ids" must be a list of ids, got the string "e1"/],
		["ids holding a number", { action: "pin", ids: ["e1", 2] }, /"ids"\[1\] is number 2, not an id/],
		["text a number", { action: "brief", id: "f0123456789", text: 42 }, /"text" must be a string, got number 42/],
		["offset a string", { action: "peek", id: "f0123456789", offset: "5" }, /"offset" must be a whole number >= 0/],
		[
			"offset negative",
			{ action: "peek", id: "f0123456789", offset: -1 },
			/"offset" must be a whole number >= 0, got number -1/,
		],
		["offset fractional", { action: "peek", id: "f0123456789", offset: 1.5 }, /"offset" must be a whole number/],
		[
			"bytes a boolean",
			{ action: "peek", id: "f0123456789", bytes: true },
			/"bytes" must be a whole number from 1 to 200000/,
		],
		[
			"bytes infinite",
			{ action: "peek", id: "f0123456789", bytes: Number.POSITIVE_INFINITY },
			/"bytes" must be a whole number/,
		],
		["bytes NaN", { action: "peek", id: "f0123456789", bytes: Number.NaN }, /"bytes" must be a whole number/],
		[
			"ephemeral a string",
			{ action: "peek", id: "f0123456789", ephemeral: "true" },
			/"ephemeral" must be true or false/,
		],
		["detail other", { action: "status", detail: 1 }, /"detail" may only be "tree", got number 1/],
		["from a number", { action: "reboundary", from: 1, to: "e2" }, /"from" must be an entry id string, got number 1/],
		["to empty", { action: "reboundary", from: "e1", to: "" }, /"to" must be an entry id string/],
	];

	it.each(refused)("%s", (_name, raw, reason) => {
		const r = parseFoldArgs(raw);
		expect(r.ok).toBe(false);
		if (!r.ok) expect(r.reason).toMatch(reason);
	});

	it("a failure inside pi-fold comes back as a refusal, never thrown into Pi's loop", async () => {
		const failing = {
			core: () => {
				throw new Error("core exploded");
			},
			packageVersion: () => "0.0.0",
			piVersion: () => undefined,
			actions: () => {
				throw new Error("actions exploded");
			},
		};
		for (const args of [{ action: "status" }, { action: "peek", id: "f0123456789" }, { action: "pin", ids: ["e1"] }]) {
			const r = await runFoldAction(args, failing as never, { toolCallId: "x", ctx: {} as never });
			expect(r.isError).toBe(true);
			expect(textOf({ content: r.content })).toMatch(
				/pi_fold_context refused: action "\w+" failed inside pi-fold: \w+ exploded/,
			);
		}
	});
});
