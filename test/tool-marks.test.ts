// The agent's verbs on real sessions: a scripted faux agent works through Pi's dist/ with
// real read/bash/ls calls and, in the same prompt, calls pi_fold_context, its arguments computed
// from what the runtime and earlier calls show at that moment, as a model would. The
// captured requests are the oracle for what each call did to the window; the probe records the
// runtime around every call; the session file and the store show the result is durable and exact.
//
// This file: the "pending marks" session — a large budget, so marks stay pending. Status with marks;
// peek a pending mark (verified from the session); brief it twice; reboundary merge, split and back
// to raw; unmark; pin by entry ids and by a mark's id; then more work until a commit shows what
// they did. Also unit tests of peek's text view of an entry and its UTF-8 slicing. The
// "standing folds" session is in tool-actions.test.ts.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTempDirs, textOf } from "../harness/pi-harness.ts";
import type { FoldView } from "../src/lattice/index.ts";
import { entryText } from "../src/session/entry-text.ts";
import { sliceUtf8 } from "../src/session/fold-source.ts";
import type { FoldToolDetails } from "../src/tool/result.ts";
import {
	ARITHMETIC,
	call,
	calls,
	classified,
	detailsOf,
	type FoldAgent,
	finish,
	firstCallOf,
	foldAgent,
	healthy,
	once,
	peekMarksTakenOutOfTurn,
	reopenMatches,
	resultOf,
	resultText,
	rtOf,
	run,
	runFrom,
	showsText,
	sourcesOf,
	work,
} from "./helpers/fold-agent.ts";
import { isAppendOf } from "./helpers/requests.ts";

