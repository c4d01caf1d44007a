// The view's page: reads how it was started (a local server, or everything embedded in a saved
// file), loads the Wasm core, and draws the session: the window chart, the fold tree, search, and
// a panel where an opened fold's originals are verified. It reaches nothing but where it came from.
import { loadCoreAsync } from "../../../bindings/index.ts";
import type { NativeAnswer } from "../view-data.ts";
import { chart, chartPlan } from "./chart.ts";
import type { PageContext } from "./context.ts";
import { costChart } from "./cost-chart.ts";
import { h } from "./dom.ts";
import { renderFold } from "./fold-panel.ts";
import { legend, savingsLine } from "./legend.ts";
import { searchPanel } from "./search-panel.ts";
import { type Boot, embeddedSource, serverSource } from "./source.ts";
import { foldTreeView } from "./tree.ts";

/** How often the page asks whether the replay (native compaction and pi-fold) is ready. */
const NATIVE_POLL_MS = 500;

/** The fold a URL's `#fold=<id>` names; a malformed escape (`%E0`) names none. */
function linkedFold(hash: string): string | undefined {
	const m = /^#fold=(.+)$/.exec(hash);
	if (!m) return undefined;
	try {
		return decodeURIComponent(m[1]);
	} catch {
		return undefined;
	}
}

async function main(): Promise<void> {
	const root = document.getElementById("app") as HTMLElement;
	const boot = JSON.parse(document.getElementById("pi-fold-view-boot")?.textContent ?? "{}") as Boot;
	const source = boot.mode === "file" ? embeddedSource(boot) : serverSource();
	const [core, view] = await Promise.all([loadCoreAsync(source.wasm()), source.view()]);
	const panel = h(
		"section",
		{ class: "panel", id: "panel" },
		h("p", { class: "muted" }, "Open a fold to read its originals, verified here."),
	);
	// Each open is numbered: one still verifying when a later one starts never shows its panel.
	let opened = 0;
	const ctx: PageContext = {
		core,
		source,
		view,
		folds: new Map(view.folds.map((f) => [f.id, f])),
		open: (id, entryId) => {
			const mine = ++opened;
			// The URL names the open fold, so a reload or a saved link opens it again.
			history.replaceState(null, "", `#fold=${encodeURIComponent(id)}`);
			return renderFold(ctx, panel, id, entryId, () => mine !== opened);
		},
	};
	const committed = view.folds.filter((f) => f.state !== "pending").length;
	const chartBox = h("div", { class: "chart-box" });
	const drawChart = (native: NativeAnswer) => {
		const plan = chartPlan(view, native);
		chartBox.replaceChildren(
			...[
				savingsLine(view, native),
				chart(view, native, plan),
				native.state === "ready" ? costChart(native, view.requests.length) : undefined,
				legend(view, native, plan),
			].filter((e) => e !== undefined),
		);
	};
	root.replaceChildren(
		h(
			"header",
			{},
			h("h1", {}, "pi-fold view"),
			h(
				"p",
				{ class: "muted" },
				`${view.file} · session ${view.sessionId} · ${view.requests.length} requests · ${view.commits.length} commits · ${committed} folds · pi-fold ${view.version}`,
			),
		),
		...view.notes.map((n) => h("p", { class: "note" }, n)),
		chartBox,
		h(
			"div",
			{ class: "columns" },
			h("section", { class: "side" }, h("h2", {}, "Folds"), searchPanel(ctx), foldTreeView(ctx)),
			panel,
		),
	);
	const linked = linkedFold(location.hash);
	if (linked !== undefined && ctx.folds.has(linked)) void ctx.open(linked);
	let native = await source.native();
	drawChart(native);
	while (native.state === "pending") {
		await new Promise((r) => setTimeout(r, NATIVE_POLL_MS));
		native = await source.native();
		if (native.state !== "pending") drawChart(native);
	}
}

main().catch((err: unknown) => {
	const app = document.getElementById("app");
	if (app)
		app.replaceChildren(
			h("p", { class: "bad", "data-failed": "1" }, `The view could not load: ${(err as Error).message}`),
		);
});
