// The `search` action on a real session: a scripted faux agent works through Pi's dist/ with real
// read/bash/ls calls (values planted in the middle of bash output, and a long run of `a`), folds
// commit and consolidate under a small budget, and the agent searches through pi_fold_context as a
// model would. Checked: every planted value is found in the innermost fold holding it, with its
// ancestors and a byte offset that peek lands on exactly; paging by the copyable `next:` line;
// bounded answers to a catastrophic regex, a unicode query, a page past the end; the search result
// folds at the next commit like an ephemeral peek and the window is never rewritten by it; the
// same results after the session is reopened; a corrupted store object named like peek names it,
// the other folds still searched.
import { cpSync } from "node:fs";
import { join, relative } from "node:path";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { plantValues } from "../bench/lib/recall-agent.ts";
import { nodeCore } from "../bindings/node.ts";
import { removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { FOLD_SEARCH_USAGE, PERSON_MAX_HITS } from "../src/commands/fold-search.ts";
import type { FoldId } from "../src/fold-types.ts";
import { parseOptions } from "../src/host/options.ts";
import { FoldActions } from "../src/operations/actions.ts";
import { FoldRuntime } from "../src/runtime/runtime.ts";
import { FOLD_TEXTS_MAX_BYTES, FoldTexts } from "../src/search/fold-texts.ts";
import { checkQuery, type SearchAnswer, searchFolds } from "../src/search/search.ts";
import { FoldStore } from "../src/store/index.ts";
import { TREE_PAGE } from "../src/tool/status.ts";
import { RECORD_TYPE, SEARCH_MAX_LIMIT } from "../src/vocabulary.ts";
import { editTimestamp } from "./faults/fault-session.ts";
import {
	call,
	type FoldAgent,
	finish,
	foldAgent,
	healthy,
	requestOf,
	resultText,
	rtOf,
	run,
	toolStep,
	work,
} from "./helpers/fold-agent.ts";
import { recordingUi } from "./helpers/recording-ui.ts";
import { isAppendOf } from "./helpers/requests.ts";
import { flipInPack } from "./helpers/store-audit.ts";

const STAGES = 14;
const values = plantValues(STAGES, 4, 21);
const plantAt = new Map(values.map((v) => [v.stage, v.value]));
const NEXT = /^next: (\{.*\})$/m;

describe("search on a real session", () => {
	let agent: FoldAgent;

	beforeAll(async () => {
		agent = await foldAgent({ budget: 14_000 });
		await run(agent, [
			...work(agent, "w-", STAGES, 4, (k) => plantAt.get(k)),
			toolStep(agent, "Checking a generated file.", [
				"run-a",
				"bash",
				{ command: "head -c 40000 /dev/zero | tr '\\0' a; echo '!'" },
			]),
			...work(agent, "x-", 6, 9),
			call(agent, "s-value", { action: "search", query: values[0].value }),
			call(agent, "s-page1", { action: "search", query: "stage", limit: 3 }),
			call(agent, "s-page2", () => {
				const next = NEXT.exec(resultText(agent, "s-page1"));
				if (!next) throw new Error("the first page has no next line");
				return JSON.parse(next[1]);
			}),
			call(agent, "s-regex", { action: "search", query: "check value: chk-[0-9a-f]{16}", regex: true }),
			call(agent, "s-catastrophic", { action: "search", query: "(a+)+$", regex: true }),
			call(agent, "s-unicode", { action: "search", query: "日本語 ✓ 🎉 Ǆ" }),
			call(agent, "s-past", { action: "search", query: "stage", offset: 100_000 }),
			call(agent, "st-compact", { action: "status" }),
			call(agent, "st-tree", { action: "status", detail: "tree" }),
			call(agent, "st-tree-2", { action: "status", detail: "tree", offset: 4 }),
			...work(agent, "y-", 4, 13),
			finish(agent, "Done."),
		]);
	}, 600_000);

	afterAll(() => {
		agent?.h.dispose();
		removeTempDirs();
	});

	const actions = () => agent.actions;
	const lattice = () => {
		const l = rtOf(agent).lattice;
		if (!l) throw new Error("no lattice");
		return l;
	};
	/** The entry holding stage k's planted value (the result of its plant call). */
	const plantedEntry = (stage: number): string => {
		const view = rtOf(agent).view;
		const e = view?.context.entries.find((x) => x.toolCallId === `w-s${stage}p`);
		if (!e) throw new Error(`no plant result for stage ${stage}`);
		return e.id;
	};
	const ancestorsOf = (id: FoldId): FoldId[] => {
		const out: FoldId[] = [];
		for (let f = lattice().get(id)?.parent ?? null; f; f = lattice().get(f)?.parent ?? null) out.push(f);
		return out;
	};

	it("the session folded and consolidated, and stayed healthy", () => {
		healthy(agent);
		expect(rtOf(agent).commits.length).toBeGreaterThan(1);
		expect(
			lattice()
				.folds()
				.some((f) => f.kind === "consolidation"),
		).toBe(true);
	});

	it("every planted value: found in the innermost fold holding it, with its ancestors; peek lands on it", () => {
		let nested = 0;
		for (const v of values) {
			const r = actions().search({ query: v.value });
			if (!r.ok) throw new Error(r.reason);
			const entry = plantedEntry(v.stage);
			const hit = r.answer.hits.find((h) => h.entryId === entry);
			expect(hit, `stage ${v.stage}`).toBeDefined();
			if (!hit) continue;
			const innermost = lattice().foldOf(entry);
			expect(hit.fold).toBe(innermost);
			expect(hit.ancestors).toEqual(ancestorsOf(hit.fold));
			if (hit.ancestors.length > 0) nested++;
			expect(hit.role).toBe("toolResult");
			expect(hit.tool).toBe("bash");
			expect(hit.line).toBe(`[stage ${v.stage}] check value: ${v.value}`);
			const peek = actions().peek(hit.fold, { offset: hit.offset, bytes: v.value.length });
			if (!peek.ok) throw new Error(peek.reason);
			expect(peek.slice.start).toBe(hit.offset);
			expect(peek.slice.text).toBe(v.value);
		}
		// Two commits in, the early stages sit inside consolidations.
		expect(nested).toBeGreaterThan(0);
	});

	it("the tool's answer: the value, its fold and offset; the result folds at the next commit, the window untouched", () => {
		const text = resultText(agent, "s-value");
		expect(text).toMatch(
			/^\[pi-fold search\] "chk-[0-9a-f]{16}" \(literal, case-insensitive\): 1 matching line in 1 fold/,
		);
		expect(text).toContain(`> [stage ${values[0].stage}] check value: ${values[0].value}`);
		expect(text).toMatch(/· offset \d+/);
		expect(text).toContain("This search result is marked to fold at the next commit.");
		expect(text).toMatch(/-- window: ~\d+ of \d+ tokens/);
		// The next request extends the one that carried the call, unless a commit fell on that boundary
		// (its receipt then ends the request): a search never rewrites the window by itself.
		for (const id of ["s-value", "s-page1", "s-regex", "s-catastrophic", "s-unicode", "s-past"]) {
			const at = agent.issuedAt.get(id) as number;
			const [before, after] = [agent.h.captured[at].context.messages, agent.h.captured[at + 1].context.messages];
			const last = after.at(-1);
			const committed = last?.role === "user" && JSON.stringify(last.content).includes("commit:");
			expect(isAppendOf(before, after) || committed, id).toBe(true);
		}
		// Marked like an ephemeral peek: its batch became a "peek" fold.
		const entry = rtOf(agent).view?.context.entries.find((e) => e.toolCallIds?.includes("s-value"));
		const holder = entry && lattice().foldOf(entry.id);
		expect(holder && lattice().get(holder)?.kind).toBe("peek");
		expect(requestOf(agent, "s-value").length).toBeGreaterThan(0);
	});

	it("pages: the copyable next line gives the next matches, and says how many are left", () => {
		const first = resultText(agent, "s-page1");
		const second = resultText(agent, "s-page2");
		expect(first).toMatch(/matches 1-3/);
		expect(second).toMatch(/matches 4-6/);
		const total = Number(/: (\d+) matching lines/.exec(first)?.[1]);
		expect(total).toBeGreaterThan(6);
		expect(first).toContain(`${total - 3} more matches: page on, or narrow the query.`);
		expect(NEXT.exec(first)?.[1]).toBe('{"action":"search","query":"stage","limit":3,"offset":3}');
	});

	it("a regex finds every planted value; a catastrophic one answers at once; unicode and a far page are bounded", () => {
		const regex = resultText(agent, "s-regex");
		for (const v of values) expect(regex).toContain(v.value);
		const cat = resultText(agent, "s-catastrophic");
		expect(cat).toMatch(/"\(a\+\)\+\$" \(regex, case-insensitive\): \d+ matching lines?/);
		expect(cat).not.toMatch(/stopped:/);
		expect(resultText(agent, "s-unicode")).toMatch(/0 matching lines in 0 folds[\s\S]*No line of any fold matches/);
		expect(resultText(agent, "s-past")).toMatch(/offset 100000 is past the last of the \d+ matches\./);
		expect(resultText(agent, "s-past")).not.toMatch(NEXT);
	});

	it("status is compact; the tree is paged, each line a fold's index line", () => {
		const compact = resultText(agent, "st-compact");
		expect(compact.length).toBeLessThan(6000);
		expect(compact).not.toContain("fold tree");
		const tree = resultText(agent, "st-tree");
		const folds = Number(/fold tree: folds 1-\d+ of (\d+),/.exec(tree)?.[1]);
		expect(folds).toBeGreaterThan(4);
		const lines = tree.split("\n").filter((l) => /^\s+f[0-9a-f]{10} \S+ \S+, \d+ entries/.test(l));
		expect(lines.length).toBe(Math.min(folds, TREE_PAGE));
		// A fold of tool calls is named by its calls and their principal arguments.
		expect(lines.filter((l) => /: (read|bash|ls)\b/.test(l)).length).toBeGreaterThan(lines.length / 2);
		if (folds > TREE_PAGE) {
			expect(tree.split("\n").at(-1)).toBe(`next: {"action":"status","detail":"tree","offset":${TREE_PAGE}}`);
		} else expect(tree).not.toMatch(NEXT);
		// The next page (asked a request later: a commit may have added folds meanwhile).
		const page2 = resultText(agent, "st-tree-2");
		const m = /fold tree: folds (\d+)-(\d+) of (\d+),/.exec(page2);
		const [from, to, total] = (m ?? []).slice(1).map(Number);
		expect([from, to]).toEqual([5, Math.min(total, 4 + TREE_PAGE)]);
		expect(total).toBeGreaterThanOrEqual(folds);
	});

	it("text views kept within a fixed size: with room for a fraction of the text, the same answers, never more kept", () => {
		const open = rtOf(agent).view;
		if (!open) throw new Error("no session open");
		const whole = new FoldTexts();
		const small = new FoldTexts(20_000);
		const queries = [
			{ query: "check value" },
			{ query: "stage", limit: 5, offset: 7 },
			{ query: "export (declare )?class", regex: true },
			{ query: values[3].value },
		];
		for (const q of [...queries, ...queries]) {
			const checked = checkQuery(q.query, q.regex ?? false);
			if (!checked.ok) throw new Error(checked.reason);
			const want = searchFolds(open, whole, rtOf(agent).core, q, checked);
			const got = searchFolds(open, small, rtOf(agent).core, q, checked);
			expect(comparable(got), q.query).toEqual(comparable(want));
			expect(got.total, q.query).toBeGreaterThan(0);
			expect(small.bytes).toBeLessThanOrEqual(small.maxBytes);
		}
		// The session's folds hold several times what the small one may keep.
		expect(whole.bytes).toBeGreaterThan(5 * small.maxBytes);
		expect(whole.maxBytes).toBe(FOLD_TEXTS_MAX_BYTES);
	});

	it("the same results after the session is reopened by a new runtime", () => {
		const file = agent.h.session.sessionManager.getSessionFile();
		if (!file) throw new Error("no session file");
		const fresh = reopened(file);
		for (const q of [{ query: "check value" }, { query: "export (declare )?class", regex: true }]) {
			const before = actions().search(q);
			const after = fresh.search(q);
			if (!before.ok || !after.ok) throw new Error("search refused");
			expect(comparable(after.answer)).toEqual(comparable(before.answer));
			expect(after.answer.total).toBeGreaterThan(0);
		}
	});

	it("standing folds under a pending mark (a mark that took committed roots): every match listed, peek lands on it", () => {
		const file = agent.h.session.sessionManager.getSessionFile();
		if (!file) throw new Error("no session file");
		// A copy of the session and its store: the mark is appended to it, the live one stays intact.
		const from = join(file, "..");
		const dir = tempDir("search-under-mark");
		cpSync(from, dir, { recursive: true });
		const sm = SessionManager.open(join(dir, relative(from, file)));
		const parsed = parseOptions({});
		if (!parsed.ok) throw new Error(parsed.problems.join("; "));
		const rt = new FoldRuntime(nodeCore(), parsed.settings);
		rt.open(sm as never);
		const l = rt.lattice;
		if (!l) throw new Error("not opened");
		// One mark over the first two visible roots, committed folds with planted values inside: its
		// record appended to the session, and the lattice takes it when the runtime reads it back.
		const roots = l.rootSpans().filter((r) => r.state === "committed");
		const [first, second] = [roots[0], roots[1]];
		const span = { from: l.entryAt(first.start).id, to: l.entryAt(second.end - 1).id, kind: "chapter" as const };
		const trial = l.clone().markMany([span]);
		if (!trial.ok) throw new Error(trial.reason);
		sm.appendCustomEntry(RECORD_TYPE, { v: 1, op: "mark", id: trial.ids[0], ...span });
		rt.sync(sm as never);
		const marked = rt.lattice;
		expect(marked?.get(trial.ids[0])?.state).toBe("pending");
		if (!marked) throw new Error("not open");
		const inside = values.filter((v) => {
			const p = marked.position(plantedEntry(v.stage)) ?? -1;
			return p >= first.start && p < second.end;
		});
		expect(inside.length).toBeGreaterThan(0);
		const acts = new FoldActions(rt, () => undefined);
		const r = acts.search({ query: "check value", limit: 30 });
		if (!r.ok) throw new Error(r.reason);
		expect(r.answer.hits).toHaveLength(r.answer.total);
		for (const v of inside) {
			const hit = r.answer.hits.find((h) => h.entryId === plantedEntry(v.stage));
			expect(hit, `stage ${v.stage}`).toBeDefined();
			if (!hit) continue;
			const line = `check value: ${v.value}`;
			const peek = acts.peek(hit.fold, { offset: hit.offset, bytes: line.length });
			if (!peek.ok) throw new Error(peek.reason);
			expect(peek.slice.text).toBe(line);
		}
	});

	/** A copy of the session and its store (the live one stays intact), and a folded hit of a planted value in it. */
	function corruptCopy(name: string) {
		const file = agent.h.session.sessionManager.getSessionFile();
		if (!file) throw new Error("no session file");
		const dir = tempDir(name);
		const from = join(file, "..");
		cpSync(from, dir, { recursive: true });
		const copy = join(dir, relative(from, file));
		const probe = reopened(copy);
		const r0 = probe.search({ query: values[0].value });
		if (!r0.ok) throw new Error(r0.reason);
		const victim = r0.answer.hits.find((h) => h.tool === "bash");
		if (!victim) throw new Error("no hit to corrupt");
		return { copy, probe, victim };
	}

	it("a corrupted store object: search heals it from the session's own bytes and finds every value", () => {
		const { copy, probe, victim } = corruptCopy("search-heal");
		const hash = leafHashOf(probe, victim.entryId);
		const sm = SessionManager.open(copy);
		flipInPack(FoldStore.forSession({ sessionFile: copy, sessionId: sm.getSessionId() }, nodeCore()), hash);
		const fresh = reopened(copy);
		const r = fresh.search({ query: "check value", limit: 30 });
		if (!r.ok) throw new Error(r.reason);
		expect(r.answer.problems).toEqual([]);
		const planted = new Set(values.map((v) => plantedEntry(v.stage)));
		const found = r.answer.hits.filter((h) => planted.has(h.entryId)).map((h) => h.entryId);
		expect(new Set(found).size).toBe(values.length);
		expect(fresh.peek(victim.fold, {}).ok).toBe(true);
	});

	it("a corrupted store object the session cannot heal: search names the fold and the hash as peek does; the other folds are searched", () => {
		const { copy, probe, victim } = corruptCopy("search-corrupt");
		const hash = leafHashOf(probe, victim.entryId);
		const sm = SessionManager.open(copy);
		flipInPack(FoldStore.forSession({ sessionFile: copy, sessionId: sm.getSessionId() }, nodeCore()), hash);
		// The session's own copy of the entry changed too: nothing to heal the object from.
		editTimestamp(copy, victim.entryId);
		const fresh = reopened(copy);
		const r = fresh.search({ query: "check value", limit: 30 });
		if (!r.ok) throw new Error(r.reason);
		expect(r.answer.problems.length).toBeGreaterThan(0);
		const reported = r.answer.problems.map((p) => p.reason).join("\n");
		expect(reported).toContain(hash);
		const innermost = victim.fold;
		expect(r.answer.problems.some((p) => p.fold === innermost)).toBe(true);
		const peek = fresh.peek(innermost, {});
		expect(peek.ok).toBe(false);
		if (!peek.ok) expect(reported).toContain(peek.reason);
		// Only the broken fold is lost: the other planted values are still found where they were printed.
		const planted = new Set(values.map((v) => plantedEntry(v.stage)));
		const found = r.answer.hits.filter((h) => planted.has(h.entryId)).map((h) => h.entryId);
		expect(found).not.toContain(victim.entryId);
		expect(new Set(found).size).toBe(values.length - 1);
	});
});

/** A new runtime over the session file, as a restarted Pi would build it. */
function reopened(file: string): FoldActions {
	const parsed = parseOptions({});
	if (!parsed.ok) throw new Error(parsed.problems.join("; "));
	const rt = new FoldRuntime(nodeCore(), parsed.settings);
	rt.open(SessionManager.open(file) as never);
	if (!rt.view) throw new Error(`not opened: ${rt.status().problems.join("; ")}`);
	return new FoldActions(rt, () => undefined);
}

function leafHashOf(actions: FoldActions, entryId: string): string {
	const e = actions.lattice()?.entries.find((x) => x.id === entryId);
	if (!e) throw new Error(`no entry ${entryId}`);
	return e.hash;
}

/** An answer without its timing. */
function comparable(a: SearchAnswer) {
	const { ms: _ms, ...rest } = a;
	return rest;
}

describe("/fold-search for people", () => {
	it("lists the matches, opens the one picked at its offset, refuses an empty query; nothing changes", async () => {
		const agent = await foldAgent({ budget: 14_000 });
		try {
			await run(agent, [
				...work(agent, "w-", 10, 4, (k) => (k === 2 ? "chk-0123456789abcdef" : undefined)),
				finish(agent, "Done."),
			]);
			const before = rtOf(agent).lattice?.snapshot();
			const requests = agent.h.captured.length;
			const rec = recordingUi({ choose: (_t, options) => options[0] });
			await agent.h.session.bindExtensions({ uiContext: rec.ui, mode: "tui" });
			await agent.h.session.prompt("/fold-search check value");
			expect(rec.selects).toHaveLength(1);
			expect(rec.selects[0].title).toBe('pi-fold search: 1 matching line for "check value" in 1 fold; open one');
			expect(rec.selects[0].options[0]).toMatch(
				/^1\. f[0-9a-f]{10} · toolResult bash · \[stage 2\] check value: chk-0123456789abcdef$/,
			);
			const opened = rec.notes[rec.notes.length - 1];
			expect(opened.type).toBe("info");
			expect(opened.message).toMatch(
				/^f[0-9a-f]{10}.*, entry \S+: bytes \d+-\d+ of \d+, the match at \d+, verified by SHA-256\n/,
			);
			expect(opened.message).toContain("[stage 2] check value: chk-0123456789abcdef");
			await agent.h.session.prompt("/fold-search /stage \\d+\\] check/");
			expect(rec.selects).toHaveLength(2);
			await agent.h.session.prompt("/fold-search   ");
			expect(rec.notes[rec.notes.length - 1]).toEqual({
				type: "error",
				message: `/fold-search needs something to look for (${FOLD_SEARCH_USAGE})`,
			});
			await agent.h.session.prompt("/fold-search /(a/");
			expect(rec.notes[rec.notes.length - 1].message).toMatch(
				/^\/fold-search refused: "query" is not a pattern search can run: a group is not closed/,
			);
			// Commands read only: no model call, no change to the folds.
			expect(agent.h.captured.length).toBe(requests);
			expect(rtOf(agent).lattice?.snapshot()).toEqual(before);
		} finally {
			agent.h.dispose();
		}
	}, 300_000);

	it("lists every match (past the agent's page), in words; an opened match starts at a line with the line before it", async () => {
		const agent = await foldAgent({ budget: 14_000 });
		try {
			await run(agent, [...work(agent, "w-", 10, 4), finish(agent, "Done.")]);
			const actions = agent.actions;
			const query = "export";
			const whole = actions.search({ query, limit: SEARCH_MAX_LIMIT });
			if (!whole.ok) throw new Error(whole.reason);
			const total = whole.answer.total;
			// More than one of the agent's pages, and no more than a person's list holds.
			expect(total).toBeGreaterThan(SEARCH_MAX_LIMIT);
			expect(total).toBeLessThanOrEqual(PERSON_MAX_HITS);
			// Esc: the list as text.
			const rec = recordingUi({ choose: () => undefined });
			await agent.h.session.bindExtensions({ uiContext: rec.ui, mode: "tui" });
			await agent.h.session.prompt(`/fold-search ${query}`);
			expect(rec.selects[0].title).toMatch(
				new RegExp(`^pi-fold search: ${total} matching lines for "${query}" in \\d+ folds; open one$`),
			);
			expect(rec.selects[0].options).toHaveLength(total);
			expect(rec.selects[0].options.at(-1)).toMatch(new RegExp(`^${total}\\. f[0-9a-f]{10} · `));
			const list = rec.notes.at(-1)?.message ?? "";
			expect(list.split("\n")).toEqual([rec.selects[0].title.replace(/; open one$/, ""), ...rec.selects[0].options]);
			for (const agentSyntax of ["next:", '{"action"', "[pi-fold search]"]) expect(list).not.toContain(agentSyntax);
			// Open each of the first matches: the text starts where a line starts, and the line before is there.
			for (let k = 0; k < 6; k++) {
				const pick = recordingUi({ choose: (_t, options) => options[k] });
				await agent.h.session.bindExtensions({ uiContext: pick.ui, mode: "tui" });
				await agent.h.session.prompt(`/fold-search ${query}`);
				const hit = whole.answer.hits[k];
				const opened = pick.notes.at(-1)?.message ?? "";
				const [head, blank, ...body] = opened.split("\n");
				expect(blank).toBe("");
				const start = Number(/: bytes (\d+)-\d+ of \d+, the match at (\d+)/.exec(head)?.[1]);
				expect(start).toBeLessThan(hit.offset);
				const before = actions.peek(hit.fold, { offset: start - 1, bytes: 1 });
				if (start > 0) expect(before.ok && before.slice.text).toBe("\n");
				// The matching line is the body's second line, unless it opens its entry (then the first).
				const at = hit.contextOffset === hit.lineOffset ? 0 : 1;
				expect(body[at].toLowerCase(), opened).toContain(query);
			}
		} finally {
			agent.h.dispose();
		}
	}, 300_000);
});