describe("pi_fold_context on pending marks (large budget: marks wait, then one commit)", () => {
	const BUDGET = 40_000;
	/** Land higher than the default, so the commit needs only the stalest marks and leaves newer ones pending. */
	const MIN_TARGET = 0.6;
	let agent: FoldAgent;
	/** The pending marks when the agent turns to them, stalest first; M[3..5] re-ordered by role below. */
	let M: FoldView[] = [];
	/** The first request of the action phase, and the requests before the work that follows it. */
	let firstAction = 0;
	let lastAction = 0;

	beforeAll(async () => {
		agent = await foldAgent({ budget: BUDGET, thresholds: { minTarget: MIN_TARGET, consolidateAfter: 10 } });
		const marks = once(() => {
			const pending = rtOf(agent).lattice?.pending() ?? [];
			if (pending.length < 6) throw new Error(`the work left ${pending.length} pending marks, not 6`);
			const size = (f: FoldView) => sourcesOf(agent, f).reduce((s, e) => s + JSON.stringify(e).length, 0);
			// M4 and M6 get pinned: the two smallest of the last three, so both fit under the pin cap.
			const [a, b, c] = pending.slice(3, 6).sort((x, y) => size(x) - size(y));
			M = [pending[0], pending[1], pending[2], a, c, b];
			return M;
		});
		const entryIds = (f: FoldView) => sourcesOf(agent, f).map((e) => e.id);
		await run(agent, [
			...work(agent, "w-", 8, 5),
			call(agent, "status", { action: "status" }),
			call(agent, "peek-pending", () => ({ action: "peek", id: marks()[0].id, bytes: 4000 })),
			call(agent, "status-marks", { action: "status" }),
			call(agent, "brief-1", () => ({ action: "brief", id: marks()[0].id, text: "Read the first modules." })),
			call(agent, "brief-2", () => ({
				action: "brief",
				id: marks()[0].id,
				text: "Surveyed the first modules: the extension loader and its types.",
			})),
			call(agent, "merge", () => ({ action: "reboundary", ids: [marks()[1].id, marks()[2].id] })),
			call(agent, "split", () => ({
				action: "reboundary",
				from: entryIds(marks()[1])[0],
				to: entryIds(marks()[1]).at(-1) ?? "",
			})),
			// In one message: at the next boundary the frontier would mark the raw span again.
			calls(
				agent,
				["raw", () => ({ action: "reboundary", ids: [marks()[3].id] })],
				["pin-entries", () => ({ action: "pin", ids: entryIds(marks()[3]) })],
			),
			call(agent, "unmark", () => ({ action: "unmark", id: marks()[4].id })),
			call(agent, "pin-mark", () => ({ action: "pin", ids: [marks()[5].id] })),
			call(agent, "unpin", () => ({ action: "unpin", ids: entryIds(marks()[3]) })),
			call(agent, "peek-late", () => ({ action: "peek", id: marks()[0].id, offset: 1000, bytes: 2000 })),
			...work(agent, "late-", 8, 11),
			finish(agent, "Surveyed, with the marks shaped."),
		]);
		firstAction = agent.issuedAt.get("status") as number;
		lastAction = (agent.issuedAt.get("peek-late") as number) + 1;
	}, 600_000);

	afterAll(() => {
		agent?.h.dispose();
		removeTempDirs();
	});

	const pendingAfter = (id: string) =>
		agent.afterCall.get(id)?.snapshot?.folds.filter((f) => f.state === "pending") ?? [];
	const spanOf = (f: { start: number; end: number }) => [f.start, f.end];

	it("every call was answered without refusal, ending with the arithmetic; the session stayed healthy", () => {
		expect(agent.foldCalls.length).toBe(13);
		for (const id of agent.foldCalls) {
			const r = resultOf(agent, id);
			expect(r.isError, `${id}: ${textOf(r)}`).toBe(false);
			expect(textOf(r), id).toMatch(ARITHMETIC);
		}
		expect(rtOf(agent).commits.length).toBeGreaterThan(0);
		healthy(agent);
	});

	it("marks, briefs, re-cuts, unmarks and pins never touch the window: every request extends the one before", () => {
		expect(agent.atRequest[firstAction]?.commits).toBe(0);
		for (let i = firstAction + 1; i <= lastAction; i++) {
			expect(classified(agent, i), `request ${i}`).toBe("append");
			const [a, b] = [agent.h.captured[i - 1], agent.h.captured[i]];
			expect(isAppendOf(a.context.messages, b.context.messages), `request ${i}`).toBe(true);
			expect(agent.atRequest[i]?.commits, `request ${i}`).toBe(0);
		}
	});

	it("status lists every pending mark with its origin, what it frees and what a commit re-sends", () => {
		const text = resultText(agent, "status-marks");
		const details = detailsOf<Extract<FoldToolDetails, { action: "status" }>>(agent, "status-marks");
		expect(details.overview?.marks.map((m) => m.id)).toEqual(
			M.map((f) => f.id).sort((a, b) => idStart(a) - idStart(b)),
		);
		for (const f of M) {
			const entries = sourcesOf(agent, f);
			expect(text).toContain(
				`mark ${f.id}: ${f.kind} ${entries[0].id}..${entries.at(-1)?.id}, brief deterministic; frees ~`,
			);
		}
		expect(text).toMatch(/standing marks: 6, would free ~\d+ tokens/);
	});

	function idStart(id: string): number {
		return M.find((f) => f.id === id)?.start ?? -1;
	}

	it("peek reads a pending mark from the session, every entry re-hashed, the exact lines of the session file", () => {
		const text = resultText(agent, "peek-pending");
		const d = detailsOf<{ result: { state: string; verifiedBy: string; total: number; end: number } }>(
			agent,
			"peek-pending",
		).result;
		expect(d).toMatchObject({ state: "pending", verifiedBy: "session" });
		const file = agent.h.session.sessionManager.getSessionFile() as string;
		const lines = new Map(
			readFileSync(file, "utf8")
				.split("\n")
				.filter((l) => l !== "")
				.map((l) => [JSON.parse(l).id as string, Buffer.byteLength(l)]),
		);
		const bytes = sourcesOf(agent, M[0]).reduce((s, e) => s + (lines.get(e.id) ?? Number.NaN), 0);
		expect(text).toMatch(
			new RegExp(
				`^\\[pi-fold peek ${M[0].id}\\] tool-batch, pending, ${M[0].end - M[0].start} entries; its text view is [\\d,]+ bytes \\(~[\\d,]+ tokens\\) in all, from ${bytes} source bytes verified by SHA-256 \\(from the session, not yet folded\\)`,
			),
		);
		// From the start: every entry of the mark listed with its offset into the text view.
		for (const e of sourcesOf(agent, M[0])) expect(text).toMatch(new RegExp(`^@\\d+ \\+\\d+ entry ${e.id} `, "m"));
		expect(text).toContain(`## entry ${sourcesOf(agent, M[0])[0].id}`);
		expect(d.end).toBeLessThan(d.total);
		// Cut short: the answer ends with the call that goes on.
		expect(text.split("\n").at(-1)).toBe(`next: {"action":"peek","id":"${M[0].id}","offset":${d.end},"bytes":4000}`);
	});

	it("brief writes the agent's sentence on the pending mark, again and again; the commit shows the last one verbatim", () => {
		const last = "Surveyed the first modules: the extension loader and its types.";
		expect(pendingAfter("brief-1").find((f) => f.id === M[0].id)).toMatchObject({
			brief: "Read the first modules.",
			provenance: "supplied",
		});
		expect(pendingAfter("brief-2").find((f) => f.id === M[0].id)).toMatchObject({
			brief: last,
			provenance: "supplied",
		});
		expect(rtOf(agent).lattice?.get(M[0].id)).toMatchObject({ state: "committed", brief: last });
		// The request right after the commit shows it in the mark's place.
		const committedAt = agent.atRequest.findIndex((st) => (st?.commits ?? 0) > 0);
		expect(committedAt).toBeGreaterThan(lastAction);
		expect(showsText(agent.h.captured[committedAt].context.messages, last)).toBe(true);
		expect(agent.h.captured.slice(0, committedAt).some((c) => showsText(c.context.messages, last))).toBe(false);
	});

	it("reboundary merges two marks into one, splits one by entry ids, and returns one to raw", () => {
		const merged = pendingAfter("merge");
		expect(merged.map((f) => f.id)).not.toContain(M[1].id);
		expect(merged.map((f) => f.id)).not.toContain(M[2].id);
		const one = merged.find((f) => f.start === M[1].start);
		expect(one && spanOf(one)).toEqual([M[1].start, M[2].end]);
		expect(detailsOf<{ result: { id: string } }>(agent, "merge").result.id).toBe(one?.id);
		// Split back by the first mark's entries: exactly its span, and the rest a mark of its own.
		const split = pendingAfter("split");
		expect(split.map((f) => f.id)).not.toContain(one?.id);
		expect(split.filter((f) => f.start >= M[1].start && f.end <= M[2].end).map(spanOf)).toEqual([
			spanOf(M[1]),
			spanOf(M[2]),
		]);
		const raw = pendingAfter("raw");
		expect(raw.map((f) => f.id)).not.toContain(M[3].id);
		expect(agent.afterCall.get("raw")?.snapshot?.folds.some((f) => f.start < M[3].end && f.end > M[3].start)).toBe(
			false,
		);
		expect(resultText(agent, "raw")).toContain(`Mark ${M[3].id} withdrawn: its span is raw again.`);
	});

	it("unmark withdraws a mark (and the runtime remembers its entries as withdrawn)", () => {
		expect(pendingAfter("unmark").map((f) => f.id)).not.toContain(M[4].id);
		const withdrawn = rtOf(agent).withdrawn;
		for (const e of sourcesOf(agent, M[4])) expect(withdrawn.has(e.id)).toBe(true);
		for (const e of sourcesOf(agent, M[3])) expect(withdrawn.has(e.id)).toBe(true);
	});

	it("pin holds raw entries, or a pending mark's span (withdrawing the mark), raw through the commit", () => {
		const pins = agent.afterCall.get("pin-mark")?.snapshot?.pins ?? [];
		for (const f of [M[3], M[5]]) for (const e of sourcesOf(agent, f)) expect(pins).toContain(e.id);
		expect(pendingAfter("pin-mark").map((f) => f.id)).not.toContain(M[5].id);
		expect(resultText(agent, "pin-mark")).toContain(`Pending mark ${M[5].id} withdrawn to keep its span raw.`);
		// Raw in every request while pinned: M[5] to the end (across the commit), M[3] until unpinned.
		const unpinned = agent.issuedAt.get("unpin") as number;
		for (const [f, until] of [
			[M[5], agent.h.captured.length],
			[M[3], unpinned + 1],
		] as const) {
			const callId = firstCallOf(agent, f);
			const n = f.end - f.start;
			const raw = runFrom(agent.h.captured[firstAction].context.messages, callId, n);
			expect(raw).toBeDefined();
			for (const c of agent.h.captured.slice(firstAction, until))
				expect(runFrom(c.context.messages, callId, n)).toEqual(raw);
		}
		expect(rtOf(agent).commits[0].turn).toBeGreaterThan(0);
	});

	it("unpin releases entries (they may fold again), and only them", () => {
		const left = agent.afterCall.get("unpin")?.snapshot?.pins ?? [];
		for (const e of sourcesOf(agent, M[3])) expect(left).not.toContain(e.id);
		for (const e of sourcesOf(agent, M[5])) expect(left).toContain(e.id);
		expect(resultText(agent, "unpin")).toContain(`Unpinned ${M[3].end - M[3].start} entries`);
		expect(rtOf(agent).lattice?.pins()).toEqual(expect.arrayContaining(sourcesOf(agent, M[5]).map((e) => e.id)));
	});

	it("a commit takes every pending peek mark, whatever its age", () => {
		// peekMarksTakenOutOfTurn asserts that no peek mark outlives a commit, for every commit.
		const { withPeek } = peekMarksTakenOutOfTurn(agent);
		expect(withPeek).toBeGreaterThan(0);
	});

	it("a reopened session rebuilds the same lattice", () => {
		reopenMatches(agent);
	});

	it("a span the agent unmarked is not marked again by the frontier, through later passes and a commit", () => {
		const rt = rtOf(agent);
		const unmarkedAt = agent.issuedAt.get("unmark") as number;
		// Later boundaries ran (the commit among them), so the frontier had its chances.
		expect(agent.h.captured.length).toBeGreaterThan(unmarkedAt + 2);
		expect(rt.commits.length).toBeGreaterThan(0);
		for (const e of sourcesOf(agent, M[4])) expect(rt.lattice?.foldOf(e.id)).toBeNull();
	});
});

