// The fold tree: roots to leaves in transcript order, each fold with its state, kind, brief, index
// lines, size raw against shown and the commit that made it; the branch's pinned entries after.
import type { FoldNode } from "../view-data.ts";
import type { PageContext } from "./context.ts";
import { h, num } from "./dom.ts";

function depthOf(ctx: PageContext, node: FoldNode): number {
	let d = 0;
	for (let p = node.parent; p !== undefined && d < 64; p = ctx.folds.get(p)?.parent) d++;
	return d;
}

function sizeLine(node: FoldNode): string {
	if (node.state === "pending")
		return `${node.entries} entries · ${num(node.rawTokens)} tokens of originals · folds at the next commit`;
	return `${node.entries} entries · ${num(node.rawTokens)} raw → ${num(node.shownTokens)} shown`;
}

function row(ctx: PageContext, node: FoldNode): HTMLElement {
	const commit = node.commit === undefined ? "" : ` · commit ${node.commit + 1}`;
	const open = h("button", { class: "fold-open", type: "button" }, node.id);
	open.addEventListener("click", () => void ctx.open(node.id));
	const index =
		node.index.length > 0
			? h(
					"details",
					{ class: "index" },
					h("summary", {}, `${node.index.length} index lines`),
					h("pre", {}, node.index.join("\n")),
				)
			: undefined;
	return h(
		"li",
		{
			class: `fold state-${node.state}`,
			"data-fold": node.id,
			"data-state": node.state,
			style: `margin-left:${depthOf(ctx, node) * 1.2}em`,
		},
		h("span", { class: `badge ${node.state}` }, node.state),
		" ",
		open,
		h("span", { class: "kind" }, ` ${node.kind}`),
		h("div", { class: "brief" }, node.brief),
		h("div", { class: "size" }, sizeLine(node) + commit),
		node.note ? h("div", { class: "note bad" }, node.note) : undefined,
		index,
	);
}

export function foldTreeView(ctx: PageContext): HTMLElement {
	const { folds, pinned } = ctx.view;
	if (folds.length === 0 && pinned.length === 0) {
		return h(
			"p",
			{ class: "muted", "data-empty": "1" },
			"This session has no folds: pi-fold has not folded anything on this branch. The chart shows what it would have done, as `pi-fold replay` computes it.",
		);
	}
	const list = h("ul", { class: "tree" }, ...folds.map((f) => row(ctx, f)));
	for (const id of pinned) {
		list.append(
			h(
				"li",
				{ class: "fold state-pinned", "data-state": "pinned" },
				h("span", { class: "badge pinned" }, "pinned"),
				` entry ${id} (never folds)`,
			),
		);
	}
	return list;
}
