// Clean chat: tool rows of folded batches draw as one muted row. In-process, over the lattice of a
// real session (the workload, folded by pi-fold with a small budget), through Pi's real renderer
// chain (the extension runner's resolveToolRenderers) and Pi's real tool row component
// (ToolExecutionComponent, as the interactive TUI builds it). Then once in the real interactive TUI
// under a pty, where the fold bar and the muted rows must reach the screen.
import { execFileSync, spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { AssistantMessage, ToolResultMessage } from "@earendil-works/pi-ai";
import {
	type ExtensionAPI,
	initTheme,
	type SessionEntry,
	ToolExecutionComponent,
	type ToolRenderers,
} from "@earendil-works/pi-coding-agent";
import { stripTerminalSequences, Text, type TUI } from "@earendil-works/pi-tui";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSession, piEnv, removeTempDirs, type TestSession, tempDir } from "../harness/pi-harness.ts";
import { WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "../harness/workload.ts";
import { type PiFold, registerPiFold } from "../src/index.ts";
import type { FoldRuntime } from "../src/runtime/runtime.ts";
import { callSummary, FoldedCalls, foldedRowText, RowRegistry, visibleFoldOf } from "../src/ui/tool-renderer.ts";
import { RECORD_TYPE } from "../src/vocabulary.ts";
import { childEnv, PI_CLI, REPO_ROOT } from "./helpers/pi-cli.ts";
import { UI_HOST_MODEL, UI_HOST_PROVIDER } from "./hosts/fold-ui-host.ts";

const STAGES = 16;
const BUDGET = 14_000;
const WIDTH = 120;
/** Pi's renderers take their colours from the interactive theme, which must be initialised outside the app. */
initTheme("dark");

afterAll(removeTempDirs);

const strip = stripTerminalSequences;
const noRender = { requestRender: () => {} } as unknown as TUI;

/** What the model sees in place of each tool call, read from Pi's projection alone (no lattice). */
function foldsFromPi(h: TestSession): Map<string, string | undefined> {
	const sm = h.session.sessionManager;
	const shown = new Map(sm.buildSessionProjection().entries.map((pe) => [pe.sourceEntry.id, pe.messages]));
	const out = new Map<string, string | undefined>();
	let brief: string | undefined; // the fold whose brief the last edited entry showed
	for (const entry of sm.buildContextEntries()) {
		const messages = shown.get(entry.id) ?? [];
		const first = messages[0] as { content?: unknown } | undefined;
		const text = Array.isArray(first?.content)
			? (first.content as { type: string; text?: string }[]).map((b) => b.text ?? "").join("")
			: typeof first?.content === "string"
				? first.content
				: "";
		const named = /^\[pi-fold (f[0-9a-f]{10})\]/.exec(text)?.[1];
		let fold: string | undefined;
		if (messages.length === 0)
			fold = brief; // omitted: inside the fold whose brief came before it
		else if (named)
			fold = brief = named; // replaced by a brief
		else brief = undefined; // shown as it is
		if (entry.type === "message" && entry.message.role === "assistant") {
			for (const b of entry.message.content) if (b.type === "toolCall") out.set(b.id, fold);
		}
	}
	return out;
}

interface Call {
	id: string;
	name: string;
	args: Record<string, unknown>;
	first: boolean;
	entry: SessionEntry;
	result: ToolResultMessage;
}

function callsOf(h: TestSession): Call[] {
	const branch = h.session.sessionManager.getBranch();
	const results = new Map<string, ToolResultMessage>();
	for (const e of branch)
		if (e.type === "message" && e.message.role === "toolResult") results.set(e.message.toolCallId, e.message);
	return branch.flatMap((entry) => {
		if (entry.type !== "message" || entry.message.role !== "assistant") return [];
		const blocks = (entry.message as AssistantMessage).content.filter((b) => b.type === "toolCall");
		return blocks.map((b, i) => ({
			id: b.id,
			name: b.name,
			args: b.arguments,
			first: i === 0,
			entry,
			result: results.get(b.id) as ToolResultMessage,
		}));
	});
}

/** A tool row as the TUI builds it for a past call: the resolved renderers, then the result. */
async function row(renderers: ToolRenderers | undefined, call: Call): Promise<ToolExecutionComponent> {
	const c = new ToolExecutionComponent(call.name, call.id, call.args, {}, renderers, noRender, WORKLOAD_ROOT);
	c.updateResult(call.result);
	await Promise.resolve(); // a shell change re-runs the row's update in a microtask
	return c;
}

const lines = (c: ToolExecutionComponent) => c.render(WIDTH).map(strip);

describe("clean chat over a real session's folds", () => {
	let h: TestSession;
	let rt: FoldRuntime;
	let fold: PiFold;
	let calls: Call[];
	let piFolds: Map<string, string | undefined>;
	/** Pi's chain of tool renderers for a tool (pi-fold's resolver first), over `base`. */
	let resolve: (name: string, base?: ToolRenderers) => ToolRenderers | undefined;

	beforeAll(async () => {
		let registered: PiFold | undefined;
		h = await makeSession({
			cwd: WORKLOAD_ROOT,
			persist: true,
			settings: { compaction: { enabled: false } },
			extensions: [
				(pi: ExtensionAPI) => {
					registered = registerPiFold(pi, { providerInputBudget: BUDGET, thresholds: { consolidateAfter: 3 } });
				},
			],
		});
		h.script(workloadSteps(STAGES, { seed: 11 }));
		await h.session.prompt(WORKLOAD_PROMPT);
		if (!registered?.runtime.get()) throw new Error(`no runtime: ${registered?.runtime.reason()}`);
		fold = registered;
		rt = registered.runtime.get() as FoldRuntime;
		calls = callsOf(h);
		piFolds = foldsFromPi(h);
		resolve = (name, base) =>
			h.session.extensionRunner.resolveToolRenderers(name, () => base ?? h.session.getToolDefinition(name));
	});
	afterAll(() => h?.dispose());

	it("maps every call to the fold the model sees in its place, as Pi's projection shows it", () => {
		expect(rt.status().problems).toEqual([]);
		const folded = new FoldedCalls(fold.runtime);
		const seen = { folded: 0, raw: 0 };
		for (const call of calls) {
			const got = folded.lookup(call.id);
			expect(got?.foldId, call.id).toBe(piFolds.get(call.id));
			if (got) {
				seen.folded++;
				expect(got.first).toBe(call.first);
				// The first call's row names the whole batch.
				if (call.first) {
					const batch = calls.filter((c) => c.entry === call.entry);
					expect(got.summary).toBe(batch.map((c) => callSummary(c.name, c.args)).join(" · "));
				}
			} else seen.raw++;
		}
		// The run both folded batches and left the newest raw.
		expect(seen.folded).toBeGreaterThan(0);
		expect(seen.raw).toBeGreaterThan(0);
		expect(folded.lookup("no-such-call")).toBeUndefined();
	});

	it("a folded batch draws as one muted row naming the fold; its other calls draw nothing", async () => {
		const batch = calls.filter((c) => c.entry === calls.find((x) => piFolds.get(x.id))?.entry);
		expect(batch.length).toBeGreaterThan(1);
		const foldId = piFolds.get(batch[0].id) as string;
		const first = await row(resolve(batch[0].name), batch[0]);
		const drawn = lines(first);
		expect(drawn).toHaveLength(2);
		expect(drawn[0].trim()).toBe("");
		expect(drawn[1]).toMatch(new RegExp(`^ ⊟ folded in ${foldId} · ${batch[0].name} `));
		expect(drawn[1].length).toBeLessThanOrEqual(WIDTH);
		// Muted: the theme's muted colour wraps the text.
		expect(first.render(WIDTH)[1]).toContain("\x1b[");
		for (const other of batch.slice(1)) expect(lines(await row(resolve(other.name), other))).toEqual([]);
	});

	it("a raw call draws exactly as Pi draws it without pi-fold, built-in fallback or the tool's own renderers", async () => {
		const raw = calls.filter((c) => piFolds.get(c.id) === undefined);
		expect(raw.length).toBeGreaterThan(0);
		for (const call of raw.slice(0, 4)) {
			const base = h.session.getToolDefinition(call.name);
			expect(lines(await row(resolve(call.name), call))).toEqual(lines(await row(base, call)));
		}
		// A tool with renderers of its own keeps them for raw calls (pi-fold's renderers delegate).
		const own: ToolRenderers = {
			renderCall: (args) => new Text(`CALL ${JSON.stringify(args)}`, 0, 0),
			renderResult: (result) => new Text(`RESULT ${result.content.length}`, 0, 0),
		};
		const call = raw[0];
		const drawn = lines(await row(resolve(call.name, own), call));
		expect(drawn.join("\n")).toContain(`CALL ${JSON.stringify(call.args)}`);
		expect(drawn.join("\n")).toContain("RESULT 1");
		expect(lines(await row(resolve(call.name, own), call))).toEqual(lines(await row(own, call)));
		// No renderers at all (an unknown tool): pi-fold leaves Pi's generic drawing alone.
		expect(resolve("no_such_tool")).toBeUndefined();
	});

	it("expanding a fold redraws its rows: the inner fold's row, then the call as Pi draws it; refolding mutes it again", async () => {
		const lattice = rt.lattice;
		if (!lattice) throw new Error("no lattice");
		// A call inside a consolidation: its visible fold holds folds.
		const call = calls.find((c) => {
			const id = piFolds.get(c.id);
			return c.first && id !== undefined && lattice.get(id)?.children.some((k) => k.type === "fold");
		});
		if (!call) throw new Error("no call inside a consolidation");
		const outer = piFolds.get(call.id) as string;
		const folded = new FoldedCalls(fold.runtime);
		const registry = new RowRegistry();
		const component = await row(resolve(call.name), call);
		// Track the row as the registered renderers do (the registry of registerPiFold is internal).
		registry.track(call.id, folded.lookup(call.id)?.foldId, () => component.invalidate());
		expect(lines(component)[1]).toContain(`folded in ${outer}`);
		const base = lines(await row(h.session.getToolDefinition(call.name), call));

		expect(lattice.expand(outer).ok).toBe(true);
		try {
			const inner = visibleFoldOf(lattice, call.entry.id);
			expect(inner).toBeDefined();
			expect(inner).not.toBe(outer);
			expect(registry.refresh(folded)).toBe(1);
			await Promise.resolve();
			expect(lines(component)[1]).toContain(`folded in ${inner}`);
			registry.track(call.id, inner, () => component.invalidate());

			expect(lattice.expand(inner as string).ok).toBe(true);
			expect(folded.lookup(call.id)).toBeUndefined();
			expect(registry.refresh(folded)).toBe(1);
			await Promise.resolve();
			expect(lines(component)).toEqual(base);
			registry.track(call.id, undefined, () => component.invalidate());

			expect(lattice.refold(inner as string).ok).toBe(true);
			expect(registry.refresh(folded)).toBe(1);
			await Promise.resolve();
			expect(lines(component)[1]).toContain(`folded in ${inner}`);
			expect(lines(component)).toHaveLength(2);
			// Nothing changed since: nothing to redraw.
			registry.track(call.id, inner, () => component.invalidate());
			expect(registry.refresh(folded)).toBe(0);
		} finally {
			// Leave the session's lattice as the run made it.
			const inner = visibleFoldOf(lattice, call.entry.id);
			if (inner && inner !== outer) lattice.refold(outer);
		}
		expect(visibleFoldOf(lattice, call.entry.id)).toBe(outer);
	});

	it("renderers shared between rows cannot follow the shell: the muted line still replaces the call, maybe framed", async () => {
		const batch = calls.filter((c) => c.first && piFolds.get(c.id));
		const shared = resolve(batch[0].name);
		const rows = [await row(shared, batch[0]), await row(shared, batch[1])];
		for (const [i, component] of rows.entries()) {
			const drawn = lines(component);
			const text = foldedRowText({ foldId: piFolds.get(batch[i].id) as string, first: true, summary: "" });
			expect(drawn.join("\n")).toContain(text);
			// At most Pi's default frame around it (spacer, padding): no call output.
			expect(drawn.length).toBeLessThanOrEqual(4);
		}
	});
});

/** Escape sequences of a pty capture (built from strings: control characters stay out of regex literals). */
const ESC = String.fromCharCode(27);
const BEL = String.fromCharCode(7);
const OSC = new RegExp(`${ESC}\\][^${BEL}${ESC}]*(${BEL}|${ESC}\\\\)`, "g");
const SGR = new RegExp(`${ESC}\\[[0-9;]*m`, "g");
const CSI = new RegExp(`${ESC}\\[[0-9;?<>=]*[ -/]*[@-~]`, "g");
const OTHER = new RegExp(`${ESC}[@-_]`, "g");

/** The screen text of a pty capture: colours dropped, cursor moves as line breaks, each line once. */
function screenLines(raw: string): string[] {
	const s = raw.replace(OSC, "").replace(SGR, "").replace(CSI, "\n").replace(OTHER, "");
	return [
		...new Set(
			s
				.replace(/\r/g, "\n")
				.split("\n")
				.map((l) => l.trimEnd()),
		),
	].filter((l) => l.trim() !== "");
}

const hasScript = spawnSync("script", ["--version"]).status === 0;

describe.skipIf(!hasScript)("in the real interactive TUI, under a pty (`script`)", () => {
	it("shows the fold bar and the folded batches as muted rows", () => {
		const env = { ...childEnv(piEnv()), TERM: "xterm-256color", PI_FOLD_UI_SHUTDOWN: "1" };
		const out = join(tempDir("tui"), "screen.txt");
		const host = `${REPO_ROOT}test/hosts/fold-ui-host.ts`;
		const sessions = tempDir("tui-sessions");
		const command = [
			"stty cols 140 rows 60;",
			JSON.stringify(process.execPath),
			JSON.stringify(PI_CLI),
			`-e ${JSON.stringify(host)} --provider ${UI_HOST_PROVIDER} --model ${UI_HOST_MODEL}`,
			`--session-dir ${JSON.stringify(sessions)} ${JSON.stringify(WORKLOAD_PROMPT)}`,
		].join(" ");
		// The host ends the TUI once the run settles; the timeout only guards a hang.
		execFileSync("timeout", ["40", "script", "-qfec", command, out], { cwd: WORKLOAD_ROOT, env, stdio: "ignore" });
		const screen = screenLines(readFileSync(out, "utf8"));
		const bars = screen.filter((l) => /^\s*pi-fold ▕/.test(l));
		expect(bars.length, screen.slice(-40).join("\n")).toBeGreaterThan(0);
		expect(bars.some((l) => /folded [0-9.]+k? \([1-9]\)/.test(l))).toBe(true);
		const rows = screen.filter((l) => /⊟ folded in f[0-9a-f]{10} · /.test(l));
		expect(rows.length, screen.slice(-40).join("\n")).toBeGreaterThan(0);
		// The rows name folds the session really committed: read them back from its records.
		const sessionFile = execFileSync("find", [sessions, "-name", "*.jsonl"], { encoding: "utf8" })
			.trim()
			.split("\n")[0];
		const committed = new Set(
			readFileSync(sessionFile, "utf8")
				.split("\n")
				.filter(Boolean)
				.flatMap((l) => {
					const e = JSON.parse(l) as { type?: string; customType?: string; data?: unknown };
					const isRecord = e.type === "custom" && e.customType === RECORD_TYPE;
					return isRecord ? (JSON.stringify(e.data).match(/f[0-9a-f]{10}/g) ?? []) : [];
				}),
		);
		for (const r of rows) expect(committed.has(/⊟ folded in (f[0-9a-f]{10})/.exec(r)?.[1] as string), r).toBe(true);
	}, 300_000);
});
