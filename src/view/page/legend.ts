// What the chart's lines are, each with its own figures (native compaction's threshold is its
// own, not pi-fold's budget), what was capped or left off the scale, and the one line that says
// what pi-fold would have saved (or did save) against native compaction, in dollars.
import type { NativeAnswer, NativeCurve, ViewData } from "../view-data.ts";
import { type ChartPlan, PARTS } from "./chart.ts";
import { h, num, usd } from "./dom.ts";

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function key(cls: string, text: string, attrs: Record<string, string> = {}): HTMLElement {
	return h("span", { class: "key", ...attrs }, h("i", { class: cls }), text);
}

function nativeKey(native: NativeAnswer): HTMLElement {
	if (native.state === "pending")
		return key("l-native", "native compaction and pi-fold: replaying the session…", { "data-native": "pending" });
	if (native.state === "unavailable")
		return key("l-native", `native compaction: not available (${native.reason})`, { "data-native": "unavailable" });
	const n = native.native;
	return key(
		"l-native",
		`native compaction as \`pi-fold replay\` computes it for ${native.model}: compacts above ${num(native.threshold)} ` +
			`(window ${num(native.window)} minus reserveTokens ${num(native.reserveTokens)}); ` +
			`${plural(n.rewrites.length, "compaction")}, peak ${num(n.peak)}, ${usd(n.cost)}`,
		{ "data-native": "ready" },
	);
}

function foldKey(curve: NativeCurve, requests: number): HTMLElement {
	const f = curve.fold;
	const after = f.rewrites.filter((c) => c.request >= requests).length;
	const commits = `${plural(f.rewrites.length, "commit")} (marks c1, c2…${after > 0 ? `; ${after} after the last request` : ""})`;
	return key(
		"l-fold",
		`pi-fold as \`pi-fold replay\` computes it: serving budget ${num(curve.budget)} (${curve.budgetWhy}); ` +
			`${commits}, peak ${num(f.peak)}, ${usd(f.cost)}`,
		{ "data-fold": "replayed" },
	);
}

export function legend(view: ViewData, native: NativeAnswer, plan: ChartPlan): HTMLElement {
	const items = PARTS.map(([part, label]) => key(`p-${part}`, label));
	const unfolded = plan.unfoldedCapped
		? `with nothing folded (estimated): up to ${num(plan.unfoldedPeak)}, capped at the top of the scale`
		: "with nothing folded (estimated)";
	items.push(key("l-unfolded", unfolded, plan.unfoldedCapped ? { "data-capped": "1" } : {}));
	if (view.commits.length > 0) items.push(key("l-commit", `the session's ${plural(view.commits.length, "commit")}`));
	items.push(nativeKey(native));
	if (native.state === "ready" && plan.foldCurve) items.push(foldKey(native, view.requests.length));
	if (plan.offScale.length > 0)
		items.push(
			h(
				"span",
				{ class: "key muted", "data-off-scale": plan.offScale.length },
				`above the scale, not drawn: ${plan.offScale.map((l) => l.label).join("; ")}`,
			),
		);
	if (native.state === "ready") items.push(h("span", { class: "key muted" }, `prices: ${native.priceCard}`));
	return h("div", { class: "legend" }, ...items);
}

/** The line that says what pi-fold would have saved (or did): empty until the replay is ready. */
export function savingsLine(view: ViewData, native: NativeAnswer): HTMLElement | undefined {
	if (native.state !== "ready") return undefined;
	const fold = native.fold.cost;
	const against = native.native.cost;
	const ratio = against > 0 ? ` (${(fold / against).toFixed(2)}x native's cost)` : "";
	const saved = against - fold;
	const requests = plural(view.requests.length, "request");
	const text =
		view.commits.length > 0
			? `With pi-fold these ${requests} cost ${usd(fold)} (replayed with the session's budget) against ${usd(against)} with native compaction: ` +
				(saved >= 0 ? `pi-fold saved ${usd(saved)}${ratio}.` : `pi-fold cost ${usd(-saved)} more${ratio}.`)
			: `pi-fold would have sent these ${requests} for ${usd(fold)} against ${usd(against)} with native compaction: ` +
				(saved >= 0 ? `${usd(saved)} saved${ratio}.` : `${usd(-saved)} more${ratio}.`);
	return h("p", { class: "savings", "data-fold-cost": fold, "data-native-cost": against, "data-saved": saved }, text);
}
