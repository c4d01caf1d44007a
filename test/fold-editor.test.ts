// /fold-editor on a real session: after a workload that committed folds and left pending marks, the
// real pi-tui component (opened by the command through a recording uiContext, as the TUI would)
// is driven key by key with handleInput. Every gesture is checked against the runtime it went
// through: the lattice, the staged window edits and the session's records; a refused gesture must
// leave all three exactly as they were. The last test sends the staged expand to the model.
import { fauxAssistantMessage, fauxText, fauxToolCall, type Message } from "@earendil-works/pi-ai";
import { type ExtensionContext, SessionManager } from "@earendil-works/pi-coding-agent";
import { stripTerminalSequences, visibleWidth } from "@earendil-works/pi-tui";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { makeSession, removeTempDirs, type TestSession, textOf } from "../harness/pi-harness.ts";
import { WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "../harness/workload.ts";
import { type PiFold, registerPiFold } from "../src/index.ts";
import type { FoldRuntime } from "../src/runtime/runtime.ts";
import { rebuildLattice } from "../src/session/rebuild.ts";
import { intentFor, PREVIEW_STEPS, rawUnits } from "../src/ui/editor-model.ts";
import { FOLD_BAR_KEY, formatTokens } from "../src/ui/fold-bar.ts";
import type { FoldEditor } from "../src/ui/fold-editor.ts";
import { RECORD_TYPE } from "../src/vocabulary.ts";
import { type RecordingUi, recordingUi } from "./helpers/recording-ui.ts";
import { isAppendOf, pairingProblems } from "./helpers/requests.ts";

const core = nodeCore();
const BUDGET = 14_000;
const WIDTH = 120;
/** The pretend terminal's height: the overlay (90% of it) must hold every line drawn. */
const ROWS = 40;
const DOWN = "\x1b[B";
const UP = "\x1b[A";
const ENTER = "\r";
const ESC = "\x1b";

/** Escape codes out: rows are compared as text. */
const plain = (s: string) => stripTerminalSequences(s);

afterAll(removeTempDirs);

describe("/fold-editor on a real session", () => {
	let h: TestSession;
	let rt: FoldRuntime;
	let rec: RecordingUi<FoldEditor>;
	let editor: FoldEditor;
	let closed: Promise<void>;
	let pifold: PiFold;

	/** Everything a gesture may change: the lattice, the staged edits, the session's pi-fold records. */
	const state = () => ({
		lattice: rt.lattice?.snapshot(),
		staged: rt.staged.map((s) => ({ ...s })),
		records: h.session.sessionManager.getBranch().filter((e) => e.type === "custom" && e.customType === RECORD_TYPE)
			.length,
	});
	const records = () =>
		h.session.sessionManager
			.getBranch()
			.flatMap((e) => (e.type === "custom" && e.customType === RECORD_TYPE ? [e.data as { op: string }] : []));

	const press = (...keys: string[]) => {
		for (const k of keys) editor.handleInput(k);
	};
	/** Move the selection to the row with `key` with the arrow keys, as a person would. */
	const select = (key: string) => {
		const target = editor.rows.findIndex((r) => r.key === key);
		expect(target, `row ${key}`).toBeGreaterThanOrEqual(0);
		for (let guard = 0; editor.selected?.key !== key && guard < 500; guard++) {
			const at = editor.rows.findIndex((r) => r.key === editor.selected?.key);
			press(at < target ? DOWN : UP);
		}
		expect(editor.selected?.key).toBe(key);
	};

	beforeAll(async () => {
		let fold: PiFold | undefined;
		h = await makeSession({
			cwd: WORKLOAD_ROOT,
			persist: true,
			contextWindow: 1_000_000,
			extensions: [
				(pi) => {
					fold = registerPiFold(pi, { providerInputBudget: BUDGET, thresholds: { consolidateAfter: 3 } });
				},
			],
		});
		h.script(workloadSteps(14, { seed: 5 }));
		await h.session.prompt(WORKLOAD_PROMPT);
		const r = fold?.runtime.get();
		if (!fold || !r) throw new Error(`no runtime: ${fold?.runtime.reason()}`);
		pifold = fold;
		rt = r;
		rec = recordingUi<FoldEditor>({ terminalRows: ROWS });
		await h.session.bindExtensions({ uiContext: rec.ui, mode: "tui" });
		closed = h.session.prompt("/fold-editor");
		for (let i = 0; i < 100 && !rec.component; i++) await new Promise((res) => setTimeout(res, 10));
		if (!rec.component) throw new Error("the command did not open the editor");
		editor = rec.component;
	}, 600_000);
	afterAll(() => h?.dispose());

	it("the workload left folds and marks to edit", () => {
		expect(rt.commits.length).toBeGreaterThan(0);
		expect(rt.lattice?.visibleRoots().length).toBeGreaterThan(0);
		expect(rt.lattice?.pending().length).toBeGreaterThanOrEqual(2);
		expect(rec.customs).toBe(1);
	});

	it("maps the window in transcript order, with occupancy against the budget", () => {
		const lattice = rt.lattice;
		const context = rt.view?.context;
		if (!lattice || !context) throw new Error("no session open");
		const top = editor.rows.filter((r) => r.depth === 0);
		// The top-level rows tile the context: nothing left out, nothing twice.
		expect(top[0].start).toBe(0);
		expect(top.at(-1)?.end).toBe(context.entries.length);
		for (let i = 1; i < top.length; i++) expect(top[i].start).toBe(top[i - 1].end);
		for (const id of lattice.visibleRoots())
			expect(editor.rows.find((r) => r.key === `fold:${id}`)?.kind).toBe("committed");
		for (const f of lattice.pending()) expect(editor.rows.find((r) => r.key === `fold:${f.id}`)?.kind).toBe("pending");
		// A raw row never splits a tool call from its results.
		for (const r of editor.rows.filter((row) => row.kind === "raw")) {
			const calls = new Set(context.entries[r.start].toolCallIds ?? []);
			for (let p = r.start + 1; p < r.end; p++) expect(calls.has(context.entries[p].toolCallId ?? "")).toBe(true);
		}
		const lines = editor.render(WIDTH);
		for (const line of lines) expect(visibleWidth(line)).toBeLessThanOrEqual(WIDTH);
		const text = plain(lines.join("\n"));
		expect(text).toMatch(/window ~[\d.]+k? of 14k tokens \(\d+%\)/);
		// The whole screen is the map's: exactly the terminal's rows, every one painted across the width.
		expect(lines).toHaveLength(ROWS);
		for (const line of lines) expect(visibleWidth(line)).toBe(WIDTH);
		expect(text).toContain(`${lattice.pending().length} marks`);
	});

	it("Enter on a raw row deepens its preview and never changes the window", () => {
		const before = state();
		const user = editor.rows.find((r) => r.kind === "raw" && r.text.startsWith("Survey this package"));
		if (!user) throw new Error("no row for the user's prompt");
		select(user.key);
		press(ENTER);
		expect(editor.preview?.level).toBe(0);
		expect(editor.preview?.text).toContain(WORKLOAD_PROMPT);
		const pending = rt.lattice?.pending()[0];
		if (!pending) throw new Error("no pending mark");
		select(`fold:${pending.id}`);
		press(ENTER);
		const first = editor.preview?.text ?? "";
		expect(editor.preview?.title).toContain("verified by SHA-256 from the session");
		press(ENTER);
		expect(editor.preview?.level).toBe(1);
		expect((editor.preview?.text ?? "").length).toBeGreaterThan(first.length);
		expect(new TextEncoder().encode(editor.preview?.text).length).toBeLessThanOrEqual(PREVIEW_STEPS[1].bytes);
		expect(plain(editor.render(WIDTH).join("\n"))).toContain(editor.preview?.title ?? "?");
		// The deepest preview still fits the overlay: the rest is counted, not drawn.
		press(ENTER, ENTER, ENTER);
		expect(editor.preview?.level).toBe(PREVIEW_STEPS.length - 1);
		const deepest = editor.render(WIDTH);
		expect(deepest.length).toBeLessThanOrEqual(ROWS);
		expect(plain(deepest.join("\n"))).toMatch(/… \d+ more lines/);
		expect(state()).toEqual(before);
	});

	it("a refused gesture shows the runtime's own reason and changes nothing", () => {
		const before = state();
		const root = rt.lattice?.visibleRoots()[0];
		select(`fold:${root}`);
		press("u");
		expect(editor.message).toEqual({ text: expect.stringContaining("not a pending mark"), error: true });
		// Pinning a fold's entries: refused by the pin cap or by the lattice (folded entries never pin).
		press("p");
		expect(editor.message?.error).toBe(true);
		expect(editor.message?.text).toMatch(/be pinned|over the cap/);
		const raw = editor.rows.find((r) => r.kind === "raw");
		select(raw?.key ?? "?");
		press("u");
		expect(editor.message?.error).toBe(true);
		expect(editor.message?.text).toContain("nothing to withdraw");
		// A span from a raw row over a pending mark: the lattice refuses it before any brief is asked.
		const [a, b] = rt.lattice?.pending() ?? [];
		const rawBefore = editor.rows.filter((r) => r.kind === "raw" && r.end <= (a?.start ?? 0)).at(-1);
		select(rawBefore?.key ?? "?");
		press("m");
		expect(editor.anchor?.key).toBe(rawBefore?.key);
		select(`fold:${b.id}`);
		press("m");
		expect(editor.briefing).toBe(false);
		expect(editor.anchor).toBeUndefined();
		expect(editor.message?.error).toBe(true);
		expect(editor.message?.text).toMatch(/contains pending mark/);
		// Shown whole, wrapped in a narrow terminal: every word of the reason is on screen.
		const narrow = plain(editor.render(40).join("\n"));
		const words = (editor.message?.text ?? "").split(/\s+/).filter((w) => w.length > 3);
		for (const w of words) expect(narrow.replaceAll("\n", " ")).toContain(w);
		expect(state()).toEqual(before);
	});

	it("the list stops at its ends: Up on the first row and Down on the last do not wrap around", () => {
		const first = editor.rows[0];
		const last = editor.rows.at(-1);
		if (!last) throw new Error("no rows");
		select(first.key);
		press(UP);
		expect(editor.selected?.key).toBe(first.key);
		select(last.key);
		press(DOWN);
		expect(editor.selected?.key).toBe(last.key);
		press(UP);
		expect(editor.selected?.key).toBe(editor.rows.at(-2)?.key);
	});

	it("u withdraws a mark; m, m and a typed brief mark its span again, durably", () => {
		const marks = rt.lattice?.pending() ?? [];
		const mark = marks[marks.length - 1];
		const before = records().length;
		select(`fold:${mark.id}`);
		press("u");
		expect(editor.message?.error).toBe(false);
		expect(rt.lattice?.get(mark.id)).toBeUndefined();
		expect(records().slice(before)).toEqual([{ v: 1, op: "unmark", id: mark.id }]);
		// Its span is raw now: one row per tool batch.
		const span = editor.rows.filter((r) => r.kind === "raw" && r.start >= mark.start && r.end <= mark.end);
		expect(span.length).toBeGreaterThan(0);
		expect(span[0].start).toBe(mark.start);
		expect(span.at(-1)?.end).toBe(mark.end);

		// Esc at the brief prompt leaves everything as it was.
		const unmarked = state();
		select(span[0].key);
		press("m");
		select(span.at(-1)?.key ?? "?");
		press("m");
		expect(editor.briefing).toBe(true);
		press("x", ESC);
		expect(editor.briefing).toBe(false);
		expect(state()).toEqual(unmarked);

		select(span.at(-1)?.key ?? "?");
		press("m");
		select(span[0].key);
		press("m");
		expect(editor.briefing).toBe(true);
		const brief = "Stage notes: read the tools' sources";
		press(...brief, ENTER);
		expect(editor.briefing).toBe(false);
		expect(editor.message).toEqual({ text: expect.stringContaining("with your brief"), error: false });
		// The same span is the same fold: its id is content-derived.
		const again = rt.lattice?.get(mark.id);
		expect(again).toMatchObject({ state: "pending", provenance: "supplied", brief, start: mark.start, end: mark.end });
		expect(records().slice(before + 1)).toEqual([
			{
				v: 1,
				op: "mark",
				id: mark.id,
				kind: "tool-batch",
				from: rt.view?.context.entries[mark.start].id,
				to: rt.view?.context.entries[mark.end - 1].id,
			},
			{ v: 1, op: "brief", id: mark.id, text: brief },
		]);
		expect(editor.selected?.key).toBe(`fold:${mark.id}`);
		expect(editor.selected?.text).toBe(brief);
	});

	it("p pins a raw row's entries and p again unpins them", () => {
		const last = editor.rows.filter((r) => r.kind === "raw").at(-1);
		if (!last) throw new Error("no raw row");
		select(last.key);
		press("p");
		expect(editor.message?.error).toBe(false);
		expect(rt.lattice?.pins()).toEqual(last.entryIds);
		expect(editor.selected?.pinnedIds).toEqual(last.entryIds);
		press("p");
		expect(rt.lattice?.pins()).toEqual([]);
		expect(records().slice(-2)).toEqual([
			{ v: 1, op: "pin", entryIds: last.entryIds },
			{ v: 1, op: "unpin", entryIds: last.entryIds },
		]);
	});

	it("Enter on a folded row stages its expand; Enter again previews its verified source", () => {
		const lattice = rt.lattice;
		const id = lattice?.visibleRoots().find((r) => lattice.get(r)?.kind === "consolidation");
		if (!id) throw new Error("no consolidation root");
		const snapshot = lattice?.snapshot();
		select(`fold:${id}`);
		press(ENTER);
		expect(editor.message).toEqual({ text: expect.stringContaining(`${id} expands at the next turn`), error: false });
		expect(rt.staged).toEqual([{ op: "expand", id }]);
		// Staged, not applied: the open lattice is as it was until the next turn's boundary.
		expect(rt.lattice?.snapshot()).toEqual(snapshot);
		const at = editor.rows.findIndex((r) => r.key === `fold:${id}`);
		expect(editor.rows[at]).toMatchObject({ kind: "expanded", staged: "expand" });
		const children = lattice?.get(id)?.children ?? [];
		expect(editor.rows.slice(at + 1, at + 1 + children.length).map((r) => r.depth)).toEqual(children.map(() => 1));
		expect(plain(editor.header.join("\n"))).toContain(`staged for the next turn: expand ${id} (counted in the window)`);
		// The fold bar redrew at once, with the same figure as the editor's header and the staged expand.
		const bar =
			rec.widgets
				.filter((w) => w.key === FOLD_BAR_KEY)
				.at(-1)
				?.lines?.join(" ") ?? "";
		const header = plain(editor.header[0]);
		const [, tokens, budget, pct] = /window ~([\d.]+k?) of ([\d.]+k?) tokens \((\d+%)\)/.exec(header) ?? [];
		expect(pct, header).toBeDefined();
		expect(bar).toContain(`▏ ${pct} of ${budget} `);
		expect(bar).toContain(`incl. staged expand ${id}`);
		const over = pifold.runtime.actions()?.overview(h.session.extensionRunner.createContext());
		expect(over?.ok && formatTokens(over.overview.arithmetic.occupancy)).toBe(tokens);
		press(ENTER);
		expect(rt.staged).toHaveLength(1);
		expect(editor.preview?.title).toContain("verified by SHA-256 from the fold store");
	});

	it("the session file rebuilds the lattice the editor left", () => {
		const file = h.session.sessionManager.getSessionFile();
		if (!file) throw new Error("no session file");
		const sm = SessionManager.open(file);
		const rebuilt = rebuildLattice(sm.getBranch(), sm.buildContextEntries(), core);
		expect(rebuilt.ok).toBe(true);
		if (rebuilt.ok) expect(rebuilt.lattice.snapshot()).toEqual(rt.lattice?.snapshot());
	});

	it("an open editor redraws from the runtime when something else changed it (the agent's tool)", () => {
		const actions = pifold.runtime.actions();
		const last = editor.rows.filter((r) => r.kind === "raw").at(-1);
		if (!actions || !last) throw new Error("no actions or no raw row");
		// The tool's pin reads only the model from its context.
		const pinned = actions.pin(last.entryIds, { model: h.session.model } as ExtensionContext);
		expect(pinned.ok).toBe(true);
		editor.render(WIDTH);
		expect(editor.rows.find((r) => r.key === last.key)?.pinnedIds).toEqual(last.entryIds);
		expect(actions.unpin(last.entryIds).ok).toBe(true);
		editor.render(WIDTH);
		expect(editor.rows.find((r) => r.key === last.key)?.pinnedIds).toEqual([]);
	});

	it("Esc closes the editor and the command returns", async () => {
		press(ESC);
		await closed;
		expect(rt.status().problems).toEqual([]);
	});

	it("the next request shows the staged expand: one attributed rewrite, no unattributed one", async () => {
		const id = rt.staged[0]?.id;
		const fold = id ? rt.lattice?.get(id) : undefined;
		if (!fold) throw new Error("no staged expand");
		const from = h.captured.length;
		const before = rt.status().rewrites;
		h.script([
			fauxAssistantMessage(fauxToolCall("ls", { path: "." }, { id: "after-ls" }), { stopReason: "toolUse" }),
			fauxAssistantMessage(fauxText("listed")),
		]);
		await h.session.prompt("List the directory.");
		const reqs = h.captured.slice(from).map((c) => c.context.messages as Message[]);
		expect(reqs).toHaveLength(2);
		const shows = (m: Message[], s: string) => m.some((x) => textOf(x).includes(s));
		// The consolidation's brief leaves; its children's briefs take its place.
		const child = fold.children.find((c) => c.type === "fold");
		expect(shows(reqs[0], `[pi-fold ${id}]`)).toBe(true);
		expect(shows(reqs[1], `[pi-fold ${id}]`)).toBe(false);
		if (child?.type !== "fold") throw new Error("the consolidation holds no fold");
		expect(shows(reqs[1], `[pi-fold ${child.id}]`)).toBe(true);
		expect(isAppendOf(reqs[0], reqs[1])).toBe(false);
		expect(pairingProblems(reqs[1])).toEqual([]);
		const after = rt.status().rewrites;
		expect(after.attributed.expand).toBe(before.attributed.expand + 1);
		expect(after.unattributed).toBe(0);
		expect(rt.lattice?.get(id ?? "")?.state).toBe("expanded");
		expect(rt.staged).toEqual([]);
	});

	it("outside the TUI the command prints the map and says the keys need the TUI", async () => {
		const rpc = recordingUi();
		await h.session.bindExtensions({ uiContext: rpc.ui, mode: "rpc" });
		await h.session.prompt("/fold-editor");
		expect(rpc.customs).toBe(0);
		expect(rpc.notes).toHaveLength(1);
		const note = rpc.notes[0];
		expect(note.type).toBe("info");
		for (const id of rt.lattice?.visibleRoots() ?? []) expect(note.message).toContain(id);
		expect(note.message).toContain("need the interactive TUI");
		await h.session.prompt("/fold-editor fnotafold");
		expect(rpc.notes[1]).toEqual({ message: expect.stringContaining("is not a fold of this session"), type: "error" });
	});
});

describe("the editor's key model", () => {
	const row = (over: Partial<Parameters<typeof intentFor>[1]>): Parameters<typeof intentFor>[1] => ({
		key: "raw:a",
		kind: "raw",
		depth: 0,
		start: 0,
		end: 1,
		entryIds: ["a"],
		pinnedIds: [],
		tokens: 1,
		label: "",
		text: "",
		...over,
	});

	it("m twice spans from the earlier row's first entry to the later row's last, in either order", () => {
		const a = row({ key: "raw:a", start: 2, end: 4, entryIds: ["a", "b"] });
		const c = row({ key: "raw:c", start: 7, end: 9, entryIds: ["c", "d"] });
		expect(intentFor("mark", a)).toEqual({ type: "anchor", row: a });
		expect(intentFor("mark", c, a)).toEqual({ type: "mark", from: "a", to: "d" });
		expect(intentFor("mark", a, c)).toEqual({ type: "mark", from: "a", to: "d" });
		expect(intentFor("mark", a, a)).toEqual({ type: "mark", from: "a", to: "b" });
	});

	it("p pins what is not pinned yet, and unpins a wholly pinned row", () => {
		expect(intentFor("pin", row({ entryIds: ["a", "b"], pinnedIds: ["a"] }))).toEqual({ type: "pin", ids: ["b"] });
		expect(intentFor("pin", row({ entryIds: ["a", "b"], pinnedIds: ["a", "b"] }))).toEqual({
			type: "unpin",
			ids: ["a", "b"],
		});
	});

	it("raw units keep an assistant's tool calls with their results", () => {
		const entries = [
			{ id: "u", role: "user" },
			{ id: "a1", role: "assistant", toolCallIds: ["c1", "c2"] },
			{ id: "r1", role: "toolResult", toolCallId: "c1" },
			{ id: "r2", role: "toolResult", toolCallId: "c2" },
			{ id: "a2", role: "assistant" },
		];
		const context = { entries, sources: [], texts: [] } as unknown as Parameters<typeof rawUnits>[0];
		expect(rawUnits(context, [0, 1, 2, 3, 4])).toEqual([[0], [1, 2, 3], [4]]);
		// A gap in the positions (a fold in between) ends a unit.
		expect(rawUnits(context, [1, 3, 4])).toEqual([[1], [3], [4]]);
	});
});
