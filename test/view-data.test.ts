// The view's reading of a session without Pi: each request's window rebuilt from the session file
// alone must be what Pi really sent (weighed by the same estimator), the fold tree must hold what
// the records commit, and the most recent session of a folder is the one Pi would continue.
import { appendFileSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DEFAULT_COMPACTION_SETTINGS } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { tempDir } from "../harness/pi-harness.ts";
import { parseArgs } from "../src/cli/args.ts";
import { estimateMessages } from "../src/meter/estimate.ts";
import { replayFile } from "../src/replay/replay.ts";
import { loadSession } from "../src/replay/session-file.ts";
import { readSessionFolds } from "../src/replay/session-folds.ts";
import { transcriptOf } from "../src/replay/transcript.ts";
import { appendToSession, planUnfold, unfoldEntries } from "../src/replay/unfold-command.ts";
import { curveOf } from "../src/view/native-curve.ts";
import { recentSession, sessionDirOf } from "../src/view/recent-session.ts";
import { sessionView } from "../src/view/session-view.ts";
import { RECORD_TYPE } from "../src/vocabulary.ts";
import { damageStored } from "./helpers/damage.ts";
import { FIXTURE, fixtureAvailable } from "./helpers/fixture-entries.ts";
import { copySession, FOLD_BUDGET, FOLD_WINDOW, recordedFold, recordPiAlone } from "./helpers/replay-recordings.ts";

const core = nodeCore();

describe("the window of every request, rebuilt from the session file", () => {
	it("sums to what Pi sent for that request, and splits it into raw, pending and briefs", async () => {
		const rec = await recordedFold();
		const { data } = sessionView(rec.file, core);
		expect(data.requests).toHaveLength(rec.work.length);
		data.requests.forEach((r, k) => {
			const sent = estimateMessages(core, rec.work[k]).reduce((a, b) => a + b, 0);
			expect(r.raw + r.pending + r.folded + r.summary, `request ${k + 1}`).toBe(sent);
			expect(r.billed, `request ${k + 1}`).toBe(rec.billed[k]);
		});
		// Before the first commit nothing is folded; after it, briefs stand in for what was kept out.
		const first = data.commits[0].request;
		expect(data.requests.slice(0, first).every((r) => r.folded === 0 && r.hidden === 0)).toBe(true);
		expect(data.requests.slice(first).every((r) => r.folded > 0 && r.hidden > r.folded)).toBe(true);
		// Marks are pending before their commit: some request carries pending entries.
		expect(data.requests.some((r) => r.pending > 0)).toBe(true);
		expect(data.commits.map((c) => c.request)).toEqual(rec.rewritten);
		// Each commit's receipt: the budget the session ran with, and the window before and after it. A
		// commit at the run's last turn appends none (the run's answer stays its last message).
		const receipted = data.commits.filter((c) => c.request < rec.work.length);
		expect(receipted.length).toBeGreaterThan(0);
		for (const c of receipted) {
			expect(c.budget).toBe(FOLD_BUDGET);
			expect(c.after).toBeLessThan(c.before as number);
		}
		expect(data.requests.every((r) => r.budget === FOLD_BUDGET)).toBe(true);
	}, 300_000);

	it("each fold's size raw is the sum of its leaves', nested folds under their parent", async () => {
		const { data } = sessionView((await recordedFold()).file, core);
		const byId = new Map(data.folds.map((f) => [f.id, f]));
		for (const f of data.folds) {
			if (f.children.some((c) => c.type === "fold")) {
				const sum = f.children.reduce((n, c) => n + (c.type === "fold" ? (byId.get(c.id)?.rawTokens ?? 0) : 0), 0);
				expect(f.rawTokens).toBeGreaterThanOrEqual(sum);
				for (const c of f.children) if (c.type === "fold") expect(byId.get(c.id)?.parent).toBe(f.id);
			}
			expect(f.entries).toBe(f.children.length === 0 ? f.entries : countLeaves(f.id));
			expect(f.rawTokens).toBeGreaterThan(f.shownTokens);
		}
		function countLeaves(id: string): number {
			const f = byId.get(id);
			return (f?.children ?? []).reduce((n, c) => n + (c.type === "leaf" ? 1 : countLeaves(c.id)), 0);
		}
	}, 300_000);
});

