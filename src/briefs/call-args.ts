// Which arguments of a tool call say what the call was about: a path, a command, a pattern, an
// id or a number, before anything else. Index lines show these first, and the index's coverage is
// measured against the first of them, so both read the same definition.
import { headOf, oneLine } from "../values/text-fit.ts";

interface PrincipalArg {
	key: string;
	/** The value on one line (strings as they are, anything else as JSON). */
	value: string;
	/** A finite number (index lines show repeated numbers as ranges). */
	number?: number;
	/** 0 for a path, then command, pattern, action, id, number, anything else (6). */
	rank: number;
}

/** Argument names by rank: lower ranks are more principal; unranked arguments come last. */
const RANKS: readonly [RegExp, number][] = [
	[/^(path|file_?path|filename|file|dir|directory|target|cwd)$|(path|file|dir)$/i, 0],
	[/^(command|cmd|script|code)$/i, 1],
	[/^(pattern|query|regex|glob|search|url|uri|q)$/i, 2],
	[/^(action|op|operation|mode)$/i, 3],
	[/^(id|ids|name|key|ref)$|(_id|Id|_ids|Ids)$/, 4],
];

function rankOf(key: string, value: unknown): number {
	for (const [re, rank] of RANKS) if (re.test(key)) return rank;
	// Numbered arguments (a stage, a line, an offset) identify a call better than free text.
	return typeof value === "number" ? 5 : 6;
}

function valueText(v: unknown): string {
	if (typeof v === "string") return oneLine(v);
	try {
		return oneLine(JSON.stringify(v) ?? String(v));
	} catch {
		return "…";
	}
}

/** The call's arguments, most principal first (ties keep the call's own order); long free text last. */
export function principalArgs(args: unknown): PrincipalArg[] {
	if (typeof args !== "object" || args === null || Array.isArray(args)) return [];
	const out: (PrincipalArg & { at: number })[] = [];
	let at = 0;
	for (const [key, raw] of Object.entries(args as Record<string, unknown>)) {
		if (raw === undefined || raw === null || raw === "") continue;
		const rank = rankOf(key, raw);
		const number = typeof raw === "number" && Number.isFinite(raw) ? raw : undefined;
		out.push({ key, value: valueText(raw), rank, at: at++, ...(number === undefined ? {} : { number }) });
	}
	out.sort((a, b) => a.rank - b.rank || a.at - b.at);
	return out.map(({ at: _a, ...p }) => p);
}

/**
 * How many characters of a principal value identify it: a long command is known by its head; a
 * path is named whole (up to PRINCIPAL_PATH_CHARS), its shared directories cost little once factored.
 */
export const PRINCIPAL_KEY_CHARS = 64;
const PRINCIPAL_PATH_CHARS = 160;

/** How a principal argument is named: a number with its key (`stage=3`), text by its head. */
export function principalText(p: PrincipalArg): string {
	if (p.number !== undefined) return `${p.key}=${p.value}`;
	const keep = p.rank === 0 ? PRINCIPAL_PATH_CHARS : PRINCIPAL_KEY_CHARS;
	return [...p.value].length > keep ? `${headOf(p.value, keep)}…` : p.value;
}

/** What must be readable for a call's principal argument to count as named: its text without the "…". */
export function principalKey(args: unknown): string {
	const p = principalArgs(args)[0];
	if (!p) return "";
	const text = principalText(p);
	return text.endsWith("…") && p.number === undefined ? text.slice(0, -1) : text;
}
