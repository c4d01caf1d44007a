// The core in a real browser: headless Chromium (driven by playwright-core) loads dist/index.js and the
// .wasm from a local server, both by streaming compile and by a sync compile of the bytes, and must give
// exactly what Node and node:crypto give for the same inputs. The browser is the one npm installed
// (@sparticuz/chromium, pinned), or CHROMIUM_PATH's (harness/chromium.ts); never a system one.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BrowserContext, chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ChromiumLookup, findChromium, NPM_CHROMIUM } from "../harness/chromium.ts";
import type { CoreCheckResults } from "./hosts/core-checks.js";
import {
	DIST_DIR,
	type Expected,
	expected,
	expectLatticeVerdicts,
	expectSameAsNode,
	expectTokenEstimates,
	HOSTS_DIR,
	hostNeutralDist,
	requireBuilt,
	WASM_FILE,
} from "./hosts/reference.ts";

const lookup: ChromiumLookup = await findChromium();
// The one line a machine without any usable browser gets; the rest of the suite still runs.
if (!lookup.ok) console.warn(`[browser] skipped: ${lookup.reason}`);
const SUITE = "the core in headless Chromium";
// Headless, no sandbox (CI runs as root), and nothing that reaches the network on its own.
const CHROMIUM_ARGS = [
	"--headless",
	"--no-sandbox",
	"--disable-gpu",
	"--disable-quic",
	"--no-first-run",
	"--disable-background-networking",
	"--disable-component-update",
	"--disable-sync",
];

interface PageResults {
	userAgent: string;
	compileStreaming: boolean;
	streaming: CoreCheckResults;
	sync: CoreCheckResults;
}

/** URL path -> [content type, body]. The .wasm must be application/wasm or compileStreaming refuses it. */
function routes(): Map<string, [string, string | Buffer]> {
	const js = "text/javascript";
	const map = new Map<string, [string, string | Buffer]>([
		["/", ["text/html", "<!doctype html><meta charset=utf-8><title>pi-fold core</title>"]],
		["/hosts/core-checks.js", [js, readFileSync(join(HOSTS_DIR, "core-checks.js"))]],
		["/hosts/browser-page.js", [js, readFileSync(join(HOSTS_DIR, "browser-page.js"))]],
		["/wasm/pi-fold-core.wasm", ["application/wasm", readFileSync(WASM_FILE)]],
	]);
	for (const f of hostNeutralDist()) map.set(`/dist/${f}`, [js, readFileSync(join(DIST_DIR, f))]);
	return map;
}

async function serve(): Promise<Server> {
	const files = routes();
	const server = createServer((req, res) => {
		const file = files.get(req.url ?? "");
		if (!file) res.writeHead(req.url === "/favicon.ico" ? 204 : 404).end();
		else res.writeHead(200, { "content-type": file[0] }).end(file[1]);
	});
	await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
	return server;
}

describe.skipIf(!lookup.ok)(lookup.ok ? `${SUITE} (${lookup.source})` : `${SUITE}: skipped, ${lookup.reason}`, () => {
	let want: Expected;
	let got: PageResults;
	let server: Server | undefined;
	let context: BrowserContext | undefined;
	const profile = mkdtempSync(join(tmpdir(), "pi-fold-chromium-"));

	beforeAll(async () => {
		requireBuilt();
		if (!lookup.ok) return;
		want = await expected();
		server = await serve();
		const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
		// A fresh profile dir per run; chromium.launch() refuses --user-data-dir in args.
		context = await chromium.launchPersistentContext(profile, {
			executablePath: lookup.executablePath,
			env: lookup.env,
			headless: true,
			args: CHROMIUM_ARGS,
			timeout: 120_000,
		});
		const page = context.pages()[0] ?? (await context.newPage());
		const pageErrors: string[] = [];
		page.on("pageerror", (err) => pageErrors.push(err.message));
		page.on("console", (msg) => {
			if (msg.type() === "error") pageErrors.push(msg.text());
		});
		await page.goto(`${origin}/`);
		try {
			// A string, not a function: vitest rewrites import() inside functions, and this runs in the page.
			got = (await page.evaluate("import('/hosts/browser-page.js').then((m) => m.run())")) as PageResults;
		} catch (err) {
			throw new Error(`the page failed: ${(err as Error).message}\npage errors: ${pageErrors.join("\n") || "none"}`);
		}
	}, 30_000);

	afterAll(async () => {
		await context?.close();
		server?.closeAllConnections();
		await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
		rmSync(profile, { recursive: true, force: true });
	});

	it("really ran in Chromium", () => {
		// Headless Chromium says "HeadlessChrome/<major>.0.0.0"; the major is the launched binary's.
		const major = context?.browser()?.version().split(".")[0];
		expect(major).toMatch(/^\d+$/);
		expect(got.userAgent).toMatch(new RegExp(`Chrome/${major}\\.`));
		expect(got.compileStreaming).toBe(true);
		// Without CHROMIUM_PATH it is the npm package's build: its major is the package's.
		if (lookup.ok && lookup.version) expect(major).toBe(lookup.version.split(".")[0]);
	});

	it("loadCoreAsync(fetch(...)), a streaming compile, matches Node and node:crypto", () => {
		expectSameAsNode(got.streaming, want, "Chromium streaming compile");
	});

	it("loadCore(bytes), a sync compile, matches Node and node:crypto", () => {
		expectSameAsNode(got.sync, want, "Chromium sync compile");
	});

	it("passes the core's self-check", () => {
		expect(got.streaming.selfCheck).toEqual({ ok: true, failed: [] });
	});

	it("validates lattices: the valid ones pass, the invalid ones fail", () => {
		expectLatticeVerdicts(got.streaming);
	});

	it("estimates tokens", () => {
		expectTokenEstimates(got.streaming);
	});
});

describe("the browser lookup", () => {
	it(`without CHROMIUM_PATH finds the ${NPM_CHROMIUM} build npm installed, never a system browser`, async () => {
		if (process.platform !== "linux" || process.arch !== "x64") return;
		const found = await findChromium({ PATH: "/nonexistent" });
		expect(found.ok).toBe(true);
		if (!found.ok) return;
		expect(found.executablePath).toContain("/node_modules/.cache/pi-fold-chromium/");
		expect(found.executablePath).not.toMatch(/^\/usr\//);
		expect(found.source).toMatch(new RegExp(`^${NPM_CHROMIUM} \\d+\\.\\d+\\.\\d+$`));
		expect(found.env.LD_LIBRARY_PATH?.split(":")[0]).toBe(`${found.executablePath.slice(0, -"chromium".length)}lib`);
	});

	it("CHROMIUM_PATH wins, and a missing one is an error naming it, not a skip", async () => {
		await expect(findChromium({ CHROMIUM_PATH: "/nonexistent/chromium" })).rejects.toThrow(
			"CHROMIUM_PATH=/nonexistent/chromium: no such file",
		);
		const self = await findChromium({ CHROMIUM_PATH: process.execPath });
		expect(self).toMatchObject({ ok: true, executablePath: process.execPath, source: "CHROMIUM_PATH" });
	});
});