describe("peek's text view of an entry", () => {
	it("keeps text and tool calls, and leaves out thinking blocks and provider metadata", () => {
		const entry = {
			type: "message",
			id: "a1",
			parentId: null,
			timestamp: "2026-01-01T00:00:00.000Z",
			message: {
				role: "assistant",
				content: [
					{ type: "thinking", thinking: "secret reasoning", thinkingSignature: "sig-123" },
					{ type: "text", text: "Reading the loader.", textSignature: "tsig-456" },
					{ type: "toolCall", id: "c1", name: "read", arguments: { path: "loader.js" } },
				],
				api: "anthropic-messages",
				provider: "anthropic",
				model: "m",
				usage: { input: 1, output: 2, cacheRead: 3, cacheWrite: 4, totalTokens: 10 },
				stopReason: "toolUse",
				responseId: "resp-789",
			},
		};
		const text = entryText(JSON.stringify(entry));
		expect(text).toBe(
			["## entry a1 · assistant", "Reading the loader.", '-> call read {"path":"loader.js"} [c1]'].join("\n"),
		);
	});
});

describe("peek slicing never cuts a character", () => {
	it("moves both ends back to UTF-8 character boundaries and covers the text without gaps", () => {
		const text = "héllo wörld — ✓ 🙂 end";
		const total = new TextEncoder().encode(text).length;
		for (const size of [1, 2, 3, 5]) {
			let joined = "";
			let at = 0;
			while (at < total) {
				const s = sliceUtf8(text, at, size);
				// A one-byte slice inside a 4-byte character cannot advance: it must say so by returning empty.
				if (s.end === s.start) {
					const wider = sliceUtf8(text, at, 4);
					joined += wider.text;
					at = wider.end;
					continue;
				}
				expect(s.start).toBe(at);
				joined += s.text;
				at = s.end;
			}
			expect(joined).toBe(text);
		}
	});
});
