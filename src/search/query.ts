// A search query, checked and compiled for the line matcher, and the scan of one text for its
// matching lines: shared by the agent's search and the view's page (no Node here, nothing of Pi).
import { codePointLength } from "../values/text-fit.ts";
import { Matcher } from "./matcher.ts";
import { literalPattern, MAX_QUERY_CHARS, type Node, PatternError, parseRegex, requiredLiteral } from "./pattern.ts";

export type Checked = { ok: true; node: Node; mode: "literal" | "regex" } | { ok: false; reason: string };

/** A query as a pattern, or a specific refusal (empty, too long, a regex the matcher cannot run). */
export function checkQuery(query: unknown, regex: unknown): Checked {
	if (typeof query !== "string") return { ok: false, reason: `"query" must be a string` };
	if (query.trim() === "") return { ok: false, reason: `"query" is empty: give the text to look for` };
	const n = codePointLength(query);
	if (n > MAX_QUERY_CHARS) {
		return {
			ok: false,
			reason: `"query" has ${n} characters; a search takes at most ${MAX_QUERY_CHARS} (search for a distinctive part of it)`,
		};
	}
	if (/\n/.test(query)) return { ok: false, reason: `"query" spans lines; search matches one line at a time` };
	if (regex !== true) return { ok: true, node: literalPattern(query), mode: "literal" };
	try {
		const node = parseRegex(query);
		new Matcher(node); // compiles: size limits are checked here
		return { ok: true, node, mode: "regex" };
	} catch (err) {
		if (err instanceof PatternError)
			return { ok: false, reason: `"query" is not a pattern search can run: ${err.message}` };
		throw err;
	}
}

/**
 * A run of (at most 8) ASCII characters every matching line contains, in some case, as a search
 * the JavaScript engine runs fast and (this short) in linear time; undefined when there is none.
 */
export function asciiNeedle(node: Node): RegExp | undefined {
	const run = requiredLiteral(node);
	if (!run) return undefined;
	return new RegExp(run.slice(0, 8).replace(/[.*+?^${}()|[\]\\]/g, "\\$&"), "gi");
}

/**
 * Scan one entry's text for matching lines (each reported to `onLine`); false when the time budget
 * ran out. With an ASCII run of the query, the engine's own search finds the candidate lines first,
 * each then checked once by the matcher.
 */
export function scanText(
	text: string,
	matcher: Matcher,
	needle: RegExp | undefined,
	onLine: (lineStart: number, end: number) => boolean,
	overdue: () => boolean,
): boolean {
	if (!needle) return matcher.scan(text, onLine, overdue);
	needle.lastIndex = 0;
	for (let m = needle.exec(text); m; m = needle.exec(text)) {
		const lineStart = text.lastIndexOf("\n", m.index - 1) + 1;
		const nl = text.indexOf("\n", m.index);
		const lineEnd = nl < 0 ? text.length : nl;
		if (!matcher.scan(text, onLine, overdue, lineStart, lineEnd)) return false;
		if (nl < 0) break;
		needle.lastIndex = lineEnd + 1;
	}
	return true;
}
