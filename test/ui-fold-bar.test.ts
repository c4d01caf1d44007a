// The fold bar and the window composition behind it. In-process: a real Pi AgentSession (faux
// provider, offline) runs the scripted workload with pi-fold registered and a small serving budget,
// bound to a recording UI in "tui" mode so the bar's handlers run; an observer loaded after pi-fold
// reads the composition at every turn boundary next to Pi's own preview of the next request. Out of
// process: the real `pi` CLI in RPC mode, where the bar reaches the client as JSON lines.
import { spawn } from "node:child_process";
import type {
	ContextEditEntry,
	ExtensionAPI,
	ExtensionContext,
	ProjectedSessionEntry,
	Theme,
} from "@earendil-works/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { makeSession, piEnv, removeTempDirs, type TestSession, tempDir } from "../harness/pi-harness.ts";
import { WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "../harness/workload.ts";
import { type PiFold, registerPiFold } from "../src/index.ts";
import { estimateMessages, estimateRequest } from "../src/meter/estimate.ts";
import {
	CompositionCache,
	PART_NAMES,
	type WindowComposition,
	windowComposition,
} from "../src/operations/composition.ts";
import type { FoldRuntime } from "../src/runtime/runtime.ts";
import {
	BAR_CELLS,
	FOLD_BAR_KEY,
	foldBarLines,
	formatTokens,
	MAX_LINE_WIDTH,
	unavailableLines,
} from "../src/ui/fold-bar.ts";
import { RECEIPT_TYPE } from "../src/vocabulary.ts";
import { childEnv, PI_CLI, REPO_ROOT } from "./helpers/pi-cli.ts";
import { type RecordedWidget, recordingUi } from "./helpers/recording-ui.ts";
import { UI_HOST_BUDGET, UI_HOST_MODEL, UI_HOST_PROVIDER } from "./hosts/fold-ui-host.ts";

const core = nodeCore();
const STAGES = 16;
/** As in runtime.test.ts: small enough that 16 stages need several commits, and consolidation runs. */
const BUDGET = 14_000;
const CONSOLIDATE_AFTER = 3;

afterAll(removeTempDirs);

interface Boundary {
	turn: number;
	composition: WindowComposition;
	/** Estimate of Pi's preview of the next request, without the entries this boundary proposes. */
	preview: number;
	/** The same for the proposed entries (a commit's receipt and notice), which are not in the lattice yet. */
	proposed: number;
	commitsSoFar: number;
	/** The bar as last set when this boundary's handlers had run. */
	bar: string[] | undefined;
}

describe("the window composition of a real session, and the bar drawn from it", () => {
	let h: TestSession;
	let rt: FoldRuntime;
	const boundaries: Boundary[] = [];
	const recorder = recordingUi();
	const widgets = recorder.widgets;
	let atSessionStart: RecordedWidget[] = [];
	/**
	 * pi-fold's turn_end handlers: Pi rebuilds a boundary's context (its whole branch) around each
	 * one, so pi-fold listens only while it has something to append. Counted: how many are registered
	 * at once (at most one), and the turns at which one ran.
	 */
	let turnEndListening = 0;
	let mostListening = 0;
	const piFoldTurns = new Set<number>();
	const counting = (pi: ExtensionAPI): ExtensionAPI =>
		new Proxy(pi, {
			get(target, key) {
				const value = Reflect.get(target, key, target);
				if (key !== "on") return typeof value === "function" ? value.bind(target) : value;
				return (event: string, handler: (...args: unknown[]) => unknown) => {
					const on = target.on as (e: string, h: unknown) => () => void;
					if (event !== "turn_end") return on(event, handler);
					mostListening = Math.max(mostListening, ++turnEndListening);
					const off = on(event, (e: { turnIndex: number }, ctx: unknown) => {
						piFoldTurns.add(e.turnIndex);
						return handler(e, ctx);
					});
					return () => {
						turnEndListening--;
						off();
					};
				};
			},
		});

	beforeAll(async () => {
		let fold: PiFold | undefined;
		const cache = new CompositionCache();
		/** A turn's end as pi-fold left it: `projection` is Pi's preview of the next request. */
		const observe = (turn: number, ctx: ExtensionContext, projection: readonly ProjectedSessionEntry[]) => {
			const r = fold?.runtime.get();
			const composition = r && windowComposition(r, cache, ctx.model);
			if (!r || !composition) throw new Error(`no composition at turn ${turn}`);
			const inSession = projection.filter((pe) => ctx.sessionManager.getEntry(pe.sourceEntry.id));
			const proposed = projection.filter((pe) => !ctx.sessionManager.getEntry(pe.sourceEntry.id));
			boundaries.push({
				turn,
				composition,
				preview: estimateRequest(
					core,
					inSession.flatMap((pe) => pe.messages),
				),
				proposed: estimateRequest(
					core,
					proposed.flatMap((pe) => pe.messages),
				),
				commitsSoFar: r.commits.length,
				bar: widgets.filter((w) => w.key === FOLD_BAR_KEY).at(-1)?.lines,
			});
		};
		const observer = (pi: ExtensionAPI) => {
			// Loaded after pi-fold, so its handlers run after pi-fold's. Every turn is seen where pi-fold
			// has read the turn's end back: at the next turn_start (or agent_end), after a boundary's batch
			// is in the session (a commit's edits and receipt included), or after a quiet end.
			let turn = -1;
			pi.on("turn_end", (e) => {
				turn = e.turnIndex;
			});
			const seen = (_e: unknown, ctx: ExtensionContext) => {
				if (turn < 0) return;
				observe(turn, ctx, ctx.sessionManager.buildSessionProjection().entries);
				turn = -1;
			};
			pi.on("turn_start", seen);
			pi.on("agent_end", seen);
		};
		h = await makeSession({
			cwd: WORKLOAD_ROOT,
			persist: true,
			settings: { compaction: { enabled: false } },
			extensions: [
				(pi) => {
					fold = registerPiFold(counting(pi), {
						providerInputBudget: BUDGET,
						thresholds: { consolidateAfter: CONSOLIDATE_AFTER },
					});
				},
				observer,
			],
		});
		// The harness bound without a UI (hasUI false: the bar stays off); bind again as the TUI would.
		await h.session.bindExtensions({
			uiContext: recorder.ui,
			mode: "tui",
			onError: (e) => void h.extensionErrors.push(e),
		});
		atSessionStart = [...widgets];
		h.script(workloadSteps(STAGES, { seed: 11 }));
		await h.session.prompt(WORKLOAD_PROMPT);
		const r = fold?.runtime.get();
		if (!r) throw new Error(`no runtime: ${fold?.runtime.reason()}`);
		rt = r;
	});
	afterAll(() => h?.dispose());

	it("listens at turn_end only at the turns it appends at, with one handler; the bar follows every turn", () => {
		expect(mostListening).toBe(1);
		// Every commit's turn, and not every turn: the others end quietly, with no boundary of pi-fold's.
		for (const c of rt.commits) expect(piFoldTurns.has(c.turn)).toBe(true);
		expect(piFoldTurns.size).toBeLessThan(STAGES + 1);
		// ...and the bar still follows every turn (the last test checks what it says).
		expect(boundaries.every((b) => b.bar !== undefined)).toBe(true);
	});

	it("runs cleanly, with commits and a consolidation", () => {
		expect(h.extensionErrors).toEqual([]);
		expect(rt.status().problems).toEqual([]);
		expect(boundaries).toHaveLength(STAGES + 1);
		expect(rt.commits.length).toBeGreaterThanOrEqual(3);
		expect(rt.commits.some((c) => c.consolidated.length > 0)).toBe(true);
	});

	it("at every boundary, the parts add up to exactly what Pi will send next, by the same estimator", () => {
		for (const b of boundaries) {
			const c = b.composition;
			const sum = PART_NAMES.reduce((n, name) => n + c.parts[name], 0);
			expect(sum, `turn ${b.turn}`).toBe(c.total);
			// The lattice's window is Pi's projection (the commit's edits included: Pi appended them),
			// each item estimated as the message Pi projects for it: equal, not close.
			expect(c.total, `turn ${b.turn}`).toBe(b.preview);
			expect(c.budget).toBe(BUDGET);
		}
	});

	it("folded and deep parts appear with the commits and consolidations, pending ones with the marks", () => {
		let sawPending = false;
		for (const b of boundaries) {
			const { parts, counts } = b.composition;
			const at = `turn ${b.turn}`;
			if (b.commitsSoFar === 0) {
				expect(parts.folded + parts.deep, at).toBe(0);
				expect(counts.visibleFolds, at).toBe(0);
			} else {
				// Nothing expands in this run: once folded, the window keeps showing briefs.
				expect(parts.folded + parts.deep, at).toBeGreaterThan(0);
				expect(counts.visibleFolds, at).toBeGreaterThan(0);
			}
			expect(parts.deep > 0, at).toBe(counts.deepFolds > 0);
			// The frontier marks raw spans only: a mark holds raw entries exactly when one exists.
			expect(parts.pending > 0, at).toBe(counts.pendingMarks > 0);
			if (counts.pendingMarks > 0) sawPending = true;
			expect(parts.raw, at).toBeGreaterThan(0);
			expect(parts.pinned, at).toBe(0);
		}
		expect(sawPending).toBe(true);
		const consolidatedAt = boundaries.findIndex((b) => b.composition.counts.deepFolds > 0);
		expect(consolidatedAt).toBeGreaterThan(0);
		expect(boundaries.slice(consolidatedAt).every((b) => b.composition.parts.deep > 0)).toBe(true);
	});

	it("the fold parts are what Pi's projection shows as briefs (an oracle from Pi's side)", () => {
		const sm = h.session.sessionManager;
		const edited = new Map<string, ContextEditEntry>();
		for (const e of sm.getBranch()) if (e.type === "context_edit") edited.set(e.targetId, e);
		const briefs = sm
			.buildSessionProjection()
			.entries.filter((pe) => edited.get(pe.sourceEntry.id)?.replacement)
			.flatMap((pe) => pe.messages);
		const final = windowComposition(rt, new CompositionCache(), h.session.model);
		expect(briefs.length).toBe(final?.counts.visibleFolds);
		expect((final?.parts.folded ?? 0) + (final?.parts.deep ?? 0)).toBe(
			estimateMessages(core, briefs).reduce((n, t) => n + t, 0),
		);
	});

	it("calibrated, it agrees with the runtime's own occupancy estimate of the same request", () => {
		for (const b of boundaries) {
			const c = b.composition;
			const occupancy = c.occupancy;
			if (!occupancy) throw new Error(`no occupancy at turn ${b.turn}`);
			// Both scale the estimator's count by the same calibration ratio: the runtime either extends
			// the provider's real usage by the appended messages times that ratio (real = estimate x ratio
			// of the calibrated request), or scales a rewritten window whole. At a commit its estimate also
			// holds the receipt it proposes, which is not an entry yet. Equal up to rounding, then: the
			// runtime rounds the real usage and the appended part apiece, the ratio is a quotient of
			// rounded counts, so the two sides may differ by up to one token per rounded term (2).
			const expected = (c.total + b.proposed) * c.ratio;
			expect(Math.abs(occupancy.tokens - expected), `turn ${b.turn}`).toBeLessThanOrEqual(2);
		}
	});

	it("estimates each entry and brief once: a second reading costs no estimator call", () => {
		const cache = new CompositionCache();
		const first = windowComposition(rt, cache, h.session.model);
		const spy = vi.spyOn(rt.core, "estimateTokensBatch");
		try {
			const second = windowComposition(rt, cache, h.session.model);
			expect(second).toEqual(first);
			expect(spy).not.toHaveBeenCalled();
		} finally {
			spy.mockRestore();
		}
	});

	it("the bar is set at session start and at boundaries, one line within the width, from the runtime's figures", () => {
		expect(atSessionStart.map((w) => w.key)).toEqual([FOLD_BAR_KEY]);
		expect(atSessionStart[0].lines?.[0]).toMatch(
			/^pi-fold ▕ +▏ 0% of 14k budget \(providerInputBudget; window [\d.]+k\) · raw 0$/,
		);
		for (const w of widgets) {
			expect(w.key).toBe(FOLD_BAR_KEY);
			for (const line of w.lines ?? []) expect(line.length).toBeLessThanOrEqual(MAX_LINE_WIDTH);
		}
		for (const b of boundaries) {
			const { composition: c, turn } = b;
			const line = b.bar?.join("\n") ?? "";
			const share = (c.occupancy?.tokens ?? 0) / BUDGET;
			expect(line, `turn ${turn}`).toMatch(
				new RegExp(
					`▏ ${Math.round(share * 100)}% of ${formatTokens(BUDGET)} budget \\(providerInputBudget; window [\\d.]+k\\) · `,
				),
			);
			const folded = c.counts.visibleFolds - c.counts.deepFolds;
			if (folded > 0) expect(line, `turn ${turn}`).toMatch(new RegExp(`folded [0-9.]+k? \\(${folded}\\)`));
			else expect(line, `turn ${turn}`).not.toContain("folded");
			if (c.counts.deepFolds > 0) expect(line).toMatch(new RegExp(`deep [0-9.]+k? \\(${c.counts.deepFolds}\\)`));
			if (c.counts.pendingMarks > 0)
				expect(line).toMatch(new RegExp(`pending [0-9.]+k? \\(${c.counts.pendingMarks}\\)`));
			else expect(line).not.toContain("pending");
			// The bar's filled cells follow the share.
			const cells = (line.match(/▕(.*)▏/)?.[1] ?? "").replaceAll(" ", "").length;
			expect(cells, `turn ${turn}`).toBe(Math.min(BAR_CELLS, Math.round(share * BAR_CELLS)));
		}
		// Only changes are sent: no two consecutive settings are equal.
		for (let i = 1; i < widgets.length; i++) expect(widgets[i].lines).not.toEqual(widgets[i - 1].lines);
	});
});

/** A composition to lay out, with every part present. */
function composition(over: Partial<WindowComposition> = {}): WindowComposition {
	return {
		parts: { deep: 3_100, folded: 12_000, pending: 20_000, raw: 80_000, pinned: 2_000 },
		total: 117_100,
		ratio: 1,
		budget: 200_000,
		occupancy: null,
		counts: { visibleFolds: 7, deepFolds: 1, folds: 9, pendingMarks: 2, pins: 1 },
		...over,
	};
}

describe("the bar's layout", () => {
	it("writes tokens short", () => {
		expect([0, 999, 1000, 3_140, 9_960, 12_400, 200_000, 1_250_000].map(formatTokens)).toEqual([
			"0",
			"999",
			"1k",
			"3.1k",
			"10k",
			"12k",
			"200k",
			"1.3M",
		]);
	});

	it("names every part with its count, in bar order, wrapping only what does not fit", () => {
		const lines = foldBarLines(composition());
		const text = lines.join(" · ").replace(/ +/g, " ");
		expect(text).toContain(
			"59% of 200k budget · deep 3.1k (1) · folded 12k (6) · pending 20k (2) · raw 80k · pinned 2k",
		);
		for (const line of lines) expect(line.length).toBeLessThanOrEqual(MAX_LINE_WIDTH);
		expect(lines.length).toBeLessThanOrEqual(2);
		// 59% of 12 cells is 7: deep, folded, pending, raw, pinned by largest remainder.
		expect(lines[0]).toContain(`▕${"▓".repeat(1)}${"▒".repeat(1)}${"░".repeat(5)}     ▏`);
	});

	it("leaves out empty parts but always shows raw, and scales to the measured occupancy when asked", () => {
		const c = composition({
			parts: { deep: 0, folded: 0, pending: 0, raw: 5_000, pinned: 0 },
			total: 5_000,
			ratio: 1.2,
			budget: 10_000,
			occupancy: { tokens: 8_000, budget: 10_000, share: 0.8 },
			counts: { visibleFolds: 0, deepFolds: 0, folds: 0, pendingMarks: 0, pins: 0 },
		});
		expect(foldBarLines(c)).toEqual([`pi-fold ▕${"░".repeat(7)}${" ".repeat(5)}▏ 60% of 10k budget · raw 6k`]);
		expect(foldBarLines(c, { measured: true })).toEqual([`pi-fold ▕${"░".repeat(10)}  ▏ 80% of 10k budget · raw 8k`]);
	});

	it("fills the bar when over budget, and says so when there is no budget", () => {
		const over = foldBarLines(composition({ budget: 50_000 }));
		expect(over[0]).toContain(`▏ 234% of 50k`);
		expect(over[0].match(/▕(.*)▏/)?.[1]).not.toContain(" ");
		expect(foldBarLines(composition({ budget: null }))[0]).toMatch(/^pi-fold ▕ {12}▏ ~117k \(no budget\) · deep/);
		expect(unavailableLines("off: the core did not load")).toEqual([
			`pi-fold ▕${" ".repeat(12)}▏ off: the core did not load`,
		]);
		expect(unavailableLines("x".repeat(200))[0].length).toBe(MAX_LINE_WIDTH);
	});

	it("colours with the theme's tokens, the layout measured on the text alone", () => {
		const theme = { fg: (c: string, s: string) => `<${c}>${s}</>` } as unknown as Theme;
		const plain = foldBarLines(composition());
		const coloured = foldBarLines(composition(), { theme });
		expect(coloured.map((l) => l.replace(/<\/?[a-zA-Z]*>/g, ""))).toEqual(plain);
		expect(coloured[0]).toContain("<accent>deep 3.1k (1)</>");
		expect(coloured[0]).toContain("<warning>pending 20k (2)</>");
		expect(coloured[0]).toContain("<muted>pi-fold</>");
	});
});

/** Run `pi --mode rpc` with the UI host; send one prompt, close stdin once the run settles. */
function runRpc(
	cwd: string,
	args: readonly string[],
	env: NodeJS.ProcessEnv,
): Promise<{ records: Rec[]; stderr: string }> {
	return new Promise((resolve, reject) => {
		const child = spawn(process.execPath, [PI_CLI, "--mode", "rpc", ...args], { cwd, env });
		const records: Rec[] = [];
		let buffered = "";
		let stderr = "";
		const timer = setTimeout(() => child.kill("SIGKILL"), 50_000);
		child.stdout.on("data", (chunk: Buffer) => {
			buffered += chunk.toString("utf8");
			for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
				const line = buffered.slice(0, nl);
				buffered = buffered.slice(nl + 1);
				try {
					const rec = JSON.parse(line) as Rec;
					records.push(rec);
					if (rec.type === "agent_settled") child.stdin.end();
				} catch {
					// Not a record (Pi reserves stdout for records; tolerate anything else).
				}
			}
		});
		child.stderr.on("data", (chunk: Buffer) => {
			stderr += chunk.toString("utf8");
		});
		child.on("error", reject);
		child.on("close", () => {
			clearTimeout(timer);
			resolve({ records, stderr });
		});
		child.stdin.write(`${JSON.stringify({ id: "p1", type: "prompt", message: WORKLOAD_PROMPT })}\n`);
	});
}

