// The agent's verbs on real sessions: a scripted faux agent works through Pi's dist/ with
// real read/bash/ls calls and, in the same prompt, calls pi_fold_context, its arguments computed
// from what the runtime and earlier calls show at that moment, as a model would. The
// captured requests are the oracle for what each call did to the window; the probe records the
// runtime around every call; the session file and the store show the result is durable and exact.
//
// This file: the "standing folds" session — a small budget, so commits and consolidations happen.
// Status tree; expand a consolidation, then one of its children (two levels, originals
// byte-identical to the request before they folded), refused past the budget, refold both; peek
// the consolidation in slices and a child of it; pin raw entries and keep a peek raw, then let
// commits happen. The "pending marks" session and peek's text view are in tool-marks.test.ts.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeTempDirs, textOf } from "../harness/pi-harness.ts";
import type { FoldView } from "../src/lattice/index.ts";
import type { FoldToolDetails } from "../src/tool/result.ts";
import { PEEK_MAX_BYTES } from "../src/vocabulary.ts";
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
	folded,
	healthy,
	once,
	peekMarksTakenOutOfTurn,
	reopenMatches,
	requestAfter,
	requestOf,
	requestsFrom,
	resultIn,
	resultOf,
	resultText,
	rtOf,
	run,
	runFrom,
	showsText,
	sourcesOf,
	type ToolArgs,
	toolStep,
	work,
} from "./helpers/fold-agent.ts";
import { canonical, isAppendOf, providerProblems } from "./helpers/requests.ts";

/** Peek the consolidation in this many slices (the last one takes the rest). */
const SLICES = 4;

