// The view's page ships bundled (view/pi-fold-view.js, committed so an installed pi-fold needs no
// bundler): it must be exactly what its sources bundle to now, and reach for nothing outside itself.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { bundleView } from "../scripts/build-view.ts";
import { PAGE_BUNDLE } from "../src/view/page-html.ts";

describe("the view's page bundle", () => {
	it("is what src/view/page bundles to (npm run build:view after a change)", async () => {
		const committed = readFileSync(PAGE_BUNDLE, "utf8");
		expect(committed === (await bundleView()), "view/pi-fold-view.js is stale: run npm run build:view").toBe(true);
	}, 300_000);

	it("imports nothing and names no Node module: it runs in a browser from one inline script", () => {
		const code = readFileSync(PAGE_BUNDLE, "utf8");
		expect(code).not.toMatch(/\bimport\s*[\s{*"'(]/);
		expect(code).not.toMatch(/["']node:/);
		expect(code).not.toMatch(/\brequire\(/);
	});
});
