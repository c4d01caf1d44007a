// A fold opened: its record and every original entry fetched by address and verified in the page,
// with the verdict beside each object, and the fold's identity recomputed from its children.
import { leavesOf, type PageContext } from "./context.ts";
import { h, num } from "./dom.ts";
import { entryView } from "./entry-view.ts";
import { fetchVerified, identityOf, type Verdict } from "./verify.ts";

function verdictBadge(v: Verdict, what: string): HTMLElement {
	return v.ok
		? h("span", { class: "verdict ok", "data-verdict": "verified" }, `✓ ${what} verified (SHA-256)`)
		: h("span", { class: "verdict bad", "data-verdict": "does-not-verify" }, `✗ ${what} ${v.why}`);
}

export async function renderFold(ctx: PageContext, panel: HTMLElement, id: string, entryId?: string): Promise<void> {
	const node = ctx.folds.get(id);
	panel.replaceChildren(h("p", { class: "muted" }, `opening ${id}…`));
	if (!node) {
		panel.replaceChildren(h("p", { class: "bad" }, `no fold ${id} in this session`));
		return;
	}
	const head = h(
		"div",
		{ class: "fold-head" },
		h("h2", {}, `${node.id} · ${node.kind} · ${node.state}`),
		h("p", { class: "brief" }, node.brief),
		h(
			"p",
			{ class: "muted" },
			node.record
				? `${node.entries} entries · ${num(node.rawTokens)} tokens raw, ${num(node.shownTokens)} shown as its brief`
				: `${node.entries} entries · ${num(node.rawTokens)} tokens`,
		),
	);
	if (!node.record) {
		panel.replaceChildren(
			head,
			h("p", { class: "muted" }, "A pending mark: not folded yet, its entries are still in the window as written."),
		);
		return;
	}
	const record = await fetchVerified(ctx.source, ctx.core, "record", node.record);
	const identity = node.identity && identityOf(ctx.core, node.children) === node.identity;
	const checks = h(
		"div",
		{ class: "checks" },
		verdictBadge(record, `record ${node.record.slice(0, 12)}…`),
		identity
			? h("span", { class: "verdict ok" }, "✓ identity recomputed from its children")
			: h("span", { class: "verdict bad" }, "✗ its children do not give the identity its record states"),
	);
	const leaves = leavesOf(ctx, id);
	const verdicts = await Promise.all(leaves.map((l) => fetchVerified(ctx.source, ctx.core, "object", l.hash)));
	const bad = verdicts.filter((v) => !v.ok).length;
	const summary = h(
		"p",
		{ class: bad === 0 && record.ok ? "ok" : "bad", "data-summary": bad === 0 && record.ok ? "verified" : "damaged" },
		bad === 0
			? `All ${leaves.length} objects verified against their addresses.`
			: `${bad} of ${leaves.length} objects do not verify; the session file itself still holds these entries as written.`,
	);
	const decoder = new TextDecoder();
	let fold = "";
	const body: HTMLElement[] = [];
	leaves.forEach((l, i) => {
		if (l.fold !== fold && l.fold !== id)
			body.push(h("div", { class: "nested", style: `margin-left:${l.depth}em` }, `── inside ${l.fold} ──`));
		fold = l.fold;
		const v = verdicts[i];
		const view = v.bytes
			? entryView(decoder.decode(v.bytes), l.entryId)
			: h("p", { class: "bad" }, `entry ${l.entryId}: no bytes`);
		body.push(
			h(
				"div",
				{ class: "leaf", "data-entry": l.entryId, "data-ok": v.ok ? "1" : "0" },
				verdictBadge(v, `object ${l.hash.slice(0, 12)}…`),
				view,
			),
		);
	});
	panel.replaceChildren(head, checks, summary, ...body);
	if (entryId) panel.querySelector(`[data-entry="${CSS.escape(entryId)}"]`)?.scrollIntoView({ block: "start" });
}