describe.skipIf(!fixtureAvailable())("the real session fixture (legacy format, two native compactions)", () => {
	it("gives every request what Pi's own projection sent, its compaction summary shown and what it cut kept out", () => {
		const { data } = sessionView(FIXTURE, core);
		const turns = transcriptOf(loadSession(FIXTURE)).steps.flatMap((s) => (s.kind === "turn" ? [s.turn] : []));
		expect(data.requests).toHaveLength(turns.length);
		let summarized = 0;
		turns.forEach((turn, k) => {
			const sent = estimateMessages(core, turn.recorded).reduce((a, b) => a + b, 0);
			const r = data.requests[k];
			const shown = r.raw + r.pending + r.folded + r.summary;
			if (r.summary === 0) expect(shown, `request ${k + 1}`).toBe(sent);
			else {
				// Pi wraps a compaction's summary in a short preamble of its own; the view counts the summary.
				summarized++;
				expect(sent - shown, `request ${k + 1}`).toBeGreaterThan(0);
				expect(sent - shown, `request ${k + 1}`).toBeLessThan(150);
				expect(r.hidden, `request ${k + 1}`).toBeGreaterThan(0);
			}
		});
		expect(summarized).toBeGreaterThan(0);
		expect(data.folds).toEqual([]);
	}, 300_000);
});

/** A copy of the recorded session's folder; the copy's file. */
async function copyRecorded(): Promise<string> {
	return copySession((await recordedFold()).file, "view-copy");
}

describe("the replay the view draws beside a session", () => {
	it("carries pi-fold's arm as `pi-fold replay` computes it: each request's window and cost, its commits, its peak", async () => {
		const rec = await recordPiAlone();
		const result = await replayFile(rec.file, core, { window: FOLD_WINDOW });
		const curve = curveOf(result);
		if (curve.state !== "ready") throw new Error("no curve");
		const fold = result.policies.find((p) => p.name === "pi-fold");
		expect(fold).toBeDefined();
		expect(curve.fold.prompts).toEqual(fold?.prompts);
		expect(curve.fold.prompts).toHaveLength(rec.work.length);
		expect(curve.fold.rewrites.map((c) => c.request)).toEqual(fold?.events.map((e) => e.request));
		expect(curve.fold.rewrites.length).toBeGreaterThan(0);
		for (const [name, arm] of [
			["pi-fold", curve.fold],
			["native", curve.native],
		] as const) {
			const report = result.arms.find((a) => a.name === name);
			expect(arm.cost).toBe(report?.cost);
			expect(arm.peak).toBe(report?.peakPromptTokens);
			expect(Math.abs(arm.costs.reduce((a, b) => a + b, 0) - arm.cost)).toBeLessThan(1e-9);
		}
		// Native's threshold is its own figure: the window minus its reserveTokens, not pi-fold's budget.
		expect(curve.threshold).toBe(FOLD_WINDOW - DEFAULT_COMPACTION_SETTINGS.reserveTokens);
		expect(curve.budget).toBe(result.settings.budget);
		expect(curve.budget).not.toBe(curve.threshold);
		console.log(
			`[view-data] pi-fold arm: ${curve.fold.rewrites.length} commits, $${curve.fold.cost.toFixed(4)}, peak ${curve.fold.peak}; ` +
				`native: ${curve.native.rewrites.length} compactions, $${curve.native.cost.toFixed(4)}, peak ${curve.native.peak}; none peak ${Math.max(...curve.none)}`,
		);
	}, 300_000);
});

