// /fold-search <query>: the agent's search, for people. Lists the matches in every fold (literal and
// case-insensitive; /pattern/ for a regular expression); with a UI, pick one to open the fold's
// verified text at that match. Reads only: nothing is marked, staged or recorded.
import type { ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import type { SearchHit } from "../operations/reading.ts";
import type { FoldHandle } from "../operations/view.ts";
import { searchText } from "../tool/search.ts";
import { clip } from "../values/text-fit.ts";
import { SEARCH_MAX_LIMIT } from "../vocabulary.ts";

export const FOLD_SEARCH_COMMAND = "fold-search";
/** How much of the fold's text an opened match shows, and how much of it comes before the match. */
const OPEN_BYTES = 2_400;
const OPEN_BEFORE = 300;

export const FOLD_SEARCH_USAGE = "usage: /fold-search <text> (case-insensitive), or /fold-search /regex/";

/** The command's argument: a literal, or a regular expression between slashes. */
export function foldSearchArgs(args: string): { query: string; regex: boolean } | { error: string } {
	const q = args.trim();
	if (q === "") return { error: `/fold-search needs something to look for (${FOLD_SEARCH_USAGE})` };
	const slashed = /^\/(.+)\/$/s.exec(q);
	return slashed ? { query: slashed[1], regex: true } : { query: q, regex: false };
}

function optionOf(h: SearchHit, k: number): string {
	return `${k}. ${h.fold} · ${h.role}${h.tool ? ` ${h.tool}` : ""} · ${clip(h.line, 100)}`;
}

export async function runFoldSearch(handle: FoldHandle, args: string, ctx: ExtensionCommandContext): Promise<void> {
	const actions = handle.actions();
	if (!actions) {
		ctx.ui.notify(`/fold-search: pi-fold is not running (${handle.reason() ?? "no runtime yet"})`, "error");
		return;
	}
	const parsed = foldSearchArgs(args);
	if ("error" in parsed) {
		ctx.ui.notify(parsed.error, "error");
		return;
	}
	const r = actions.search({ ...parsed, limit: SEARCH_MAX_LIMIT });
	if (!r.ok) {
		ctx.ui.notify(`/fold-search refused: ${r.reason}`, "error");
		return;
	}
	const a = r.answer;
	const list = searchText(a, parsed).join("\n");
	if (!ctx.hasUI || a.hits.length === 0) {
		ctx.ui.notify(list, a.problems.length > 0 ? "warning" : "info");
		return;
	}
	const options = a.hits.map((h, i) => optionOf(h, i + 1));
	const picked = await ctx.ui.select(
		`pi-fold search: ${a.total} matching line${a.total === 1 ? "" : "s"} for ${JSON.stringify(a.query)}; open one`,
		options,
	);
	const hit = picked === undefined ? undefined : a.hits[options.indexOf(picked)];
	if (!hit) {
		ctx.ui.notify(list, "info");
		return;
	}
	const from = Math.max(0, hit.offset - OPEN_BEFORE);
	const peek = actions.peek(hit.fold, { offset: from, bytes: OPEN_BYTES });
	if (!peek.ok) {
		ctx.ui.notify(`/fold-search: cannot open ${hit.fold}: ${peek.reason}`, "error");
		return;
	}
	const s = peek.slice;
	ctx.ui.notify(
		[
			`${hit.fold}${hit.ancestors.length > 0 ? ` (in ${hit.ancestors.join(" < ")})` : ""}, entry ${hit.entryId}: bytes ${s.start}-${s.end} of ${s.total}, the match at ${hit.offset}, verified by SHA-256`,
			"",
			s.text,
		].join("\n"),
		"info",
	);
}