describe("pi_fold_context on standing folds (small budget: commits, consolidations)", () => {
	const BUDGET = 14_000;
	let agent: FoldAgent;
	/** The consolidation, two of its children (the first and the largest other), and a third. */
	let parent: FoldView;
	let first: FoldView;
	let large: FoldView;
	let other: FoldView;
	/** Its whole text view, read through the runtime's own operation (no tool call) before slicing. */
	let fullText = "";

	beforeAll(async () => {
		agent = await foldAgent({ budget: BUDGET });
		// Chosen when the agent turns to its folds, after the work that made them.
		const picks = once(() => {
			const lattice = rtOf(agent).lattice;
			if (!lattice) throw new Error("no lattice");
			// Consolidation merges roots of equal height, so most parents hold two children, and a
			// parent's children may be consolidations themselves: the one taken holds three or more
			// tool batches (their originals are what an expand shows).
			const batchesOf = (f: FoldView) =>
				f.children.flatMap((c) => {
					const child = c.type === "fold" ? (lattice.get(c.id) as FoldView) : undefined;
					return child?.kind === "tool-batch" ? [child] : [];
				});
			const consolidation = lattice
				.visibleRoots()
				.map((id) => lattice.get(id) as FoldView)
				.find((f) => f.kind === "consolidation" && batchesOf(f).length >= 3);
			if (!consolidation) throw new Error("the work made no consolidation of 3 or more tool batches");
			const kids = batchesOf(consolidation);
			const bySize = kids.slice(1).sort((a, b) => sourcesSize(b) - sourcesSize(a));
			[parent, first, large, other] = [consolidation, kids[0], bySize[0], bySize[1]];
			return { parent, first, large, other };
		});
		const whole = once(() => {
			const r = agent.actions.peek(picks().parent.id, { bytes: PEEK_MAX_BYTES });
			if (!r.ok) throw new Error(r.reason);
			fullText = r.slice.text;
			return r.slice.total;
		});
		const nextOffset = (prev: string) =>
			Number(/^next: \{"action":"peek".*"offset":(\d+)/m.exec(resultText(agent, prev))?.[1]);
		const slice = (k: number) => (): ToolArgs => {
			const size = Math.ceil(whole() / SLICES);
			if (k === 0) return { action: "peek", id: picks().parent.id, bytes: size };
			const offset = nextOffset(`slice-${k - 1}`);
			const bytes = k === SLICES - 1 ? whole() - offset : size;
			return { action: "peek", id: picks().parent.id, offset, bytes };
		};
		const pinned = () =>
			(rtOf(agent).lattice?.entries ?? [])
				.filter((e) => [...(e.toolCallIds ?? []), e.toolCallId].includes("pin-ls"))
				.map((e) => e.id);
		await run(agent, [
			...work(agent, "w-", 14, 3),
			call(agent, "status", { action: "status", detail: "tree" }),
			call(agent, "expand-parent", () => ({ action: "expand", id: picks().parent.id })),
			// Two expands in one message: the second must count the first, still staged.
			calls(
				agent,
				["expand-first", () => ({ action: "expand", id: picks().first.id })],
				["expand-large", () => ({ action: "expand", id: picks().large.id })],
			),
			// Alone, after the first child's expand was applied at the last boundary.
			call(agent, "expand-large-again", () => ({ action: "expand", id: picks().large.id })),
			call(agent, "peek-expanded", () => ({ action: "peek", id: picks().first.id, bytes: 2000 })),
			call(agent, "refold-first", () => ({ action: "refold", id: picks().first.id })),
			call(agent, "refold-parent", () => ({ action: "refold", id: picks().parent.id })),
			...Array.from({ length: SLICES }, (_, k) => call(agent, `slice-${k}`, slice(k))),
			call(agent, "peek-child", () => ({ action: "peek", id: picks().other.id, bytes: 3000 })),
			toolStep(agent, "Listing the package root.", ["pin-ls", "ls", { path: "." }]),
			call(agent, "pin", () => ({ action: "pin", ids: pinned() })),
			call(agent, "peek-keep", () => ({
				action: "peek",
				id: picks().other.id,
				offset: 100,
				bytes: 1500,
				ephemeral: false,
			})),
			...work(agent, "late-", 6, 11),
			finish(agent, "Surveyed and inspected."),
		]);
	}, 600_000);

	function sourcesSize(f: FoldView): number {
		return sourcesOf(agent, f).reduce((s, e) => s + JSON.stringify(e).length, 0);
	}

	afterAll(() => {
		agent?.h.dispose();
		removeTempDirs();
	});

	it("every call was answered, every answer ends with the arithmetic, and the session stayed healthy", () => {
		expect(agent.foldCalls.length).toBe(15);
		for (const id of agent.foldCalls) {
			const r = resultOf(agent, id);
			expect(textOf(r), id).toMatch(ARITHMETIC);
			if (!id.startsWith("expand-large")) expect(r.isError, `${id}: ${textOf(r)}`).toBe(false);
		}
		healthy(agent);
	});

	it("status tree lists every fold in transcript order with depth and parent, and the window arithmetic", () => {
		const r = resultOf(agent, "status");
		const details = detailsOf<Extract<FoldToolDetails, { action: "status" }>>(agent, "status");
		const tree = details.tree ?? [];
		const atCall = agent.atRequest[agent.issuedAt.get("status") as number]?.snapshot;
		expect(tree.map((f) => f.id)).toEqual(atCall?.folds.map((f) => f.id));
		for (const f of tree) {
			const live = atCall?.folds.find((x) => x.id === f.id);
			expect([f.depth, f.parent, f.state], f.id).toEqual([live?.depth, live?.parent, live?.state]);
			expect(textOf(r)).toContain(f.id);
		}
		expect(tree.some((f) => f.depth > 0)).toBe(true);
		const text = textOf(r);
		// Pending marks with their origin, what each would free and what a commit would re-send.
		const marks = details.overview?.marks ?? [];
		expect(marks.length).toBeGreaterThan(0);
		for (const m of marks) {
			const mark = details.runtime?.pendingMarks.find((p) => p.id === m.id);
			expect(mark).toBeDefined();
			expect(text).toContain(
				`mark ${m.id}: ${mark?.kind} ${mark?.from}..${mark?.to}, brief ${mark?.provenance}; frees ~${m.freed} tokens`,
			);
			expect(text).toContain(`a commit re-sends ~${m.prefixRewritten} prefix tokens`);
			expect(m.freed).toBeGreaterThan(0);
		}
		for (const root of details.runtime?.roots ?? []) expect(text).toContain(`${root.id} ${root.kind}: `);
		expect(text).toContain(`budget: ${BUDGET.toLocaleString("en-US")} tokens (providerInputBudget`);
		expect(text).toMatch(/thresholds: commit at 80\.0%, fold down to 40\.0%/);
		expect(text).toMatch(/rewrites: \d+ requests = .* \+ 0 unattributed/);
	});

	it("expand shows the consolidation's children; a child expanded next shows its originals byte for byte", () => {
		const afterParent = requestAfter(agent, "expand-parent");
		expect(isAppendOf(requestOf(agent, "expand-parent"), afterParent)).toBe(false);
		expect(showsText(requestOf(agent, "expand-parent"), parent.brief)).toBe(true);
		expect(showsText(afterParent, parent.brief)).toBe(false);
		for (const c of parent.children) {
			if (c.type === "fold") expect(showsText(afterParent, folded(agent, c.id).brief), c.id).toBe(true);
		}
		// The child's messages, as the request before they ever folded showed them.
		const callId = firstCallOf(agent, first);
		const n = first.end - first.start;
		const before = agent.h.captured.map((c) => runFrom(c.context.messages, callId, n)).find((run) => run);
		expect(before).toBeDefined();
		expect(runFrom(afterParent, callId, n)).toBeUndefined();
		expect(runFrom(requestAfter(agent, "expand-first"), callId, n)).toEqual(before);
		expect(showsText(requestAfter(agent, "expand-first"), first.brief)).toBe(false);
	});

	it("an expand past the budget is refused with the arithmetic, also when another expand is still staged", () => {
		for (const id of ["expand-large", "expand-large-again"]) {
			const r = resultOf(agent, id);
			expect(r.isError, id).toBe(true);
			const m =
				/would add ~(\d+) tokens: the next request would be ~(\d+) > the budget of (\d+) tokens \(now ~(\d+); budget: providerInputBudget[^)]*\)/.exec(
					textOf(r),
				);
			expect(m, textOf(r)).not.toBeNull();
			const [add, next, budget, now] = (m ?? []).slice(1).map(Number);
			expect(budget).toBe(BUDGET);
			expect(next).toBe(now + add);
			expect(next).toBeGreaterThan(budget);
			expect(agent.afterCall.get(id)?.staged.some((s) => s.id === large.id)).toBe(false);
		}
		// The staged expand of the first child counts: the refusal's "now" is where that expand lands.
		const firstDone = detailsOf<{ result: { next: number } }>(agent, "expand-first").result.next;
		const now = Number(/\(now ~(\d+);/.exec(resultText(agent, "expand-large"))?.[1]);
		expect(now).toBe(firstDone);
		// Every accepted expand kept the next request within the budget, measured once it was sent.
		for (const id of ["expand-parent", "expand-first"]) {
			const measured = agent.atRequest[(agent.issuedAt.get(id) as number) + 2]?.occupancy;
			expect(measured, id).not.toBeNull();
			expect(measured, id).toBeLessThanOrEqual(BUDGET);
		}
		expect(rtOf(agent).status().fence.stopped).toBe(0);
	});

	it("refold collapses the child and then the consolidation again, byte for byte as before", () => {
		const afterFirst = requestAfter(agent, "refold-first");
		expect(showsText(afterFirst, first.brief)).toBe(true);
		expect(runFrom(afterFirst, firstCallOf(agent, first), first.end - first.start)).toBeUndefined();
		const afterParent = requestAfter(agent, "refold-parent");
		const beforeExpand = requestOf(agent, "expand-parent");
		expect(showsText(afterParent, parent.brief)).toBe(true);
		// Everything up to the consolidation's brief is as it was before the expand.
		const at = beforeExpand.findIndex((m) => showsText([m], parent.brief));
		expect(at).toBeGreaterThan(0);
		expect(afterParent.slice(0, at + 1).map(canonical)).toEqual(beforeExpand.slice(0, at + 1).map(canonical));
		for (const id of ["expand-parent", "expand-first", "refold-first", "refold-parent"]) {
			expect(classified(agent, (agent.issuedAt.get(id) as number) + 1), id).toBe("expand");
		}
	});

	it("every window an expand or refold made is valid for real providers (calls and results paired)", async () => {
		for (const id of ["expand-parent", "expand-first", "refold-first", "refold-parent"]) {
			const next = agent.h.captured[(agent.issuedAt.get(id) as number) + 1];
			expect(await providerProblems(next.context), id).toEqual([]);
		}
	});

	it("peek slices of the consolidation concatenate to its whole text view, each stating what it left out", () => {
		let joined = "";
		let covered = 0;
		for (let k = 0; k < SLICES; k++) {
			const r = resultOf(agent, `slice-${k}`);
			type Slice = { start: number; end: number; total: number; verifiedBy: string };
			const d = detailsOf<{ result: Slice }>(agent, `slice-${k}`).result;
			expect(d.start).toBe(covered);
			if (k < SLICES - 1) expect(d.end - d.start).toBeLessThanOrEqual(Math.ceil(d.total / SLICES));
			expect(d.verifiedBy).toBe("store");
			const text = textOf(r);
			expect(text).toContain(`its text view is ${d.total.toLocaleString("en-US")} bytes`);
			expect(text).toContain(`[end of peek ${parent.id}, bytes ${d.start}-${d.end} of ${d.total}]`);
			if (d.start > 0) expect(text).toContain(`; bytes 0-${d.start} before`);
			// From the start, a consolidation's peek opens with its children and their offsets.
			if (d.start === 0) for (const c of kidsOf(parent)) expect(text).toMatch(new RegExp(`^@\\d+ \\+\\d+ ${c} `, "m"));
			else expect(text).not.toContain("Contents (");
			if (d.start === 0) expectStagesOnContentsLines(text, fullText);
			const last = text.split("\n").at(-1) ?? "";
			if (d.end < d.total) {
				expect(text).toContain(`; ${d.total - d.end} bytes after]`);
				expect(last).toMatch(
					new RegExp(`^next: \\{"action":"peek","id":"${parent.id}","offset":${d.end},"bytes":\\d+\\}$`),
				);
			} else expect(last).toMatch(/^-- window: /);
			joined += sliceBody(text, parent.id);
			covered = d.end;
		}
		expect(covered).toBe(new TextEncoder().encode(fullText).length);
		expect(joined).toBe(fullText);
	});

	it("the text view is the fold's exact entries in order, without thinking blocks or provider metadata", () => {
		const sources = sourcesOf(agent, parent);
		let at = -1;
		for (const s of sources) {
			const header = fullText.indexOf(`## entry ${s.id} · `);
			expect(header, s.id).toBeGreaterThan(at);
			at = header;
			if (s.type === "message" && s.message.role === "toolResult") {
				for (const b of s.message.content) if (b.type === "text") expect(fullText).toContain(b.text);
			}
		}
		for (const c of parent.children) if (c.type === "fold") expect(fullText).toContain(`## nested fold ${c.id}`);
		expect(fullText).not.toMatch(/"usage"|"signature"|"thinking"/);
	});

	it("a child of a committed consolidation is peekable by its id, alone, and so is an expanded fold", () => {
		const text = resultText(agent, "peek-child");
		expect(text).toContain(`[pi-fold peek ${other.id}] tool-batch, committed`);
		expect(text).toContain("from the fold store");
		expect(text).toContain(`## entry ${sourcesOf(agent, other)[0].id}`);
		expect(text).not.toContain(`## entry ${sourcesOf(agent, first)[0].id}`);
		const expanded = resultText(agent, "peek-expanded");
		expect(expanded).toContain(`[pi-fold peek ${first.id}] tool-batch, expanded`);
	});

	it("a peek never edits the window: the request after it extends the one before, unless a commit fired", () => {
		const peeks = agent.foldCalls.filter((id) => /^(slice-|peek-)/.test(id));
		let appends = 0;
		for (const id of peeks) {
			const at = agent.issuedAt.get(id) as number;
			const kind = classified(agent, at + 1);
			if (kind === "append") {
				expect(isAppendOf(requestOf(agent, id), requestAfter(agent, id)), id).toBe(true);
				appends++;
			} else {
				expect(kind, id).toBe("commit");
				expect(agent.atRequest[at + 1]?.commits, id).toBeGreaterThan(agent.atRequest[at]?.commits ?? 0);
			}
		}
		expect(appends).toBeGreaterThan(0);
	});

	it("an ephemeral peek's result is marked for the next commit and folds with it, however new it is", () => {
		const rt = rtOf(agent);
		for (let k = 0; k < SLICES; k++) {
			const id = `slice-${k}`;
			const at = agent.issuedAt.get(id) as number;
			// The boundary after the model saw the result marks the batch (kind "peek").
			const mark = agent.atRequest
				.slice(at + 2)
				.flatMap((s) => s?.snapshot?.folds ?? [])
				.find((f) => f.kind === "peek" && covers(f, id));
			expect(mark, id).toBeDefined();
			// And it is folded (committed, maybe inside a consolidation) by the end.
			const entry = rt.lattice?.entries.find((e) => e.toolCallIds?.includes(id));
			expect(entry && rt.lattice?.foldOf(entry.id), id).toBeTruthy();
			expect(resultIn(agent.h.captured.at(-1)?.context.messages ?? [], id), id).toBeUndefined();
		}
		expect(peekMarksTakenOutOfTurn(agent).withPeek).toBeGreaterThan(0);
	});

	function covers(f: FoldView, callId: string): boolean {
		const entries = rtOf(agent).lattice?.entries ?? [];
		return entries.slice(f.start, f.end).some((e) => e.toolCallIds?.includes(callId));
	}

	it("pinned entries and a peek kept with ephemeral:false stay raw in every request after, across commits", () => {
		const pinAt = agent.issuedAt.get("pin") as number;
		const commitsBefore = agent.atRequest[pinAt]?.commits ?? 0;
		expect(rtOf(agent).commits.length).toBeGreaterThan(commitsBefore);
		const pinned = resultOf(agent, "pin");
		expect(pinned.isError, textOf(pinned)).toBe(false);
		const lsRun = runFrom(requestAfter(agent, "pin-ls"), "pin-ls", 2);
		expect(lsRun).toBeDefined();
		const keep = resultIn(requestAfter(agent, "peek-keep"), "peek-keep");
		expect(keep).toBeDefined();
		for (const req of requestsFrom(agent, pinAt)) {
			expect(runFrom(req, "pin-ls", 2)).toEqual(lsRun);
		}
		for (const req of requestsFrom(agent, (agent.issuedAt.get("peek-keep") as number) + 1)) {
			expect(resultIn(req, "peek-keep")).toBe(keep);
		}
		const pins = rtOf(agent).lattice?.pins() ?? [];
		const keepEntries = (rtOf(agent).lattice?.entries ?? []).filter(
			(e) => e.toolCallIds?.includes("peek-keep") || e.toolCallId === "peek-keep",
		);
		expect(keepEntries.length).toBe(2);
		for (const e of keepEntries) expect(pins).toContain(e.id);
	});

	it("expand and refold are attributed rewrites; a reopened session rebuilds the same lattice", () => {
		const rw = rtOf(agent).status().rewrites;
		expect(rw.attributed.expand).toBe(4);
		expect(rw.unattributed).toBe(0);
		reopenMatches(agent);
	});
});

/** The slice text of a peek answer: after its `[bytes …]` line, before its end line. */
function sliceBody(text: string, id: string): string {
	const range = /\n\n\[bytes \d+-\d+ of \d+[^\]\n]*\]\n/.exec(text);
	if (!range) throw new Error("no slice in the peek answer");
	const start = range.index + range[0].length;
	const end = text.lastIndexOf(`\n\n[end of peek ${id}, `);
	return text.slice(start, end);
}

/**
 * Each line of a peek's contents names, word for word, the stages whose notes lie in the bytes of
 * the fold's text view it points at ("Stage k:" opens the note of each stage of the work), so the agent can go to one.
 */
function expectStagesOnContentsLines(peek: string, textView: string): void {
	const view = new TextEncoder().encode(textView);
	const lines = [...peek.matchAll(/^@(\d+) \+(\d+) (.*)$/gm)];
	expect(lines.length).toBeGreaterThan(1);
	let stages = 0;
	for (const [, offset, bytes, line] of lines) {
		const part = new TextDecoder().decode(view.subarray(Number(offset), Number(offset) + Number(bytes)));
		for (const [, k] of part.matchAll(/^Stage (\d+):/gm)) {
			expect(line, `stage ${k}`).toMatch(new RegExp(`\\bStage ${k}\\b`));
			stages++;
		}
	}
	expect(stages).toBeGreaterThan(2);
}

/** A fold's direct child fold ids. */
function kidsOf(f: FoldView): string[] {
	return f.children.flatMap((c) => (c.type === "fold" ? [c.id] : []));
}
