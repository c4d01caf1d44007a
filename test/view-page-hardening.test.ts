// `pi-fold view`'s page and server hold up against what a person or a hostile store can do, checked
// in the project's headless Chromium: the content security policy comes as a header too and allows
// the page's one script by its hash, so an injected inline handler or script never runs while the
// page still works; a malformed `#fold=` escape is ignored; of two quick clicks the later one wins;
// and a store folder linked outside the store is never followed.
import { createHash } from "node:crypto";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Browser, Page, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { findChromium } from "../harness/chromium.ts";
import { piEnv, removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { launchViewBrowser, type RunningView, startView } from "../harness/view-server.ts";
import { FoldStore, STORE_DIR_NAME } from "../src/store/index.ts";
import { fileEntries } from "./helpers/fixture-entries.ts";
import { childEnv } from "./helpers/pi-cli.ts";
import { committedFolds, copySession, FOLD_WINDOW, recordedFold } from "./helpers/replay-recordings.ts";

const lookup = await findChromium();
if (!lookup.ok) console.warn(`[view-page-hardening] skipped: ${lookup.reason}`);

/** The leaf objects a fold's record lists (its own, not those of folds inside it). */
function ownLeaves(file: string, record: string): string[] {
	const store = FoldStore.forSession({ sessionFile: file, sessionId: String(fileEntries(file)[0].id) }, nodeCore());
	return store.readRecord(record).children.flatMap((c) => (c.type === "leaf" ? [c.hash] : []));
}

describe.skipIf(!lookup.ok)("pi-fold view's page holds up (headless Chromium)", () => {
	let browser: Browser;
	let session: string;
	let view: RunningView;

	beforeAll(async () => {
		if (!lookup.ok) return;
		session = copySession((await recordedFold()).file, "view-hardening");
		view = await startView([session, "--window", String(FOLD_WINDOW)], childEnv(piEnv()));
		browser = await launchViewBrowser(lookup);
	}, 600_000);

	afterAll(async () => {
		await browser?.close();
		await view?.stop();
		removeTempDirs();
	});

	async function open(url: string): Promise<Page> {
		const p = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
		await p.goto(url);
		await p.waitForSelector(".chart, [data-failed]");
		expect(await p.locator("[data-failed]").count()).toBe(0);
		return p;
	}

	it("the policy is a header too, allowing the one script by hash: the page works, an injected handler or script does not run", async () => {
		const res = await fetch(view.url);
		const header = res.headers.get("content-security-policy") ?? "";
		const scriptSrc = /script-src ([^;]*)/.exec(header)?.[1] ?? "";
		expect(scriptSrc).toMatch(/^'sha256-[A-Za-z0-9+/]+=*' 'wasm-unsafe-eval'$/);
		const html = await res.text();
		expect(html).toContain(`content="${header}"`);
		// The hash is the page's one script, as served.
		const script = /<script type="module">([\s\S]*)<\/script>/.exec(html)?.[1] ?? "";
		expect(scriptSrc).toContain(`'sha256-${createHash("sha256").update(script).digest("base64")}'`);

		const p = await open(view.url);
		const fold = committedFolds(session)[0].id;
		await p.click(`li[data-fold="${fold}"] .fold-open`);
		await p.waitForSelector("#panel [data-summary]");
		expect(await p.getAttribute("#panel [data-summary]", "data-summary")).toBe("verified");

		const outcome = await p.evaluate(
			() =>
				new Promise<{ handler: unknown; script: unknown; violations: string[] }>((resolve) => {
					const w = window as unknown as Record<string, unknown>;
					const violations: string[] = [];
					document.addEventListener("securitypolicyviolation", (e) => {
						// Each policy (the header's and the meta tag's, the same) reports its own.
						violations.push(e.violatedDirective);
						if (new Set(violations).size === 2) resolve({ handler: w.handlerRan, script: w.scriptRan, violations });
					});
					const script = document.createElement("script");
					script.textContent = "window.scriptRan = true";
					document.body.append(script);
					const img = document.createElement("img");
					// Set before the listener below: in the same dispatch, it would run first.
					img.setAttribute("onerror", "window.handlerRan = true");
					img.src = "data:,not-an-image";
					document.body.append(img);
				}),
		);
		expect(outcome.handler).toBeUndefined();
		expect(outcome.script).toBeUndefined();
		expect(new Set(outcome.violations)).toEqual(new Set(["script-src-attr", "script-src-elem"]));
		await p.close();
	}, 300_000);

	it("a malformed escape in #fold= is ignored: the page loads", async () => {
		const p = await open(`${view.url}#fold=%E0`);
		expect(await p.locator("li[data-fold]").count()).toBe(committedFolds(session).length);
		expect(await p.textContent("#panel")).toContain("Open a fold to read its originals");
		await p.close();
	});

	it("two quick clicks: the later fold's panel stays, whatever the order their bytes arrive in", async () => {
		const [a, b] = committedFolds(session);
		const aLeaves = new Set(ownLeaves(session, a.record));
		expect(ownLeaves(session, b.record).some((h) => aLeaves.has(h))).toBe(false);
		const p = await open(view.url);
		// A's objects are held until B's panel is drawn.
		const held: Route[] = [];
		let firstHeld: () => void = () => {};
		const holding = new Promise<void>((resolve) => {
			firstHeld = resolve;
		});
		await p.route("**/object/*", (route) => {
			const hash = route.request().url().split("/").pop() ?? "";
			if (!aLeaves.has(hash)) return route.continue();
			held.push(route);
			firstHeld();
		});
		await p.click(`li[data-fold="${a.id}"] .fold-open`);
		await holding;
		await p.click(`li[data-fold="${b.id}"] .fold-open`);
		await p.waitForFunction(
			(id) =>
				document.querySelector("#panel [data-summary]") &&
				document.querySelector("#panel h2")?.textContent?.includes(id),
			b.id,
		);
		const responses = held.map((r) => p.waitForResponse(r.request().url()));
		await Promise.all(held.map((r) => r.continue()));
		await Promise.all(responses);
		// A's verification ends now; give it its tasks and a frame to draw in, as it would.
		await p.evaluate(
			() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(r, 0)))),
		);
		expect(await p.textContent("#panel h2")).toContain(b.id);
		expect(new URL(p.url()).hash).toBe(`#fold=${b.id}`);
		await p.close();
	}, 300_000);

	it("a folder of the store linked outside it is not followed: GET object/<sha> refuses, the outside bytes never served", async () => {
		const linked = copySession(session, "view-linked-store");
		const sessionId = String(fileEntries(linked)[0].id);
		const secret = Buffer.from("a file outside the store\n");
		const hash = createHash("sha256").update(secret).digest("hex");
		const outside = tempDir("outside-store");
		writeFileSync(join(outside, hash), secret);
		const objects = join(dirname(linked), STORE_DIR_NAME, sessionId, "objects");
		mkdirSync(objects, { recursive: true });
		symlinkSync(outside, join(objects, hash.slice(0, 2)));
		const served = await startView([linked, "--window", String(FOLD_WINDOW)], childEnv(piEnv()));
		try {
			const res = await fetch(`${served.url}object/${hash}`);
			const body = await res.text();
			expect(res.status).toBe(403);
			expect(body).toContain("is a symlink (a store's folders are never followed out of it)");
			expect(body).not.toContain(secret.toString());
		} finally {
			expect(await served.stop()).toBe(0);
		}
	}, 300_000);
});
