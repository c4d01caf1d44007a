// Search across every folded byte with the matcher the agent's `search` uses: each leaf object
// fetched once and verified, read as the same text view, matched line by line; each hit links to
// its fold, opened at the entry.
import { Matcher } from "../../search/matcher.ts";
import { asciiNeedle, checkQuery, scanText } from "../../search/query.ts";
import { entryText } from "../../session/entry-text.ts";
import type { PageContext } from "./context.ts";
import { h } from "./dom.ts";
import { fetchVerified } from "./verify.ts";

/** Hits listed at most (the count says how many there are in all). */
const MAX_HITS = 200;

interface Doc {
	fold: string;
	entryId: string;
	text: string;
	verified: boolean;
}

async function corpus(ctx: PageContext): Promise<Doc[]> {
	const jobs: Promise<Doc | undefined>[] = [];
	const seen = new Set<string>();
	const decoder = new TextDecoder();
	for (const node of ctx.view.folds) {
		for (const c of node.children) {
			if (c.type !== "leaf" || seen.has(`${node.id}:${c.hash}`)) continue;
			seen.add(`${node.id}:${c.hash}`);
			jobs.push(
				fetchVerified(ctx.source, ctx.core, "object", c.hash).then((v) =>
					v.bytes
						? { fold: node.id, entryId: c.entryId, text: entryText(decoder.decode(v.bytes)), verified: v.ok }
						: undefined,
				),
			);
		}
	}
	return (await Promise.all(jobs)).filter((d): d is Doc => d !== undefined);
}

export function searchPanel(ctx: PageContext): HTMLElement {
	let docs: Promise<Doc[]> | undefined;
	const input = h("input", {
		type: "search",
		name: "q",
		placeholder: "search folded text",
		"aria-label": "search folded text",
	});
	const regex = h("input", { type: "checkbox", name: "regex" });
	const out = h("div", { class: "hits" });
	const form = h(
		"form",
		{ class: "search" },
		input,
		h("label", {}, regex, " regex"),
		h("button", { type: "submit" }, "Search"),
	);
	form.addEventListener("submit", (ev) => {
		ev.preventDefault();
		void run();
	});
	async function run(): Promise<void> {
		const checked = checkQuery(input.value, regex.checked);
		if (!checked.ok) {
			out.replaceChildren(h("p", { class: "bad" }, checked.reason));
			return;
		}
		out.replaceChildren(h("p", { class: "muted" }, "searching…"));
		docs ??= corpus(ctx);
		const all = await docs;
		const matcher = new Matcher(checked.node);
		const needle = asciiNeedle(checked.node);
		const hits: HTMLElement[] = [];
		let total = 0;
		for (const d of all) {
			scanText(
				d.text,
				matcher,
				needle,
				(lineStart, end) => {
					total++;
					if (hits.length >= MAX_HITS) return true;
					const lineEnd = d.text.indexOf("\n", end);
					const line = d.text.slice(lineStart, lineEnd < 0 ? undefined : lineEnd).slice(0, 240);
					const link = h("button", { type: "button", class: "hit-link" }, `${d.fold} · entry ${d.entryId}`);
					link.addEventListener("click", () => void ctx.open(d.fold, d.entryId));
					hits.push(
						h(
							"li",
							{ class: "hit", "data-fold": d.fold },
							link,
							d.verified ? "" : " (does not verify)",
							h("pre", {}, line),
						),
					);
					return true;
				},
				() => false,
			);
		}
		const bytes = all.reduce((n, d) => n + d.text.length, 0);
		const head = `${total} matching line${total === 1 ? "" : "s"} in ${all.length} folded entries (${bytes.toLocaleString("en-US")} characters)`;
		out.replaceChildren(h("p", { "data-total": total }, head), h("ul", {}, ...hits));
	}
	return h("div", {}, form, out);
}
