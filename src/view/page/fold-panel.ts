// A fold opened: its record, the records of the folds inside it and every original entry, fetched
// by address and verified in the page, with the verdict beside each object, and each fold's identity
// recomputed from its children.
import type { FoldNode } from "../view-data.ts";
import { leavesOf, type PageContext } from "./context.ts";
import { h, num } from "./dom.ts";
import { entryView } from "./entry-view.ts";
import { fetchVerified, identityOf, type Verdict } from "./verify.ts";

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function verdictBadge(v: Verdict, what: string): HTMLElement {
	return v.ok
		? h("span", { class: "verdict ok", "data-verdict": "verified" }, `✓ ${what} verified (SHA-256)`)
		: h("span", { class: "verdict bad", "data-verdict": "does-not-verify" }, `✗ ${what} ${v.why}`);
}

function heading(node: FoldNode): HTMLElement {
	const size = node.record
		? `${node.entries} entries · ${num(node.rawTokens)} tokens raw, ${num(node.shownTokens)} shown as its brief`
		: `${node.entries} entries · ${num(node.rawTokens)} tokens`;
	return h(
		"div",
		{ class: "fold-head" },
		h("h2", {}, `${node.id} · ${node.kind} · ${node.state}`),
		h("p", { class: "brief" }, node.brief),
		h("p", { class: "muted" }, size),
	);
}

/** The fold and every fold inside it that has a record, outermost first. */
function foldsUnder(ctx: PageContext, node: FoldNode): FoldNode[] {
	const out: FoldNode[] = [];
	const seen = new Set<string>();
	const walk = (n: FoldNode) => {
		if (seen.has(n.id) || !n.record) return;
		seen.add(n.id);
		out.push(n);
		for (const c of n.children) {
			const child = c.type === "fold" ? ctx.folds.get(c.id) : undefined;
			if (child) walk(child);
		}
	};
	walk(node);
	return out;
}

/** Each record's verdict and identity check, one line per fold. */
async function recordChecks(
	ctx: PageContext,
	folds: readonly FoldNode[],
): Promise<{ lines: HTMLElement[]; bad: number }> {
	const verdicts = await Promise.all(
		folds.map((f) => fetchVerified(ctx.source, ctx.core, "record", f.record as string)),
	);
	let bad = 0;
	const lines = folds.map((f, i) => {
		const v = verdicts[i];
		// A record the server could not read lists no children: there is no identity to recompute.
		const identity =
			f.children.length > 0 && f.identity !== undefined && identityOf(ctx.core, f.children) === f.identity;
		if (!v.ok || !identity) bad++;
		return h(
			"div",
			{ class: "record-check", "data-fold": f.id },
			verdictBadge(v, `record of ${f.id}`),
			identity
				? h("span", { class: "verdict ok" }, " · identity recomputed from its children")
				: h(
						"span",
						{ class: "verdict bad" },
						` · ${f.note ?? "its children do not give the identity its record states"}`,
					),
		);
	});
	return { lines, bad };
}

/** Show fold `id` in the panel; `superseded` says a later open has started, and this one then draws nothing more. */
export async function renderFold(
	ctx: PageContext,
	panel: HTMLElement,
	id: string,
	entryId?: string,
	superseded: () => boolean = () => false,
): Promise<void> {
	const node = ctx.folds.get(id);
	panel.replaceChildren(h("p", { class: "muted" }, `opening ${id}…`));
	if (!node) {
		panel.replaceChildren(h("p", { class: "bad" }, `no fold ${id} in this session`));
		return;
	}
	if (!node.record) {
		const pending = "A pending mark: not folded yet, its entries are still in the window as written.";
		panel.replaceChildren(heading(node), h("p", { class: "muted" }, pending));
		return;
	}
	const folds = foldsUnder(ctx, node);
	const records = await recordChecks(ctx, folds);
	if (superseded()) return;
	const leaves = leavesOf(ctx, id);
	const verdicts = await Promise.all(leaves.map((l) => fetchVerified(ctx.source, ctx.core, "object", l.hash)));
	if (superseded()) return;
	const bad = verdicts.filter((v) => !v.ok).length;
	const whole = bad === 0 && records.bad === 0;
	const summary = h(
		"p",
		{ class: whole ? "ok" : "bad", "data-summary": whole ? "verified" : "damaged" },
		whole
			? `All ${plural(leaves.length, "object")} and ${plural(folds.length, "record")} verified against their addresses.`
			: `${bad} of ${leaves.length} objects and ${records.bad} of ${folds.length} records do not verify; ` +
					"the session file itself still holds these entries as written.",
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
		const badge = verdictBadge(v, `object ${l.hash.slice(0, 12)}…`);
		body.push(h("div", { class: "leaf", "data-entry": l.entryId, "data-ok": v.ok ? "1" : "0" }, badge, view));
	});
	panel.replaceChildren(heading(node), h("div", { class: "checks" }, ...records.lines), summary, ...body);
	if (entryId) panel.querySelector(`[data-entry="${CSS.escape(entryId)}"]`)?.scrollIntoView({ block: "start" });
}
