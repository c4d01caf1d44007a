// /fold-search <query>: the agent's search, for people. Lists the matches in every fold (literal and
// case-insensitive; /pattern/ for a regular expression); with a UI, pick one to open the fold's
// verified text at that match. Reads only: nothing is marked, staged or recorded.
// A person gets one list of every match (the agent's pages read in turn, up to PERSON_MAX_HITS), in
// words, never the agent's call syntax; an opened match starts at a line's beginning, the line
// before it shown too.
import type { ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import type { FoldActions } from "../operations/actions.ts";
import type { SearchAnswer, SearchHit } from "../operations/reading.ts";
import type { FoldHandle } from "../operations/view.ts";
import { clip, utf8Length } from "../values/text-fit.ts";
import { PEEK_MAX_BYTES, SEARCH_MAX_LIMIT } from "../vocabulary.ts";

export const FOLD_SEARCH_COMMAND = "fold-search";
/** Matches a person's list holds at most: past that, narrowing the query says more than scrolling. */
export const PERSON_MAX_HITS = 300;
/** An opened match shows the lines after its own up to this many (one screen with the line before), within OPEN_AFTER bytes. */
const OPEN_LINES_AFTER = 12;
const OPEN_AFTER = 2_000;
/** A line before the match longer than this is left out of the opened text (the match's own line starts it). */
const CONTEXT_MAX_BYTES = 600;

export const FOLD_SEARCH_USAGE = "usage: /fold-search <text> (case-insensitive), or /fold-search /regex/";

/** The command's argument: a literal, or a regular expression between slashes. */
function foldSearchArgs(args: string): { query: string; regex: boolean } | { error: string } {
	const q = args.trim();
	if (q === "") return { error: `/fold-search needs something to look for (${FOLD_SEARCH_USAGE})` };
	const slashed = /^\/(.+)\/$/s.exec(q);
	return slashed ? { query: slashed[1], regex: true } : { query: q, regex: false };
}

function optionOf(h: SearchHit, k: number): string {
	return `${k}. ${h.fold} · ${h.role}${h.tool ? ` ${h.tool}` : ""} · ${clip(h.line, 100)}`;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** Every match of the query (page after page of the agent's search), up to PERSON_MAX_HITS. */
function allMatches(
	actions: FoldActions,
	query: { query: string; regex: boolean },
): { ok: true; answer: SearchAnswer; hits: SearchHit[] } | { ok: false; reason: string } {
	const first = actions.search({ ...query, limit: SEARCH_MAX_LIMIT });
	if (!first.ok) return first;
	const hits = [...first.answer.hits];
	let last = first.answer;
	while (hits.length < Math.min(last.total, PERSON_MAX_HITS) && last.hits.length > 0) {
		const next = actions.search({ ...query, limit: SEARCH_MAX_LIMIT, offset: hits.length });
		if (!next.ok) break;
		last = next.answer;
		hits.push(...last.hits);
	}
	return { ok: true, answer: first.answer, hits: hits.slice(0, PERSON_MAX_HITS) };
}

/** The list's title: how many lines match, in how many folds, and how many the list holds. */
function summaryOf(a: SearchAnswer, listed: number): string {
	const total = `${a.total}${a.stopped ? "+" : ""}`;
	const head = `pi-fold search: ${total} matching line${a.total === 1 ? "" : "s"} for ${JSON.stringify(a.query)} in ${plural(a.foldsMatched, "fold")}`;
	return listed < a.total ? `${head} (the first ${listed} listed: narrow the query for the rest)` : head;
}

/** What a person reads when there is nothing to pick, or after closing the picker: the list in words. */
function personText(a: SearchAnswer, hits: readonly SearchHit[]): string {
	const lines = [summaryOf(a, hits.length)];
	if (a.total === 0) lines.push("No line of any fold matches (try fewer or other words, or /regex/).");
	lines.push(...hits.map((h, i) => optionOf(h, i + 1)));
	for (const p of a.problems) lines.push(`not searched: ${p.reason}`);
	if (a.stopped) lines.push(`the search stopped early: ${a.stopped}`);
	return lines.join("\n");
}

/** The fold's verified text around a match, from the start of the line before it. */
function openedText(actions: FoldActions, hit: SearchHit): { ok: true; text: string } | { ok: false; reason: string } {
	const from = hit.lineOffset - hit.contextOffset <= CONTEXT_MAX_BYTES ? hit.contextOffset : hit.lineOffset;
	const peek = actions.peek(hit.fold, {
		offset: from,
		bytes: Math.min(PEEK_MAX_BYTES, hit.offset - from + OPEN_AFTER),
	});
	if (!peek.ok) return peek;
	const s = peek.slice;
	// The line before (when shown), the match's line, and the lines after it that fit.
	const keep = (hit.contextOffset === from && from !== hit.lineOffset ? 2 : 1) + OPEN_LINES_AFTER;
	const lines = s.text.split("\n");
	const text = lines.slice(0, keep).join("\n");
	const end = s.start + utf8Length(text);
	const where = `${hit.fold}${hit.ancestors.length > 0 ? ` (in ${hit.ancestors.join(" < ")})` : ""}, entry ${hit.entryId}`;
	const more = end < s.total ? `\n… (the fold goes on: ${s.total - end} more bytes)` : "";
	return {
		ok: true,
		text: `${where}: bytes ${s.start}-${end} of ${s.total}, the match at ${hit.offset}, verified by SHA-256\n\n${text}${more}`,
	};
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
	const r = allMatches(actions, parsed);
	if (!r.ok) {
		ctx.ui.notify(`/fold-search refused: ${r.reason}`, "error");
		return;
	}
	const { answer: a, hits } = r;
	if (!ctx.hasUI || hits.length === 0) {
		ctx.ui.notify(personText(a, hits), a.problems.length > 0 ? "warning" : "info");
		return;
	}
	const options = hits.map((h, i) => optionOf(h, i + 1));
	const picked = await ctx.ui.select(`${summaryOf(a, hits.length)}; open one`, options);
	const hit = picked === undefined ? undefined : hits[options.indexOf(picked)];
	if (!hit) {
		ctx.ui.notify(personText(a, hits), "info");
		return;
	}
	const opened = openedText(actions, hit);
	if (!opened.ok) ctx.ui.notify(`/fold-search: cannot open ${hit.fold}: ${opened.reason}`, "error");
	else ctx.ui.notify(opened.text, "info");
}
