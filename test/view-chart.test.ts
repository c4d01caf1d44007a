// `pi-fold view`'s chart in headless Chromium (the browser test's): for a session Pi ran alone, what
// pi-fold would have done as `pi-fold replay` computes it (its commits, each request's window and
// cost, its peak, what it would have saved); for a pi-fold session, its own commits with the
// replay's native curve and costs beside them, the replay run with the session's own budget. And a
// long session stays readable: the axis sized by what is drawn in round steps, a line that dwarfs
// the bars capped and said so, commit labels that never overlap. PI_FOLD_CHART_SHOTS=<dir> saves each page.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { DEFAULT_COMPACTION_SETTINGS } from "@earendil-works/pi-coding-agent";
import { type Browser, chromium, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CORE_WASM_URL } from "../bindings/node.ts";
import { findChromium } from "../harness/chromium.ts";
import { piEnv, removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { type RunningView, startView } from "../harness/view-server.ts";
import { isNiceStep, labelsThatFit, niceAxis, tickLabel } from "../src/view/page/chart-scale.ts";
import { num, usd } from "../src/view/page/dom.ts";
import { pageHtml } from "../src/view/page-html.ts";
import type { CommitMark, NativeCurve, RequestPoint, ViewData } from "../src/view/view-data.ts";
import { childEnv } from "./helpers/pi-cli.ts";
import { copySession, FOLD_BUDGET, FOLD_WINDOW, recordedFold, recordPiAlone } from "./helpers/replay-recordings.ts";

const lookup = await findChromium();
if (!lookup.ok) console.warn(`[view-chart] skipped: ${lookup.reason}`);

/** Pi's compaction threshold as the view's replay assumes it (Pi's defaults): native's own figure. */
const NATIVE_THRESHOLD = FOLD_WINDOW - DEFAULT_COMPACTION_SETTINGS.reserveTokens;

const barOf = (r: RequestPoint) => Math.max(r.raw + r.pending + r.folded + r.summary, r.billed ?? 0);

async function json<T>(url: string): Promise<T> {
	return (await (await fetch(url)).json()) as T;
}

/** The axis: round steps, ticks at every step from 0 to the top, the top within a bound of what is drawn. */
async function expectReadableAxis(p: Page, drawnBesidesLines: number): Promise<void> {
	const top = Number(await p.getAttribute(".chart", "data-top"));
	const step = Number(await p.getAttribute(".chart", "data-step"));
	expect(isNiceStep(step), `step ${step}`).toBe(true);
	const ticks = await p.$$eval(".chart text.tick", (els) =>
		els.map((e) => [Number(e.getAttribute("data-value")), e.textContent ?? ""] as const),
	);
	expect(ticks.map(([v]) => v)).toEqual(Array.from({ length: Math.round(top / step) + 1 }, (_, k) => k * step));
	for (const [, label] of ticks) expect(label).toMatch(/^\d+(\.\d+)?[kM]?$/);
	// What else is drawn on the scale: the limit lines, and the "with nothing folded" line unless capped.
	const limits = await p.$$eval(".chart [data-tokens]:not(circle)", (els) =>
		els.map((e) => Number(e.getAttribute("data-tokens"))),
	);
	const capped = (await p.locator(".chart polyline.unfolded.capped").count()) === 1;
	const unfolded = Number(await p.getAttribute(".chart polyline.unfolded", "data-peak"));
	const drawn = Math.max(drawnBesidesLines, ...limits, capped ? 0 : unfolded);
	expect(top).toBeGreaterThanOrEqual(drawn);
	// At most 5 round steps from 1, 2, 2.5, 5 x 10^k: the step below needed more than 5, so top < 1.4 x (4% headroom).
	expect(top).toBeLessThanOrEqual(1.5 * drawn);
}

/** The commit labels' boxes, left to right: none overlaps the next. */
async function expectLabelsApart(p: Page): Promise<number> {
	const boxes = (
		await p.$$eval(".chart .commit-label", (els) =>
			els.map((e) => {
				const r = e.getBoundingClientRect();
				return [r.left, r.right] as const;
			}),
		)
	).sort((a, b) => a[0] - b[0]);
	for (let k = 1; k < boxes.length; k++) expect(boxes[k][0], `label ${k + 1}`).toBeGreaterThan(boxes[k - 1][1]);
	return boxes.length;
}

describe("the chart's scale", () => {
	it("covers any maximum in at most 5 round steps, the top under 1.5x the maximum", () => {
		// Every size from 1 to 10M on a geometric grid: the rule holds at every decade and in between.
		for (let max = 1; max < 1e7; max *= 1.037) {
			const { top, step } = niceAxis(max);
			expect(isNiceStep(step), `max ${max}: step ${step}`).toBe(true);
			expect(top / step).toBeLessThanOrEqual(5);
			expect(top).toBeGreaterThanOrEqual(max);
			expect(top, `max ${max}`).toBeLessThan(1.5 * max + 1);
		}
		expect([0, 500, 2_500, 50_000, 1_250_000].map(tickLabel)).toEqual(["0", "500", "2.5k", "50k", "1.25M"]);
	});

	it("keeps the labels that start past the last kept one's end", () => {
		const spans = [0, 5, 20, 24, 40].map((x) => ({ x, width: 12 }));
		expect(labelsThatFit(spans, 4)).toEqual([true, false, true, false, true]);
	});
});

/** Save the page to PI_FOLD_CHART_SHOTS/<name>.png when asked (to look at the chart). */
async function shot(p: Page, name: string): Promise<void> {
	const dir = process.env.PI_FOLD_CHART_SHOTS;
	if (dir) await p.screenshot({ path: join(dir, `${name}.png`) });
}

describe.skipIf(!lookup.ok)("the view's chart in headless Chromium", () => {
	let browser: Browser;
	let alone: RunningView;
	let folded: RunningView;

	beforeAll(async () => {
		if (!lookup.ok) return;
		const [piAlone, fold] = await Promise.all([recordPiAlone(24), recordedFold()]);
		const window = ["--window", String(FOLD_WINDOW)];
		[alone, folded] = await Promise.all([
			startView([copySession(piAlone.file, "view-alone"), ...window], childEnv(piEnv())),
			startView([copySession(fold.file, "view-folded"), ...window], childEnv(piEnv())),
		]);
		browser = await chromium.launch({
			executablePath: lookup.executablePath,
			env: lookup.env,
			args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
			timeout: 120_000,
		});
	}, 600_000);

	afterAll(async () => {
		await browser?.close();
		await Promise.all([alone?.stop(), folded?.stop()]);
		removeTempDirs();
	});

	async function replayed(url: string): Promise<{ p: Page; data: ViewData; curve: NativeCurve }> {
		const p = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
		await p.goto(url);
		await p.waitForSelector('.legend [data-native="ready"]', { timeout: 240_000 });
		const curve = await json<NativeCurve>(`${url}api/native`);
		const data = await json<ViewData>(`${url}api/view`);
		expect(curve.state).toBe("ready");
		return { p, data, curve };
	}

	it("a session Pi ran alone shows pi-fold's commits, each request's window and cost, its peak and the saving", async () => {
		const { p, data, curve } = await replayed(alone.url);
		const n = data.requests.length;
		expect(data.commits).toEqual([]);
		expect(curve.fold.prompts).toHaveLength(n);
		// Its commits, marked where the replay made them.
		const commits = curve.fold.rewrites.filter((c) => c.request < n);
		expect(commits.length).toBeGreaterThan(0);
		expect(await p.locator(".chart line.commit.replayed").count()).toBe(commits.length);
		expect(await p.locator(".chart line.commit:not(.replayed)").count()).toBe(0);
		// The window it would have sent each request: a point per request; and what each would have cost.
		const points = (await p.getAttribute(".chart polyline.fold", "points")) ?? "";
		expect(points.trim().split(" ")).toHaveLength(n);
		const titles = await p.$$eval(".chart .bar > title", (els) => els.map((e) => e.textContent ?? ""));
		expect(titles).toHaveLength(n);
		titles.forEach((t, i) => {
			expect(t).toContain(`pi-fold (replayed): ${num(curve.fold.prompts[i])} tokens, ${usd(curve.fold.costs[i])}`);
			expect(t).toContain(`native compaction (replayed): ${num(curve.native.prompts[i])} tokens`);
		});
		// Its peak, marked on the curve.
		expect(Number(await p.getAttribute(".chart circle.peak.fold", "data-tokens"))).toBe(
			Math.max(...curve.fold.prompts),
		);
		// The legend: each line with its own figures. Native's threshold is the window minus its reserve.
		const foldKey = (await p.textContent('.legend [data-fold="replayed"]')) ?? "";
		expect(foldKey).toContain(`serving budget ${num(curve.budget)}`);
		const after = curve.fold.rewrites.length - commits.length;
		expect(foldKey).toContain(
			`${curve.fold.rewrites.length} commits (marks c1, c2…${after > 0 ? `; ${after} after the last request` : ""})`,
		);
		expect(foldKey).toContain(`peak ${num(curve.fold.peak)}, ${usd(curve.fold.cost)}`);
		const nativeKey = (await p.textContent('.legend [data-native="ready"]')) ?? "";
		expect(nativeKey).toContain(
			`compacts above ${num(NATIVE_THRESHOLD)} (window ${num(FOLD_WINDOW)} minus reserveTokens ${num(DEFAULT_COMPACTION_SETTINGS.reserveTokens)})`,
		);
		expect(nativeKey).toContain(`peak ${num(curve.native.peak)}, ${usd(curve.native.cost)}`);
		expect(nativeKey).not.toContain("budget");
		// One line says what pi-fold would have saved, from the two arms' costs.
		const savings = p.locator(".savings");
		expect(Number(await savings.getAttribute("data-fold-cost"))).toBe(curve.fold.cost);
		expect(Number(await savings.getAttribute("data-native-cost"))).toBe(curve.native.cost);
		const said = (await savings.textContent()) ?? "";
		expect(said).toContain(`for ${usd(curve.fold.cost)} against ${usd(curve.native.cost)} with native compaction`);
		const saved = curve.native.cost - curve.fold.cost;
		expect(said).toContain(saved >= 0 ? `${usd(saved)} saved` : `${usd(-saved)} more`);
		// Dollars so far, under each arm: each ends at its arm's cost, on an axis of round steps.
		for (const [cls, arm] of [
			["native", curve.native],
			["fold", curve.fold],
		] as const) {
			const total = Number(await p.getAttribute(`.cost-chart polyline.${cls}`, "data-total"));
			expect(Math.abs(total - arm.cost)).toBeLessThan(1e-9);
			expect(await p.textContent(`.cost-chart .spent-label.${cls}`)).toContain(usd(arm.cost));
		}
		expect(isNiceStep(Number(await p.getAttribute(".cost-chart", "data-step")))).toBe(true);
		expect(Number(await p.getAttribute(".cost-chart", "data-top"))).toBeGreaterThanOrEqual(
			Math.max(curve.native.cost, curve.fold.cost),
		);
		// Sized by what is drawn.
		const drawn = Math.max(...data.requests.map(barOf), ...curve.native.prompts, ...curve.fold.prompts);
		await expectReadableAxis(p, drawn);
		await expectLabelsApart(p);
		await shot(p, "alone");
		await p.close();
	}, 600_000);

	it("a pi-fold session keeps its own commits, replayed with the budget it ran with, native's curve and costs beside", async () => {
		const { p, data, curve } = await replayed(folded.url);
		// The replay ran with the session's budget, so it sends nothing past the window the live run never sent.
		expect(curve.budget).toBe(FOLD_BUDGET);
		expect(curve.fold.overWindow).toBe(0);
		expect(curve.fold.rewrites.map((c) => c.request)).toEqual(data.commits.map((c) => c.request));
		// The session's own commits are the subject: no replayed marks, no replayed pi-fold curve.
		expect(await p.locator(".chart line.commit:not(.replayed)").count()).toBe(data.commits.length);
		expect(await p.locator(".chart line.commit.replayed").count()).toBe(0);
		expect(await p.locator(".chart polyline.fold").count()).toBe(0);
		expect(await p.locator(".chart polyline.native").count()).toBe(1);
		const nativeKey = (await p.textContent('.legend [data-native="ready"]')) ?? "";
		expect(nativeKey).toContain(`compacts above ${num(NATIVE_THRESHOLD)}`);
		const said = (await p.textContent(".savings")) ?? "";
		expect(said).toMatch(/^With pi-fold these \d+ requests cost \$/);
		expect(said).toContain(
			`cost ${usd(curve.fold.cost)} (replayed with the session's budget) against ${usd(curve.native.cost)}`,
		);
		const drawn = Math.max(...data.requests.map(barOf), ...curve.native.prompts);
		await expectReadableAxis(p, drawn);
		await expectLabelsApart(p);
		await shot(p, "folded");
		await p.close();
	}, 600_000);

	it("a long session stays readable: a dwarfing line capped and said so, round ticks, labels thinned apart", async () => {
		// 96 requests and 63 commits, the shape a real session gives (drawn from its numbers, not a run):
		// bars under 20k while the window with nothing folded grows to 377k.
		const n = 96;
		const requests: RequestPoint[] = Array.from({ length: n }, (_, i) => ({
			entryId: `e${i}`,
			raw: 4_000 + ((i * 7919) % 9_000),
			pending: i % 3 === 0 ? 1_500 : 0,
			folded: i > 2 ? 2_500 : 0,
			summary: 0,
			hidden: Math.max(0, Math.round((377_000 * i) / (n - 1)) - (4_000 + ((i * 7919) % 9_000))),
		}));
		const commits: CommitMark[] = Array.from({ length: 63 }, (_, k) => ({
			request: 2 + Math.floor((k * 93) / 63),
			entryId: `c${k}`,
			folds: [`f${k}`],
			before: 18_000,
			after: 9_000,
			budget: 18_000,
		}));
		for (const r of requests) r.budget = 18_000;
		const arm = (scale: number) => {
			const prompts = requests.map((_, i) => Math.round(scale * (6_000 + ((i * 104729) % 12_000))));
			const costs = prompts.map((t) => t / 1e6);
			return {
				prompts,
				costs,
				cost: costs.reduce((a, b) => a + b, 0),
				peak: Math.max(...prompts),
				rewrites: [],
				overWindow: 0,
			};
		};
		const native: NativeCurve = {
			state: "ready",
			model: "anthropic/claude-sonnet-4-5",
			window: 200_000,
			budget: 183_616,
			budgetWhy: "Pi's compaction threshold: window 200,000 minus reserveTokens 16,384",
			threshold: 183_616,
			reserveTokens: 16_384,
			priceCard: "anthropic/claude-sonnet-4-5 (Pi's catalog)",
			native: arm(1.4),
			fold: arm(1),
			none: requests.map((r) => r.raw + r.hidden),
		};
		const view: ViewData = {
			file: "long.jsonl",
			sessionId: "long",
			version: "test",
			requests,
			commits,
			folds: [],
			pinned: [],
			notes: [],
		};
		const file = join(tempDir("view-long"), "view.html");
		const wasm = readFileSync(CORE_WASM_URL).toString("base64");
		writeFileSync(file, pageHtml({ mode: "file", view, native, wasm, objects: {}, records: {} }));
		const p = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
		await p.goto(pathToFileURL(file).href);
		await p.waitForSelector('.legend [data-native="ready"]');
		// The line that dwarfs the bars is capped, and the legend says up to where it goes.
		expect(await p.locator(".chart polyline.unfolded.capped").count()).toBe(1);
		const peak = Math.max(...requests.map((r) => r.raw + r.pending + r.hidden));
		expect(await p.textContent(".legend [data-capped]")).toContain(`up to ${num(peak)}, capped`);
		// The budget and threshold of a 200k window, far above the bars, are left off and listed.
		expect(await p.textContent(".legend [data-off-scale]")).toContain("native compacts above 183,616");
		expect(await p.locator(".chart .threshold").count()).toBe(0);
		const drawn = Math.max(...requests.map(barOf), ...native.native.prompts);
		await expectReadableAxis(p, drawn);
		expect(Number(await p.getAttribute(".chart", "data-top"))).toBeLessThan(peak / 10);
		// Every commit has its mark; its label only where it fits, never over another.
		expect(await p.locator(".chart line.commit").count()).toBe(commits.length);
		const labels = await expectLabelsApart(p);
		expect(labels).toBeGreaterThan(5);
		expect(labels).toBeLessThan(commits.length);
		await shot(p, "long");
		await p.close();
	}, 300_000);
});
