// action "search": find text in every fold's exact text view (committed, expanded, pending). Each
// match names the innermost fold holding it, its ancestors, the entry, and the byte offset where
// peek lands on it; a page at a time, ending with the call for the next page. The result itself
// is marked to fold at the next commit, like a peek's; the window is never edited.
import type { SearchAnswer, SearchHit } from "../operations/reading.ts";
import type { ToolCall, ToolEnv } from "./env.ts";
import { continuation, done, type FoldToolResult, operations, refuse } from "./result.ts";
import type { FoldToolArgs } from "./schema.ts";

const kb = (n: number) => (n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${Math.ceil(n / 1024)} KB`);

function hitLines(h: SearchHit, k: number): string[] {
	const path = h.ancestors.length > 0 ? ` in ${h.ancestors.join(" < ")}` : "";
	const who = `${h.role}${h.tool ? ` ${h.tool}` : ""}`;
	return [
		`${k}. ${h.fold}${path} · entry ${h.entryId} (${who}) · offset ${h.offset}`,
		...(h.before ? [`   | ${h.before}`] : []),
		`   > ${h.line}`,
		...(h.after ? [`   | ${h.after}`] : []),
	];
}

/** The answer's text: header, hits, folds that could not be read, and how to go on. */
function searchText(a: SearchAnswer, args: { query: string; regex?: boolean; limit?: number }): string[] {
	const kind = a.mode === "regex" ? "regex" : "literal";
	const first = a.offset + 1;
	const last = a.offset + a.hits.length;
	const scope = `searched ${a.folds} folds, ${a.entries} entries, ${kb(a.bytes)} in ${Math.round(a.ms)} ms`;
	const lines = [
		`[pi-fold search] ${JSON.stringify(a.query)} (${kind}, case-insensitive): ${a.total}${a.stopped ? "+" : ""} matching line${a.total === 1 ? "" : "s"} in ${a.foldsMatched} fold${a.foldsMatched === 1 ? "" : "s"} (${scope})${a.hits.length > 0 ? `; matches ${first}-${last}` : ""}`,
	];
	if (a.hits.length > 0) {
		lines.push(
			'Each match: fold (in its ancestors) · entry · offset; {"action":"peek","id":<fold>,"offset":<offset>} starts on it.',
		);
		a.hits.forEach((h, i) => {
			lines.push(...hitLines(h, first + i));
		});
	} else if (a.total > 0) lines.push(`offset ${a.offset} is past the last of the ${a.total} matches.`);
	else lines.push("No line of any fold matches (try fewer or other words, or regex).");
	for (const p of a.problems) lines.push(`not searched: ${p.reason}`);
	if (a.stopped) lines.push(`stopped: ${a.stopped}`);
	const more = a.total - last;
	if (a.hits.length > 0 && more > 0) {
		lines.push(
			`${more} more match${more === 1 ? "" : "es"}: page on, or narrow the query.`,
			continuation({
				action: "search",
				query: args.query,
				...(args.regex ? { regex: true } : {}),
				...(args.limit ? { limit: args.limit } : {}),
				offset: last,
			}),
		);
	}
	return lines;
}

export function searchAction(args: FoldToolArgs, env: ToolEnv, call: ToolCall): FoldToolResult {
	const ops = operations("search", env, call);
	if (!ops.ok) return ops.refusal;
	const { actions, ctx } = ops;
	const query = args.query ?? "";
	const r = actions.search(
		{
			query,
			...(args.regex === undefined ? {} : { regex: args.regex }),
			...(args.limit === undefined ? {} : { limit: args.limit }),
			...(args.offset === undefined ? {} : { offset: args.offset }),
		},
		{ toolCallId: call.toolCallId },
	);
	if (!r.ok) return refuse("search", r.reason);
	const a = r.answer;
	const lines = searchText(a, {
		query,
		...(args.regex ? { regex: true } : {}),
		...(args.limit ? { limit: args.limit } : {}),
	});
	lines.push("This search result is marked to fold at the next commit.");
	return done(
		"search",
		lines,
		{
			query: a.query,
			mode: a.mode,
			total: a.total,
			offset: a.offset,
			hits: a.hits,
			folds: a.folds,
			bytes: a.bytes,
			problems: a.problems,
			...(a.stopped ? { stopped: a.stopped } : {}),
		},
		actions,
		ctx,
	);
}
