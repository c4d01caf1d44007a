// The view's HTML: one document with its style, the page's bundled code inline and how it starts
// (a boot object: from the local server, or everything embedded). Its content security policy
// lets it reach nothing but the server it came from (nothing at all when saved to a file) and run
// nothing but its own script (allowed by hash) and the core's WebAssembly.
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { Boot } from "./page/source.ts";

/** The page's code, bundled (scripts/build-view.ts writes it; a test checks it matches the sources). */
export const PAGE_BUNDLE = new URL("../../view/pi-fold-view.js", import.meta.url);

const STYLE = `
:root { font: 14px/1.4 system-ui, sans-serif; color: #1d2330; background: #fbfbfd;
  --raw: #6b8fd6; --pending: #e6a23c; --folded: #3aa675; --summary: #9b6ad6; --other: #c9ced8; }
body { margin: 0 auto; max-width: 1400px; padding: 12px 20px; }
h1 { font-size: 20px; margin: 4px 0; } h2 { font-size: 16px; margin: 8px 0; }
.muted { color: #687082; } .bad { color: #b3261e; } .ok { color: #1f7a3a; } .note { color: #8a5a00; }
.chart, .cost-chart { width: 100%; height: auto; background: #fff; border: 1px solid #e3e5ea; border-radius: 6px; }
:is(.chart, .cost-chart) .grid { stroke: #eef0f3; } :is(.chart, .cost-chart) .axis { font-size: 11px; fill: #687082; }
.p-raw { fill: var(--raw); background: var(--raw); } .p-pending { fill: var(--pending); background: var(--pending); }
.p-folded { fill: var(--folded); background: var(--folded); } .p-summary { fill: var(--summary); background: var(--summary); }
.p-other { fill: var(--other); background: var(--other); }
.chart .bar:hover rect { opacity: .75; }
.chart .unfolded { fill: none; stroke: #687082; stroke-dasharray: 3 3; stroke-width: 1.2; }
:is(.chart, .cost-chart) .native { fill: none; stroke: #d0453a; stroke-width: 2; }
:is(.chart, .cost-chart) .fold { fill: none; stroke: #1f7a3a; stroke-width: 2; } .chart .peak { stroke: #fff; stroke-width: 1; }
.chart .peak.native { fill: #d0453a; } .chart .peak.fold { fill: #1f7a3a; }
.cost-chart { margin-top: 6px; } .cost-chart .spent-label { font-size: 11px; } .cost-chart .spent-label.native { fill: #d0453a; stroke: none; } .cost-chart .spent-label.fold { fill: #1f7a3a; stroke: none; }
.chart .commit { stroke: #1f7a3a; stroke-dasharray: 2 3; } .chart .commit.replayed { stroke-opacity: .6; } .chart .commit-label { font-size: 10px; fill: #1f7a3a; }
.chart .threshold line { stroke: #d0453a; stroke-dasharray: 1 3; } .chart .threshold text { font-size: 11px; fill: #d0453a; }
.chart .budget line, .chart .budget polyline { fill: none; stroke: #b3261e; stroke-dasharray: 6 4; } .chart .budget text { font-size: 11px; fill: #b3261e; }
.chart .tier line { stroke: #8a5a00; stroke-dasharray: 2 2; } .chart .tier text { font-size: 11px; fill: #8a5a00; }
.legend { display: flex; flex-wrap: wrap; gap: 6px 16px; margin: 6px 0 12px; font-size: 12px; color: #434a59; }
.legend i { display: inline-block; width: 12px; height: 10px; margin-right: 5px; vertical-align: -1px; }
.legend i.l-unfolded { border-top: 2px dashed #687082; height: 0; } .legend i.l-native { border-top: 2px solid #d0453a; height: 0; }
.legend i.l-fold { border-top: 2px solid #1f7a3a; height: 0; } .legend i.l-commit { border-left: 1px dashed #1f7a3a; width: 0; height: 12px; }
.savings { font-size: 15px; font-weight: 600; margin: 8px 0; color: #1d2330; }
.columns { display: grid; grid-template-columns: minmax(320px, 2fr) 3fr; gap: 16px; align-items: start; }
.tree { list-style: none; padding: 0; margin: 0; }
.fold { padding: 6px 8px; border-left: 3px solid #d8dce4; margin: 4px 0; background: #fff; }
.fold .brief { font-weight: 500; overflow-wrap: anywhere; } .fold .size, .fold .kind { color: #687082; font-size: 12px; }
.badge { font-size: 11px; padding: 1px 6px; border-radius: 8px; background: #e8ebf1; }
.badge.committed { background: #d9f0e3; } .badge.expanded { background: #dde7fb; } .badge.pending { background: #fbecd2; }
.badge.damaged { background: #f8d7d4; color: #8c1d15; } .badge.pinned { background: #ece0fa; }
button.fold-open, button.hit-link { font: inherit; font-family: ui-monospace, monospace; border: 0; background: none; color: #2354b5; cursor: pointer; padding: 0; text-decoration: underline; }
.index pre, .entry pre, .hits pre { white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0; font: 12px/1.35 ui-monospace, monospace; }
.panel { background: #fff; border: 1px solid #e3e5ea; border-radius: 6px; padding: 10px 14px; min-height: 200px; position: sticky; top: 8px; max-height: 92vh; overflow: auto; }
.checks { display: flex; flex-direction: column; gap: 2px; margin: 6px 0; }
.verdict { font-size: 12px; } .verdict.ok { color: #1f7a3a; } .verdict.bad { color: #b3261e; font-weight: 600; }
.leaf { border-top: 1px solid #eef0f3; padding: 6px 0; } .leaf[data-ok="0"] { background: #fff4f3; }
.entry-head { font-weight: 600; font-size: 12px; text-transform: uppercase; letter-spacing: .03em; color: #434a59; } .entry-id { color: #9aa1b0; text-transform: none; }
.entry .text { max-height: 28em; overflow: auto; } .call-name { font-family: ui-monospace, monospace; color: #7a3db8; }
.nested { color: #687082; font-size: 12px; margin: 6px 0; }
.search { display: flex; gap: 6px; align-items: center; margin-bottom: 8px; } .search input[type=search] { flex: 1; padding: 4px 6px; }
.hits ul { list-style: none; padding: 0; } .hit { margin: 4px 0; }
`;

