// Bad input to pi_fold_context, table-driven, on a real session: for every action, missing,
// wrong-typed, out-of-range and hostile arguments, and actions on the wrong state (brief on a
// committed fold, expand of a raw entry or a pending mark, refold of a collapsed fold...). Each
// call must be refused with a specific reason, and change nothing: the lattice, the staged edits,
// the records and edits on the branch are as before the call, and the next request extends the
// one that carried it (the window is untouched). Some arguments never reach pi-fold: Pi checks
// them against the tool's schema first; those are in the table too, marked "pi", and pi-fold's
// own parser is checked for the same values directly (other callers skip Pi's check).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTempDirs, textOf } from "../harness/pi-harness.ts";
import type { FoldView } from "../src/lattice/index.ts";
import type { FoldRuntime } from "../src/runtime/runtime.ts";
import { runFoldAction } from "../src/tool/dispatch.ts";
import { parseFoldArgs } from "../src/tool/schema.ts";
import { CASES, type Case, type Targets } from "./helpers/bad-input-cases.ts";
import { call, type FoldAgent, finish, foldAgent, once, resultOf, run, toolStep, work } from "./helpers/fold-agent.ts";
import { isAppendOf } from "./helpers/requests.ts";

const ARITHMETIC = /\n-- window: ~\d+ of \d+ tokens \([\d.]+%\); .*\.$/;
const PI_SCHEMA = /^Validation failed for tool "pi_fold_context":/;

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
	}, 600_000);

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
		["query a number", { action: "search", query: 7 }, /"query" must be a string, got number 7/],
		["regex a string", { action: "search", query: "x", regex: "true" }, /"regex" must be true or false/],
		[
			"limit zero",
			{ action: "search", query: "x", limit: 0 },
			/"limit" must be a whole number from 1 to 30, got number 0/,
		],
		["limit fractional", { action: "search", query: "x", limit: 2.5 }, /"limit" must be a whole number from 1 to 30/],
		["search offset negative", { action: "search", query: "x", offset: -1 }, /"offset" must be a whole number >= 0/],
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
