// npm run bench:view — how long `pi-fold view` takes to show a session, as a person waits for it:
// from the command's start to its URL, to the page in headless Chromium with the chart and the fold
// tree drawn, and to native compaction's curve (the replay that runs beside the server). The
// browser is started before the clock (a person's is already open). Sessions: the repository's
// real fixture (2.4 MB, 484 requests, no folds), and one folded by pi-fold over the bundled
// workload (opening a fold: every object fetched and verified in the page). Several runs, medians;
// writes bench/results/view.json.
import { cpSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { chromium } from "playwright-core";
import { findChromium } from "../harness/chromium.ts";
import { FIXTURE_SESSION, hasFixture } from "../harness/fixture.ts";
import { makeSession, piEnv, removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { startView } from "../harness/view-server.ts";
import { WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "../harness/workload.ts";
import { registerPiFold } from "../src/index.ts";
import { machineNotes } from "./lib/harness.ts";
import { median } from "./lib/stats.ts";

const RUNS = 5;
/** The folded session's serving budget and window (small, so a 16-stage run commits several times). */
const BUDGET = 14_000;
const WINDOW = 22_384;

async function foldedSession(): Promise<string> {
	const h = await makeSession({
		cwd: WORKLOAD_ROOT,
		persist: true,
		contextWindow: WINDOW,
		settings: { compaction: { enabled: true, reserveTokens: 16_384, keepRecentTokens: 2000 } },
		extensions: [(pi) => void registerPiFold(pi, { providerInputBudget: BUDGET })],
	});
	try {
		h.script(workloadSteps(16, { seed: 11 }));
		await h.session.prompt(WORKLOAD_PROMPT);
		const file = h.session.sessionManager.getSessionFile();
		if (!file) throw new Error("no session file");
		const dir = tempDir("bench-view");
		cpSync(dirname(file), dir, { recursive: true });
		return join(dir, basename(file));
	} finally {
		h.dispose();
	}
}

interface Timing {
	urlMs: number;
	pageMs: number;
	nativeMs: number;
	openFoldMs?: number;
}

async function once(browser: import("playwright-core").Browser, file: string, args: string[]): Promise<Timing> {
	const env = { ...process.env, ...piEnv() };
	const t0 = performance.now();
	const view = await startView([file, ...args], env);
	const urlMs = performance.now() - t0;
	const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
	try {
		await page.goto(view.url);
		await page.waitForSelector(".chart");
		await page.waitForSelector(".tree, [data-empty]");
		const pageMs = performance.now() - t0;
		await page.waitForSelector('[data-native="ready"], [data-native="unavailable"]', { timeout: 300_000 });
		const nativeMs = performance.now() - t0;
		const first = await page.$("li[data-fold] .fold-open");
		let openFoldMs: number | undefined;
		if (first) {
			const t1 = performance.now();
			await first.click();
			await page.waitForSelector("#panel [data-summary]");
			openFoldMs = performance.now() - t1;
		}
		return { urlMs, pageMs, nativeMs, ...(openFoldMs === undefined ? {} : { openFoldMs }) };
	} finally {
		await page.close();
		await view.stop();
	}
}

function summary(runs: Timing[]) {
	const med = (k: keyof Timing) => {
		const xs = runs.map((r) => r[k]).filter((x): x is number => x !== undefined);
		return xs.length === 0 ? undefined : Math.round(median(xs));
	};
	return {
		runs: runs.length,
		medianMs: { url: med("urlMs"), page: med("pageMs"), native: med("nativeMs"), openFold: med("openFoldMs") },
	};
}

async function main(): Promise<void> {
	const lookup = await findChromium();
	if (!lookup.ok) throw new Error(`bench:view needs Chromium: ${lookup.reason}`);
	const browser = await chromium.launch({
		executablePath: lookup.executablePath,
		env: lookup.env,
		args: ["--no-sandbox"],
	});
	const sessions: Record<string, unknown> = {};
	try {
		const folded = await foldedSession();
		const plan: [string, string, string[]][] = [["folded", folded, ["--window", String(WINDOW)]]];
		if (hasFixture) plan.unshift(["fixture", FIXTURE_SESSION, []]);
		else console.log("bench:view: the session fixture is missing; only the folded session is measured");
		for (const [name, file, args] of plan) {
			const runs: Timing[] = [];
			for (let i = 0; i < RUNS; i++) runs.push(await once(browser, file, args));
			sessions[name] = { file: basename(file), ...summary(runs) };
			console.log(`${name}: ${JSON.stringify(summary(runs).medianMs)}`);
		}
	} finally {
		await browser.close();
		removeTempDirs();
	}
	const result = {
		machine: machineNotes(),
		what: "ms from `pi-fold view` starting to: its URL, the page drawn (chart and tree), native compaction's curve; and opening a fold (every object verified)",
		sessions,
	};
	writeFileSync(new URL("./results/view.json", import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
}

await main();