function escapeJson(value: unknown): string {
	// Inside <script>, "<" could end the element; as \\u003c JSON reads the same.
	return JSON.stringify(value).replace(/</g, "\\u003c");
}

export interface PageDocument {
	html: string;
	/** The content security policy, also in the page's meta tag: the server sends it as a header too. */
	csp: string;
}

/**
 * The page for `boot`, with the bundle read from disk (or given). The one script that runs is
 * allowed by its SHA-256, so no other inline script or handler can (the boot data is JSON, not run).
 */
export function pageDocument(boot: Boot, bundle = readFileSync(PAGE_BUNDLE, "utf8")): PageDocument {
	const connect = boot.mode === "server" ? "'self'" : "'none'";
	const script = bundle.replace(/<\/script/gi, "<\\/script");
	const digest = createHash("sha256").update(script).digest("base64");
	const csp = `default-src 'none'; script-src 'sha256-${digest}' 'wasm-unsafe-eval'; style-src 'unsafe-inline'; connect-src ${connect}; img-src data:; base-uri 'none'; form-action 'none'`;
	const html = [
		"<!doctype html>",
		'<html lang="en"><head><meta charset="utf-8">',
		`<meta http-equiv="Content-Security-Policy" content="${csp}">`,
		'<meta name="referrer" content="no-referrer">',
		'<meta name="viewport" content="width=device-width, initial-scale=1">',
		"<title>pi-fold view</title>",
		`<style>${STYLE}</style></head><body>`,
		'<div id="app"><p class="muted">Loading the view…</p></div>',
		`<script type="application/json" id="pi-fold-view-boot">${escapeJson(boot)}</script>`,
		`<script type="module">${script}</script>`,
		"</body></html>",
	].join("\n");
	return { html, csp };
}

/** The page's HTML alone (a saved file carries its policy in the meta tag). */
export function pageHtml(boot: Boot, bundle?: string): string {
	return pageDocument(boot, bundle).html;
}