type Rec = {
	type?: string;
	method?: string;
	widgetKey?: string;
	widgetLines?: string[];
	entry?: { type?: string; customType?: string };
};

describe("in Pi's RPC mode (the real CLI)", () => {
	it("the bar reaches the client as extension_ui_request lines that follow the folds", async () => {
		const host = `${REPO_ROOT}test/hosts/fold-ui-host.ts`;
		const args = ["-e", host, "--provider", UI_HOST_PROVIDER, "--model", UI_HOST_MODEL];
		args.push("--session-dir", tempDir("rpc-sessions"));
		const { records, stderr } = await runRpc(WORKLOAD_ROOT, args, childEnv(piEnv()));
		expect(
			records.some((r) => r.type === "agent_settled"),
			stderr,
		).toBe(true);
		const bars = records.flatMap((r, i) =>
			r.type === "extension_ui_request" && r.method === "setWidget" && r.widgetKey === FOLD_BAR_KEY
				? [{ i, text: (r.widgetLines ?? []).join("\n") }]
				: [],
		);
		expect(bars.length, stderr).toBeGreaterThan(2);
		for (const b of bars)
			for (const line of b.text.split("\n")) expect(line.length).toBeLessThanOrEqual(MAX_LINE_WIDTH);
		// Plain text for RPC clients: no escape codes.
		for (const b of bars) expect(b.text).not.toContain("\x1b");
		expect(bars[0].text).toMatch(
			new RegExp(
				`^pi-fold ▕ +▏ 0% of ${formatTokens(UI_HOST_BUDGET)} budget \\(providerInputBudget; window [\\d.]+k\\) · raw 0$`,
			),
		);
		// Per turn, in record order: from its turn_start, the bar pi-fold's boundary sets at its turn_end
		// and the entries that boundary appends (a commit's edits and receipt), or the bar it sets as the
		// turn ends quietly (in the next turn_start's handlers, before Pi sends that event on).
		const turns: { bar?: string; commit: boolean }[] = [{ commit: false }];
		for (const [i, r] of records.entries()) {
			const turn = turns[turns.length - 1];
			const bar = bars.find((x) => x.i === i);
			if (bar) turn.bar = bar.text;
			if (r.type === "entry_appended" && r.entry?.customType === RECEIPT_TYPE) turn.commit = true;
			if (r.type === "turn_start") turns.push({ commit: false });
		}
		const firstCommit = turns.findIndex((t) => t.commit);
		expect(firstCommit, stderr).toBeGreaterThan(0);
		// No bar names a fold before the first commit; the commit's own boundary shows it (its folds
		// are in the lattice when the bar is drawn, while Pi appends their edits right after).
		for (const t of turns.slice(0, firstCommit)) expect(t.bar ?? "").not.toMatch(/folded|deep/);
		expect(turns.slice(0, firstCommit).some((t) => /pending [0-9.]+k? \(1\)/.test(t.bar ?? ""))).toBe(true);
		expect(turns[firstCommit].bar).toMatch(/folded [0-9.]+k? \([1-9]\)/);
		// With consolidateAfter 3 the run consolidates: the last bar shows a deep fold.
		expect(bars.at(-1)?.text).toMatch(/deep [0-9.]+k? \([1-9]\)/);
	}, 300_000);
});
