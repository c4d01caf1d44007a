// /fold and /fold-status on a real session, through session.prompt("/...") with a recording
// uiContext (0 model calls). The workload runs under a budget large enough that no commit fires by
// itself, so every pending mark is the frontier's and every fold after it is the person's. The
// captured requests are the oracle: a /fold changes nothing until the next turn's boundary, then
// the next request shows the span folded, as one rewrite attributed to /fold.
import { fauxAssistantMessage, fauxText, fauxToolCall, type Message } from "@earendil-works/pi-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSession, piEnv, removeTempDirs, type TestSession, tempDir, textOf } from "../harness/pi-harness.ts";
import { WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "../harness/workload.ts";
import { FOLD_TIMING_IDLE, foldArgs, foldCompletions } from "../src/commands/fold.ts";
import type { FoldId } from "../src/fold-types.ts";
import { type PiFold, registerPiFold } from "../src/index.ts";
import type { FoldRuntime } from "../src/runtime/runtime.ts";
import { tokensOfBudget } from "../src/ui/window-figure.ts";
import { RECORD_TYPE } from "../src/vocabulary.ts";
import { FIXTURE_MODEL, FIXTURE_PROVIDER } from "./fixtures/faux-status-ext.ts";
import { childEnv, REPO_ROOT, runPi } from "./helpers/pi-cli.ts";
import { type RecordedNote, recordingUi } from "./helpers/recording-ui.ts";
import { isAppendOf, pairingProblems } from "./helpers/requests.ts";

/** Large enough that the workload (~40% of it) never reaches maxTarget: no commit fires by itself. */
const BUDGET = 100_000;

afterAll(removeTempDirs);

describe("/fold and /fold-status on a real session", () => {
	let h: TestSession;
	let fold: PiFold;
	let rt: FoldRuntime;
	const recorder = recordingUi();
	const notes = recorder.notes;
	/** The marks the workload left, in transcript order. */
	let marks: FoldId[] = [];
	let merged: FoldId = "";

	/** Run one command; it must answer exactly once, without a model call. */
	const command = async (line: string): Promise<RecordedNote> => {
		const before = { notes: notes.length, requests: h.captured.length };
		await h.session.prompt(line);
		expect(notes.length - before.notes, `${line} answers once`).toBe(1);
		expect(h.captured.length).toBe(before.requests);
		return notes[notes.length - 1];
	};
	const state = () => ({
		lattice: rt.lattice?.snapshot(),
		staged: rt.staged.map((s) => ({ ...s })),
		foldRequested: rt.foldRequested,
		records: h.session.sessionManager.getBranch().filter((e) => e.type === "custom" && e.customType === RECORD_TYPE)
			.length,
	});
	/** One more prompt: an ls call, then a reply. Returns its two requests and the request before them. */
	const nextPrompt = async (): Promise<{ previous: Message[]; reqs: Message[][] }> => {
		const from = h.captured.length;
		const previous = h.captured[from - 1].context.messages as Message[];
		h.script([
			fauxAssistantMessage(fauxToolCall("ls", { path: "." }, { id: `ls-${from}` }), { stopReason: "toolUse" }),
			fauxAssistantMessage(fauxText("listed")),
		]);
		await h.session.prompt("List the directory.");
		const reqs = h.captured.slice(from).map((c) => c.context.messages as Message[]);
		expect(reqs).toHaveLength(2);
		return { previous, reqs };
	};
	/** Tool call ids of a fold's span: a request shows the span raw exactly when it carries them. */
	const callIdsOf = (id: FoldId): string[] => {
		const lattice = rt.lattice;
		const f = lattice?.get(id);
		const entries = rt.view?.context.entries ?? [];
		// Its own leaves only: a chapter mark may hold committed folds, whose calls are not shown raw.
		const own = f ? entries.slice(f.start, f.end).filter((e) => lattice?.foldOf(e.id) === id) : [];
		return own.flatMap((e) => e.toolCallIds ?? []);
	};
	const carries = (messages: readonly Message[], callId: string) =>
		messages.some((m) => m.role === "toolResult" && m.toolCallId === callId);

	beforeAll(async () => {
		let registered: PiFold | undefined;
		h = await makeSession({
			cwd: WORKLOAD_ROOT,
			persist: true,
			contextWindow: 1_000_000,
			extensions: [
				(pi) => {
					registered = registerPiFold(pi, { providerInputBudget: BUDGET });
				},
			],
		});
		h.script(workloadSteps(12, { seed: 3 }));
		await h.session.prompt(WORKLOAD_PROMPT);
		const r = registered?.runtime.get();
		if (!registered || !r) throw new Error(`no runtime: ${registered?.runtime.reason()}`);
		fold = registered;
		rt = r;
		marks = (rt.lattice?.pending() ?? []).map((f) => f.id);
		await h.session.bindExtensions({ uiContext: recorder.ui, mode: "tui" });
	}, 600_000);
	afterAll(() => h?.dispose());

	it("the workload left only pending marks: nothing folded by itself", () => {
		expect(rt.commits).toEqual([]);
		expect(marks.length).toBeGreaterThanOrEqual(3);
		expect(rt.status().problems).toEqual([]);
	});

	it("/fold-status counts what a person sees, with the one window figure, each term explained", async () => {
		const note = await command("/fold-status");
		expect(note.type).toBe("info");
		const over = fold.runtime.actions()?.overview(h.session.extensionRunner.createContext());
		if (!over?.ok) throw new Error("no overview");
		const a = over.overview.arithmetic;
		const lines = note.message.split("\n");
		// The figure every display shows, from the same function.
		expect(lines[0]).toBe(`pi-fold: window ${tokensOfBudget(a.occupancy, BUDGET)}`);
		expect(lines[1]).toContain(`100k is pi-fold's budget for it (set by providerInputBudget; window `);
		expect(lines[2]).toMatch(/^ {2}at 80% pi-fold commits: it folds pending marks until the window is back near 40%$/);
		expect(note.message).toMatch(
			/^in the window: 0 folds shown as a short brief each, 0 expanded, \d+ messages in full;/m,
		);
		expect(note.message).toMatch(
			new RegExp(
				`^pending marks: ${marks.length}, ~[\\d.]+k? of the window \\(the fold bar's "pending"\\); folding them at the next commit would free ~`,
				"m",
			),
		);
		for (const id of marks) expect(note.message).toMatch(new RegExp(`^ {2}${id} [a-z-]+: frees ~[\\d.]+k?$`, "m"));
		expect(note.message).toMatch(/^pins: 0 messages held in full through every commit/m);
		expect(note.message).toContain("so far: 0 commits");
		expect(note.message).toMatch(/^prompt cache: between commits every request only appended/m);
		expect(note.message).toMatch(/^problems: none$/m);
		// No counter dump and no internal term left unexplained.
		for (const internal of ["rewrites:", "attributed", "calibrated", "fence", "evidence", "-- window"]) {
			expect(note.message).not.toContain(internal);
		}
	});

	it("bad /fold arguments get the specific refusal and change nothing", async () => {
		const before = state();
		const cases: [string, RegExp][] = [
			["/fold notafold", /"notafold" is not a fold id/],
			["/fold f0000000000", /unknown fold f0000000000/],
			[`/fold ${marks[0]} f0000000000`, /unknown fold f0000000000/],
		];
		for (const [line, reason] of cases) {
			const note = await command(line);
			expect(note.type).toBe("error");
			expect(note.message).toMatch(/^\/fold refused, nothing changed: /);
			expect(note.message).toMatch(reason);
			expect(state()).toEqual(before);
		}
	});

	it("completes /fold with the pending marks not typed yet", () => {
		const complete = foldCompletions(fold.runtime);
		expect(complete("")?.map((i) => i.label)).toEqual(marks);
		expect(complete(`${marks[0]} `)?.map((i) => i.label)).toEqual(marks.slice(1));
		expect(complete("fzz")).toBeNull();
		expect(foldArgs(" a, b  c ")).toEqual(["a", "b", "c"]);
	});

	it("/fold <a> <b> merges two marks into one span and folds exactly it from the next request", async () => {
		const [a, b] = marks;
		const span = { start: rt.lattice?.get(a)?.start, end: rt.lattice?.get(b)?.end };
		const note = await command(`/fold ${a} ${b}`);
		expect(note.type).toBe("info");
		expect(note.message).toContain(FOLD_TIMING_IDLE);
		expect(note.message).toContain(`${a} + ${b} merged into one span`);
		merged = /^\/fold: (f[0-9a-f]{10}) /.exec(note.message)?.[1] ?? "";
		// One pending mark over both spans (and whatever lay between them); the two are gone.
		expect(rt.lattice?.get(merged)).toMatchObject({ state: "pending", ...span });
		expect(rt.lattice?.get(a)).toBeUndefined();
		expect(rt.lattice?.get(b)).toBeUndefined();
		expect(rt.foldRequested).toBe(true);
		const calls = callIdsOf(merged);
		expect(calls.length).toBeGreaterThan(0);
		const others = marks.slice(2);

		const before = rt.status().rewrites;
		const { previous, reqs } = await nextPrompt();
		// Pi was idle: the folds were written at the command and the very next request shows them
		// (the context-event bridge), one attributed rewrite; the span is gone, its brief names it.
		expect(isAppendOf(previous, reqs[0])).toBe(false);
		for (const c of calls) expect(carries(reqs[0], c)).toBe(false);
		expect(reqs[0].some((x) => textOf(x).includes(`[pi-fold ${merged}]`))).toBe(true);
		expect(pairingProblems(reqs[0])).toEqual([]);
		// The commit at that turn's end projects to exactly what was shown: the next request extends it.
		expect(isAppendOf(reqs[0], reqs[1])).toBe(true);
		expect(pairingProblems(reqs[1])).toEqual([]);
		expect(rt.commits.at(-1)).toMatchObject({ reason: "fold", committed: [merged] });
		for (const id of others) expect(rt.lattice?.get(id)?.state).toBe("pending");
		const after = rt.status().rewrites;
		// The shown request is the attributed rewrite, or a new baseline when the command's records
		// made the runtime re-open the session first (it then counts nothing as a rewrite).
		expect(after.attributed.fold + after.baselines).toBe(before.attributed.fold + before.baselines + 1);
		expect(after.unattributed).toBe(0);
		expect(rt.foldRequested).toBe(false);
	});

	it("/fold commits every staged mark, shown from the next request", async () => {
		const pending = (rt.lattice?.pending() ?? []).map((f) => f.id);
		expect(pending.length).toBeGreaterThan(0);
		const calls = pending.flatMap(callIdsOf);
		expect(calls.length).toBeGreaterThan(0);
		const note = await command("/fold");
		expect(note.type).toBe("info");
		expect(note.message).toContain(
			`${pending.length} staged mark${pending.length === 1 ? "" : "s"} (${pending.join(", ")})`,
		);
		expect(note.message).toContain(FOLD_TIMING_IDLE);
		expect(note.message).toMatch(/frees ~\d+ tokens of 100000/);
		const before = rt.status().rewrites;
		const { previous, reqs } = await nextPrompt();
		expect(isAppendOf(previous, reqs[0])).toBe(false);
		for (const c of calls) expect(carries(reqs[0], c)).toBe(false);
		expect(isAppendOf(reqs[0], reqs[1])).toBe(true);
		for (const id of pending) expect(rt.lattice?.get(id)?.state).toBe("committed");
		expect(rt.commits.at(-1)).toMatchObject({ reason: "fold" });
		expect([...(rt.commits.at(-1)?.committed ?? [])].sort()).toEqual([...pending].sort());
		const after = rt.status().rewrites;
		expect(after.attributed.fold).toBe(before.attributed.fold + 1);
		expect(after.unattributed).toBe(0);
	});

	it("/fold on a folded fold is refused; on an expanded fold it refolds at the next turn", async () => {
		const before = state();
		const refused = await command(`/fold ${merged}`);
		expect(refused).toEqual({ message: expect.stringContaining(`fold ${merged} is already folded`), type: "error" });
		expect(state()).toEqual(before);

		// The visible fold holding the merged span (a later chapter mark may have folded it in).
		const lattice = rt.lattice;
		const inner = lattice?.get(merged);
		const target = lattice?.visibleRoots().find((id) => {
			const f = lattice.get(id);
			return f && inner && f.start <= inner.start && inner.end <= f.end;
		});
		if (!target || !inner) throw new Error("the merged fold is not visible");
		const shows = (m: readonly Message[], id: FoldId) => m.some((x) => textOf(x).includes(`[pi-fold ${id}]`));
		// The agent expands it (its tool): the request after that shows its children instead of its brief.
		const from = h.captured.length;
		h.script([
			fauxAssistantMessage(fauxToolCall("pi_fold_context", { action: "expand", id: target }, { id: "expand-1" }), {
				stopReason: "toolUse",
			}),
			fauxAssistantMessage(fauxText("expanded")),
		]);
		await h.session.prompt("Expand that fold.");
		expect(rt.lattice?.get(target)?.state).toBe("expanded");
		const expanded = h.captured.slice(from).map((c) => c.context.messages as Message[]);
		expect(shows(expanded[1], target)).toBe(false);

		const rewrites = rt.status().rewrites;
		const note = await command(`/fold ${target}`);
		expect(note).toEqual({ message: `/fold: ${target} refolds at the next turn`, type: "info" });
		expect(rt.staged).toEqual([{ op: "refold", id: target }]);
		const { previous, reqs } = await nextPrompt();
		expect(isAppendOf(previous, reqs[0])).toBe(true);
		expect(shows(reqs[0], target)).toBe(false);
		expect(shows(reqs[1], target)).toBe(true);
		if (target !== merged) expect(shows(reqs[1], merged)).toBe(false);
		expect(pairingProblems(reqs[1])).toEqual([]);
		expect(rt.lattice?.get(target)?.state).toBe("committed");
		const after = rt.status().rewrites;
		expect(after.attributed.expand).toBe(rewrites.attributed.expand + 1);
		expect(after.unattributed).toBe(0);
		expect(rt.status().problems).toEqual([]);
	});
});

describe("/fold on a session with nothing marked", () => {
	it("refuses and says why; /fold-status still answers", async () => {
		const h = await makeSession({ extensions: [(pi) => void registerPiFold(pi, { providerInputBudget: BUDGET })] });
		try {
			const { ui, notes } = recordingUi();
			await h.session.bindExtensions({ uiContext: ui, mode: "tui" });
			await h.session.prompt("/fold");
			expect(notes).toEqual([
				{ message: expect.stringMatching(/^\/fold refused, nothing changed: no staged marks to fold/), type: "error" },
			]);
			await h.session.prompt("/fold-status");
			expect(notes[1].type).toBe("info");
			expect(notes[1].message).toContain("pending marks: none (a mark is a finished span");
			expect(notes[1].message).toMatch(/^pi-fold: window ~\d+ of 100k tokens \(\d+%\)$/m);
			expect(h.captured).toEqual([]);
		} finally {
			h.dispose();
		}
	});
});

describe('slash commands in print mode (`pi -p "/fold-status"`)', () => {
	it("print their answer: on stdout, a refusal on stderr", async () => {
		const env = childEnv(piEnv());
		const work = tempDir("print-mode");
		const base = ["-e", `${REPO_ROOT}src/index.ts`, "-e", `${REPO_ROOT}test/fixtures/faux-status-ext.ts`];
		base.push("--provider", FIXTURE_PROVIDER, "--model", FIXTURE_MODEL, "--no-session");
		const status = await runPi(["-p", "/fold-status", ...base], { cwd: work, env });
		expect(status.code, status.stderr).toBe(0);
		// The fixture's model: a 64k window, where Pi's default compaction acts past 64,000 - 16,384.
		expect(status.stdout).toMatch(/^pi-fold: window ~\d+ of 48k tokens \(\d+%\)\n/);
		expect(status.stdout).toContain("Pi's compaction threshold: window 64,000 minus reserveTokens 16,384");
		expect(status.stdout).toContain("pending marks: none");
		const refused = await runPi(["-p", "/fold", ...base], { cwd: work, env });
		expect(refused.code).toBe(0);
		expect(refused.stdout).toBe("");
		expect(refused.stderr).toContain("/fold refused, nothing changed: no staged marks to fold");
		const settings = await runPi(["-p", "/fold-settings", ...base], { cwd: work, env });
		expect(settings.stdout).toMatch(/^pi-fold settings file: /);
		const editor = await runPi(["-p", "/fold-editor", ...base], { cwd: work, env });
		expect(editor.stdout).toContain("The editor's keys (Enter, m, u, p) need the interactive TUI");
	}, 300_000);
});