describe("fold states as the records leave them", () => {
	it("after `pi-fold unfold` every fold shows expanded, and the window after it holds no briefs", async () => {
		const file = await copyRecorded();
		const session = readSessionFolds(file, core);
		const plan = planUnfold(session);
		appendToSession(file, unfoldEntries(session, plan), statSync(file));
		const { data } = sessionView(file, core);
		expect(data.folds.length).toBeGreaterThan(0);
		// The roots are expanded; folds inside a consolidation were never re-shown on their own.
		const roots = data.folds.filter((f) => f.parent === undefined);
		expect(roots.every((f) => f.state === "expanded")).toBe(true);
	}, 300_000);

	it("a fold whose record does not verify is damaged, sized by the mark that made it", async () => {
		const file = await copyRecorded();
		const { data: before } = sessionView(file, core);
		const target = before.folds.find((f) => f.kind === "tool-batch" && f.record !== undefined);
		if (!target?.record) throw new Error("no tool batch in the recorded session");
		damageStored(file, before.sessionId, "record", target.record);
		const after = sessionView(file, core).data.folds.find((f) => f.id === target.id);
		expect(after).toMatchObject({ state: "damaged", entries: target.entries, rawTokens: target.rawTokens });
		expect(after?.note).toMatch(/^record [0-9a-f]{64} does not verify/);
	}, 300_000);

	it("a mark not yet committed is pending, over the entries of its span; a pin lists its entries", async () => {
		const file = await copyRecorded();
		const lines = readFileSync(file, "utf8")
			.trimEnd()
			.split("\n")
			.map((l) => JSON.parse(l) as Record<string, unknown>);
		const messages = lines.filter((e) => e.type === "message").slice(-4);
		const last = lines[lines.length - 1];
		const record = (id: string, parentId: unknown, data: unknown) =>
			`${JSON.stringify({ type: "custom", customType: RECORD_TYPE, data, id, parentId, timestamp: new Date().toISOString() })}\n`;
		const mark = { v: 1, op: "mark", id: "f0123456789", kind: "chapter", from: messages[0].id, to: messages[2].id };
		appendFileSync(
			file,
			record("aaaa0001", last.id, mark) +
				record("aaaa0002", "aaaa0001", { v: 1, op: "pin", entryIds: [messages[3].id] }),
		);
		const { data } = sessionView(file, core);
		const pending = data.folds.find((f) => f.id === "f0123456789");
		expect(pending).toMatchObject({
			state: "pending",
			kind: "chapter",
			entries: 3,
			from: messages[0].id,
			to: messages[2].id,
		});
		expect(pending?.rawTokens).toBeGreaterThan(0);
		expect(data.pinned).toEqual([messages[3].id]);
	}, 300_000);
});

describe("the session `pi-fold view` opens by default", () => {
	it("is the newest session file of the folder in Pi's session directory", () => {
		const agent = tempDir("view-agent");
		const cwd = tempDir("view-cwd");
		const env = { PI_CODING_AGENT_DIR: agent };
		const dir = sessionDirOf(cwd, env);
		expect(dir.startsWith(join(agent, "sessions", "--"))).toBe(true);
		expect(recentSession(cwd, env)).toEqual({ problem: expect.stringContaining("no Pi sessions for") });
		mkdirSync(dir, { recursive: true });
		const header = (id: string) =>
			`${JSON.stringify({ type: "session", id, timestamp: "2026-01-01T00:00:00Z", cwd })}\n`;
		const older = join(dir, "a.jsonl");
		const newer = join(dir, "b.jsonl");
		const notSession = join(dir, "c.jsonl");
		writeFileSync(older, header("one"));
		writeFileSync(newer, header("two"));
		writeFileSync(notSession, "not a session\n");
		utimesSync(older, 1000, 1000);
		utimesSync(newer, 2000, 2000);
		utimesSync(notSession, 3000, 3000);
		expect(recentSession(cwd, env)).toEqual({ file: newer });
		expect(sessionDirOf(cwd, { ...env, PI_CODING_AGENT_SESSION_DIR: "/x/y" })).toBe("/x/y");
	});

	it("a copy read elsewhere still finds its store beside it", async () => {
		const { data } = sessionView(await copyRecorded(), core);
		expect(data.folds.length).toBeGreaterThan(0);
		expect(data.folds.every((f) => f.state === "committed")).toBe(true);
	}, 300_000);
});

describe("`pi-fold view` arguments", () => {
	it("takes a file or none, --out, and passes --window and --model to the replay", () => {
		expect(parseArgs(["view"])).toEqual({ kind: "view", args: { replay: [] } });
		expect(parseArgs(["view", "s.jsonl", "--out", "v.html", "--window=1000"])).toEqual({
			kind: "view",
			args: { file: "s.jsonl", out: "v.html", replay: ["--window", "1000"] },
		});
		expect(parseArgs(["view", "--model", "anthropic/claude-opus-4-5"])).toMatchObject({ kind: "view" });
	});

	it("refuses what it cannot use, naming it", () => {
		expect(parseArgs(["view", "a.jsonl", "b.jsonl"])).toEqual({
			kind: "error",
			message: "view takes one session file, got 2",
		});
		expect(parseArgs(["view", "--port", "8"])).toEqual({ kind: "error", message: "unknown option --port for view" });
		expect(parseArgs(["view", "--out"])).toEqual({ kind: "error", message: "--out needs a value" });
		expect(parseArgs(["view", "--window", "lots"])).toMatchObject({
			kind: "error",
			message: expect.stringContaining("--window needs a positive whole number"),
		});
		expect(parseArgs(["view", "--model", "nomodel"])).toMatchObject({
			kind: "error",
			message: expect.stringContaining("--model needs provider/id"),
		});
	});
});
