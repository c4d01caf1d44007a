// `pi-fold view` end to end: the real CLI serves a session pi-fold folded inside a real Pi (faux
// model), the page runs in the headless Chromium the browser test uses, and it is checked the way a
// person would: every committed fold in the tree, a fold opened shows its original text verified by
// the page's own Wasm SHA-256, a damaged object says it does not verify, search finds a folded line.
// The server: nothing without the token, nothing for another host name, nothing off loopback, and
// nothing written (the session could be open in Pi). PI_FOLD_SCREENSHOT=<file> saves the page.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { connect } from "node:net";
import { networkInterfaces } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { findChromium } from "../harness/chromium.ts";
import { piEnv, removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { CLI, launchViewBrowser, type RunningView, startView } from "../harness/view-server.ts";
import { readSessionFolds } from "../src/replay/session-folds.ts";
import { appendToSession, planUnfold, unfoldEntries } from "../src/replay/unfold-command.ts";
import type { CommittedFold } from "../src/session/journal.ts";
import { FoldStore } from "../src/store/index.ts";
import type { NativeCurve } from "../src/view/view-data.ts";
import { damageStored } from "./helpers/damage.ts";
import { FIXTURE, type FileLine, fileEntries, fixtureAvailable } from "./helpers/fixture-entries.ts";
import { childEnv, REPO_ROOT, run } from "./helpers/pi-cli.ts";
import { committedFolds, copySession, FOLD_BUDGET, FOLD_WINDOW, recordedFold } from "./helpers/replay-recordings.ts";

const lookup = await findChromium();
if (!lookup.ok) console.warn(`[view] skipped: ${lookup.reason}`);

/** Every file under `dir` with its size and modification time: what a read-only reader must leave alone. */
function snapshot(dir: string): string[] {
	return readdirSync(dir, { recursive: true, withFileTypes: true })
		.filter((e) => e.isFile())
		.map((e) => {
			const p = join(e.parentPath, e.name);
			const s = statSync(p);
			return `${p} ${s.size} ${s.mtimeMs}`;
		})
		.sort();
}

/** The text of a tool result's first content block. */
const resultText = (e: FileLine | undefined) =>
	String(((e?.message as { content?: { text?: string }[] } | undefined)?.content ?? [])[0]?.text ?? "");

/** A line of at least 24 characters of a tool result among `entryIds`, found nowhere else in the file's entries. */
function distinctiveLine(file: string, entryIds: readonly string[]): string {
	const entries = fileEntries(file);
	const byId = new Map(entries.map((e) => [e.id, e]));
	const others = entries.filter((e) => !entryIds.includes(e.id)).map((e) => JSON.stringify(e));
	for (const id of entryIds) {
		for (const line of resultText(byId.get(id)).split("\n")) {
			const t = line.trim();
			if (t.length >= 24 && !/["\\]/.test(t) && !others.some((o) => o.includes(t))) return t;
		}
	}
	throw new Error("no distinctive line in those entries");
}

/** A distinctive line of the k-th committed fold's originals, read from the store. */
function lineOfFold(file: string, k: number): string {
	const store = FoldStore.forSession({ sessionFile: file, sessionId: String(fileEntries(file)[0].id) }, nodeCore());
	const leaves = store.verifyFold(committedFolds(file)[k].record).leaves;
	return distinctiveLine(
		file,
		leaves.map((l) => l.entryId),
	);
}

/** Whether fold `f`'s record (read from the clean source) names `child` among its children. */
function holds(file: string, f: CommittedFold, child: string): boolean {
	const store = FoldStore.forSession({ sessionFile: file, sessionId: String(fileEntries(file)[0].id) }, nodeCore());
	try {
		return store.readRecord(f.record).children.some((c) => c.type === "fold" && c.id === child);
	} catch {
		return false;
	}
}

async function openFold(page: Page, id: string): Promise<string> {
	await page.click(`li[data-fold="${id}"] .fold-open`);
	await page.waitForSelector("#panel [data-summary]");
	return (await page.getAttribute("#panel [data-summary]", "data-summary")) ?? "";
}

describe.skipIf(!lookup.ok)("pi-fold view in headless Chromium", () => {
	let browser: Browser;
	let source: string;
	let clean: string;
	let damaged: string;
	let damagedFold: string;
	let damagedEntry: string;
	let damagedRecord: CommittedFold;
	let view: RunningView;
	let broken: RunningView;
	const outside: string[] = [];
	let before: string[];

	beforeAll(async () => {
		if (!lookup.ok) return;
		source = (await recordedFold()).file;
		clean = copySession(source, "view-session");
		damaged = copySession(source, "view-session");
		const sessionId = String(fileEntries(damaged)[0].id);
		// The damaged object: the first leaf of the first fold a commit made.
		const store = FoldStore.forSession({ sessionFile: damaged, sessionId }, nodeCore());
		const first = committedFolds(damaged)[0];
		const leaf = store.readRecord(first.record).children.find((c) => c.type === "leaf");
		if (leaf?.type !== "leaf") throw new Error("the first fold has no leaf");
		damageStored(damaged, sessionId, "object", leaf.hash);
		damagedFold = first.id;
		damagedEntry = leaf.entryId;
		// And the record of a later fold.
		damagedRecord = committedFolds(damaged)[3];
		damageStored(damaged, sessionId, "record", damagedRecord.record);
		before = snapshot(dirname(clean));
		const window = ["--window", String(FOLD_WINDOW)];
		[view, broken] = await Promise.all([
			startView([clean, ...window], childEnv(piEnv())),
			startView([damaged, ...window], childEnv(piEnv())),
		]);
		browser = await launchViewBrowser(lookup);
	}, 600_000);

	afterAll(async () => {
		await browser?.close();
		await Promise.all([view?.stop(), broken?.stop()]);
		removeTempDirs();
	});

	async function page(url: string): Promise<Page> {
		const p = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
		const origin = new URL(url).origin;
		p.on("request", (r) => {
			if (!r.url().startsWith(origin) && !r.url().startsWith("data:")) outside.push(r.url());
		});
		await p.goto(url);
		await p.waitForSelector(".chart");
		return p;
	}

	it("the tree shows every committed fold; one opened shows its original text, verified in the page", async () => {
		const p = await page(view.url);
		const committed = committedFolds(clean).map((f) => f.id);
		expect(committed.length).toBeGreaterThan(2);
		const rows = await p.$$eval("li[data-fold]", (els) =>
			els.map((e) => [e.getAttribute("data-fold"), e.getAttribute("data-state")]),
		);
		expect(new Set(rows.map(([id]) => id))).toEqual(new Set(committed));
		expect(rows.every(([, state]) => state === "committed")).toBe(true);
		// The page's chart has a bar per request and a mark per commit.
		const requests = fileEntries(clean).filter(
			(e) => e.type === "message" && (e.message as { role: string }).role === "assistant",
		);
		expect(await p.locator(".chart .bar").count()).toBe(requests.length);
		const commits = fileEntries(clean).filter((e) => e.type === "custom" && (e.data as { op: string }).op === "commit");
		expect(await p.locator(".chart line.commit").count()).toBe(commits.length);
		// The budget drawn is the one the session ran with (its commit receipts say it).
		expect(await p.textContent(".chart .budget text")).toBe(
			`pi-fold's serving budget ${FOLD_BUDGET.toLocaleString("en-US")}`,
		);

		const fold = committedFolds(clean)[1];
		expect(await openFold(p, fold.id)).toBe("verified");
		const leaves = await p.$$eval("#panel .leaf", (els) => els.map((e) => e.getAttribute("data-entry") ?? ""));
		const text = distinctiveLine(clean, leaves);
		expect(await p.textContent("#panel")).toContain(text);
		const verdicts = await p.$$eval("#panel .leaf .verdict", (els) => els.map((e) => e.getAttribute("data-verdict")));
		expect(verdicts.length).toBe(leaves.length);
		expect(new Set(verdicts)).toEqual(new Set(["verified"]));
		// The URL names the open fold: loaded again, the page opens it.
		expect(new URL(p.url()).hash).toBe(`#fold=${fold.id}`);
		await p.reload();
		await p.waitForSelector("#panel [data-summary]");
		expect(await p.textContent("#panel h2")).toContain(fold.id);
		if (process.env.PI_FOLD_SCREENSHOT) {
			await p.waitForSelector('[data-native="ready"]', { timeout: 240_000 });
			await p.screenshot({ path: process.env.PI_FOLD_SCREENSHOT });
		}
		await p.close();
	}, 600_000);

	it("search finds a folded line and opens its fold at the entry", async () => {
		const p = await page(view.url);
		const line = lineOfFold(clean, 2);
		await p.fill('input[name="q"]', line);
		await p.click('form.search button[type="submit"]');
		await p.waitForSelector(".hits [data-total]");
		expect(Number(await p.getAttribute(".hits [data-total]", "data-total"))).toBeGreaterThanOrEqual(1);
		const hitFolds = await p.$$eval(".hits li.hit", (els) => els.map((e) => e.getAttribute("data-fold")));
		// The innermost fold holding the line: the target or a fold inside it.
		expect(hitFolds.length).toBeGreaterThan(0);
		await p.click(".hits li.hit .hit-link");
		await p.waitForSelector("#panel [data-summary]");
		expect(await p.textContent("#panel")).toContain(line);
		await p.close();
	}, 300_000);

	it("a damaged object shows that it does not verify; its fold is marked damaged", async () => {
		const p = await page(broken.url);
		expect(await p.getAttribute(`li[data-fold="${damagedFold}"]`, "data-state")).toBe("damaged");
		expect(await openFold(p, damagedFold)).toBe("damaged");
		const leaf = p.locator(`#panel .leaf[data-entry="${damagedEntry}"]`);
		expect(await leaf.getAttribute("data-ok")).toBe("0");
		expect(await leaf.locator(".verdict").textContent()).toContain("does not verify");
		// Its other objects still verify, each on its own.
		const others = await p.$$eval("#panel .leaf[data-ok='1']", (els) => els.length);
		expect(others).toBeGreaterThan(0);
		// The fold holding it (a consolidation) is whole itself, but not what it holds.
		const holder = committedFolds(damaged).find((f) => f.id !== damagedFold && holds(damaged, f, damagedFold));
		expect(holder).toBeDefined();
		expect(await openFold(p, holder!.id)).toBe("damaged");
		// A damaged record: its fold is damaged in the tree, and opened, its record does not verify.
		expect(await p.getAttribute(`li[data-fold="${damagedRecord.id}"]`, "data-state")).toBe("damaged");
		expect(await openFold(p, damagedRecord.id)).toBe("damaged");
		const check = p.locator(`#panel .record-check[data-fold="${damagedRecord.id}"] [data-verdict]`);
		expect(await check.getAttribute("data-verdict")).toBe("does-not-verify");
		await p.close();
	}, 300_000);

	it("a session that changes while it is served (Pi still has it open) shows the change on reload", async () => {
		const live = copySession(source, "view-session");
		const served = await startView([live, "--window", String(FOLD_WINDOW)], childEnv(piEnv()));
		try {
			const p = await page(served.url);
			const states = () => p.$$eval("li[data-fold]", (els) => els.map((e) => e.getAttribute("data-state")));
			expect(new Set(await states())).toEqual(new Set(["committed"]));
			// What `pi-fold unfold` appends: expand records for every fold, and the edits that show the originals.
			const session = readSessionFolds(live, nodeCore());
			appendToSession(live, unfoldEntries(session, planUnfold(session)), statSync(live));
			await p.reload();
			await p.waitForSelector(".chart");
			expect(await states()).toContain("expanded");
			expect(await states()).not.toContain("damaged");
			await p.close();
		} finally {
			expect(await served.stop()).toBe(0);
		}
	}, 300_000);

	it("refuses every request without the token, or for another host name", async () => {
		const { origin, url } = view;
		const token = new URL(url).pathname.split("/")[1];
		for (const path of ["/", "/api/view", "/core.wasm", `/${"0".repeat(32)}/api/view`, `/${token.slice(1)}/api/view`]) {
			const res = await fetch(`${origin}${path}`);
			expect(res.status, path).toBe(403);
		}
		expect((await fetch(`${url}api/view`)).status).toBe(200);
		const rebound = await new Promise<string>((resolve, reject) => {
			const sock = connect(view.port, "127.0.0.1", () => {
				sock.write(`GET /${token}/api/view HTTP/1.1\r\nHost: evil.example:${view.port}\r\nConnection: close\r\n\r\n`);
			});
			let got = "";
			sock.on("data", (d) => {
				got += String(d);
			});
			sock.on("end", () => resolve(got));
			sock.on("error", reject);
		});
		expect(rebound.split("\r\n")[0]).toBe("HTTP/1.1 421 Misdirected Request");
		expect((await fetch(`${url}api/view`, { method: "POST" })).status).toBe(405);
	});

	it("answers nothing on an address other than loopback", async () => {
		expect(new URL(view.url).hostname).toBe("127.0.0.1");
		const addresses = Object.values(networkInterfaces())
			.flat()
			.filter((a) => a && !a.internal && a.family === "IPv4")
			.map((a) => a!.address);
		for (const address of addresses) {
			const outcome = await new Promise<string>((resolve) => {
				const sock = connect(view.port, address, () => {
					sock.destroy();
					resolve("connected");
				});
				sock.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error"));
			});
			expect(outcome, address).toBe("ECONNREFUSED");
		}
	});

	it("the page reached nothing but its server, and nothing was written beside the session", () => {
		expect(outside).toEqual([]);
		expect(snapshot(dirname(clean))).toEqual(before);
		expect(readFileSync(clean).equals(readFileSync(source))).toBe(true);
	});

	it.skipIf(!fixtureAvailable())(
		"the real fixture (legacy format): a bar per request, and native compaction with the budget and the price tier of the model it is replayed as",
		async () => {
			const fixture = await startView([FIXTURE, "--model", "opencode/gpt-5.5"], childEnv(piEnv()));
			try {
				const p = await page(fixture.url);
				const answers = fileEntries(FIXTURE).filter(
					(e) => e.type === "message" && (e.message as { role: string }).role === "assistant",
				);
				expect(await p.locator(".chart .bar").count()).toBe(answers.length);
				expect(await p.locator("[data-empty]").count()).toBe(1); // no folds: pi-fold never ran on it
				await p.waitForSelector('[data-native="ready"]', { timeout: 240_000 });
				expect(await p.locator(".chart polyline.native").count()).toBe(1);
				// The budget of the model it is replayed as: on the chart, or listed above its scale.
				const curve = (await (await fetch(`${fixture.url}api/native`)).json()) as NativeCurve;
				const tier = curve.priceTier;
				expect(tier?.label).toMatch(/^price tier above [\d,]+ tokens/);
				const budget = `pi-fold's serving budget (replayed) ${curve.budget.toLocaleString("en-US")}${tier?.tokens === curve.budget ? " (the price tier)" : ""}`;
				const told = [
					...(await p.locator(".chart .budget text, .chart .tier text").allTextContents()),
					...(await p.locator(".legend [data-off-scale]").allTextContents()),
				].join("\n");
				expect(told).toContain(budget);
				if (tier && tier.tokens !== curve.budget) expect(told).toContain(tier.label);
				await p.close();
			} finally {
				// Ctrl-C: the server closes and the command exits cleanly.
				expect(await fixture.stop()).toBe(0);
			}
		},
		180_000,
	);

	it("--out writes one self-contained page that verifies and searches with no server", async () => {
		const out = join(tempDir("view-out"), "view.html");
		const r = await run(process.execPath, [CLI, "view", damaged, "--out", out, "--window", String(FOLD_WINDOW)], {
			cwd: REPO_ROOT,
			env: childEnv(piEnv()),
			timeoutMs: 240_000,
		});
		expect(r.code, r.stderr).toBe(0);
		expect(r.stdout).toMatch(/^wrote .*view\.html \([\d,]+ bytes\): open it in a browser\n$/);
		const p = await browser.newPage();
		const requests: string[] = [];
		p.on("request", (r) => requests.push(r.url()));
		await p.goto(pathToFileURL(out).href);
		await p.waitForSelector(".chart");
		expect(await p.getAttribute("[data-native]", "data-native")).toBe("ready");
		expect(await openFold(p, committedFolds(damaged)[1].id)).toBe("verified");
		expect(await openFold(p, damagedFold)).toBe("damaged");
		const store = FoldStore.forSession({ sessionFile: clean, sessionId: String(fileEntries(clean)[0].id) }, nodeCore());
		const line = distinctiveLine(
			clean,
			store.verifyFold(committedFolds(clean)[2].record).leaves.map((l) => l.entryId),
		);
		await p.fill('input[name="q"]', line);
		await p.click('form.search button[type="submit"]');
		await p.waitForSelector(".hits [data-total]");
		expect(Number(await p.getAttribute(".hits [data-total]", "data-total"))).toBeGreaterThanOrEqual(1);
		expect(requests.every((u) => u.startsWith("file:") || u.startsWith("data:"))).toBe(true);
		await p.close();
	}, 600_000);
});
