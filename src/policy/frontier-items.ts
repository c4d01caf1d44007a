// The frontier's reading of the context: its top level as items (root folds, and raw entries
// grouped into units: a tool batch with every call and result it shares, or a single message),
// each ready to fold, waiting, or never folding.
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { FoldLattice, LatticeEntry, RootSpan, ToolBatches } from "../lattice/index.ts";
import type { ContextEntries } from "../session/context-entries.ts";
import type { FrontierSettings } from "./frontier.ts";

/**
 * One place of the top level, in order:
 * - ready: a unit that may fold now;
 * - wait: not foldable yet (an incomplete batch, an entry of the open chapter);
 * - never: never folds (a system, pinned or blacklisted entry, a broken batch);
 * - fold: a root fold (its state decides whether a gap beside it may absorb it).
 */
export type Item =
	| { type: "ready"; start: number; end: number; batch: boolean }
	| { type: "wait" | "never"; start: number; end: number }
	| { type: "fold"; start: number; end: number; fold: RootSpan };

export type Frontier = Pick<FoldLattice, "size" | "entryAt" | "rootSpans" | "pins" | "tools">;

/**
 * For each position in [from, n): [lo, hi] of the tool calls it shares a fold with, and whether a
 * call or a result is missing, over the entries in [from, n) only (n: the entries the pass
 * examines). The caller has shown that no entry from `from` on shares a tool call id with an
 * earlier one (see FrontierCursor), so these are the groups a whole pass over [0, n) sees. They
 * come from the lattice's index of tool batches, built once as the context grows: a position whose
 * groups all lie before n and are complete reads it as it is; only one whose group reaches n or
 * beyond (a result the model has not seen yet) or is open re-reads its groups, cut at n.
 */
interface BatchFacts {
	/** Indexed by position - from. */
	lo: Int32Array;
	hi: Int32Array;
	noResult: Uint8Array;
	noCall: Uint8Array;
}

function batchFacts(entries: readonly LatticeEntry[], tools: ToolBatches, from: number, n: number): BatchFacts {
	const size = Math.max(0, n - from);
	const facts: BatchFacts = {
		lo: new Int32Array(size),
		hi: new Int32Array(size),
		noResult: new Uint8Array(size),
		noCall: new Uint8Array(size),
	};
	for (let p = from; p < n; p++) {
		const i = p - from;
		const hi = tools.toolHi(p);
		if (hi < n && !tools.toolOpen(p)) {
			facts.lo[i] = tools.toolLo(p);
			facts.hi[i] = hi;
			continue;
		}
		let lo = p;
		let top = p;
		const e = entries[p];
		const group = (c: string) => {
			let calls = 0;
			let results = 0;
			for (const q of tools.calls(c)) {
				if (q < from || q >= n) continue;
				calls++;
				if (q < lo) lo = q;
				if (q > top) top = q;
			}
			for (const q of tools.results(c)) {
				if (q < from || q >= n) continue;
				results++;
				if (q < lo) lo = q;
				if (q > top) top = q;
			}
			if (results === 0) facts.noResult[i] = 1;
			if (calls === 0) facts.noCall[i] = 1;
		};
		if (e.toolCallIds) for (const c of e.toolCallIds) group(c);
		if (e.toolCallId !== undefined) group(e.toolCallId);
		facts.lo[i] = lo;
		facts.hi[i] = top;
	}
	return facts;
}

/**
 * Tool names per session entry, kept across passes: a session entry is immutable once appended,
 * and the runtime hands the same entry objects to every pass, so each entry is read once, not
 * once per pass.
 */
const toolNamesOf = new WeakMap<object, readonly string[]>();

/** Tool names an entry calls or answers (from the Pi entry: the lattice entries carry no names). */
function toolNames(entry: SessionEntry | undefined): readonly string[] {
	if (entry === undefined) return [];
	const known = toolNamesOf.get(entry);
	if (known) return known;
	const names = readToolNames(entry);
	toolNamesOf.set(entry, names);
	return names;
}

function readToolNames(entry: SessionEntry): string[] {
	if (entry.type !== "message") return [];
	const m = entry.message as { role?: string; content?: unknown; toolName?: unknown };
	if (m.role === "toolResult") return typeof m.toolName === "string" ? [m.toolName] : [];
	if (m.role !== "assistant" || !Array.isArray(m.content)) return [];
	return m.content.flatMap((b: { type?: string; name?: unknown }) =>
		b?.type === "toolCall" && typeof b.name === "string" ? [b.name] : [],
	);
}

/**
 * The top level of the context's first `n` entries from `from` (an item boundary): root folds, and
 * the raw entries grouped into units. Undefined when a root straddles `from` (it is no boundary:
 * the caller passes again whole).
 */
export function itemsOf(
	context: ContextEntries,
	lattice: Frontier,
	settings: FrontierSettings,
	pins: readonly string[],
	from: number,
	n: number,
): Item[] | undefined {
	const { entries, sources } = context;
	const roots = new Map<number, RootSpan>();
	// Positions inside a fold: the roots cover exactly what all folds cover.
	const covered = new Uint8Array(n);
	for (const f of lattice.rootSpans(from)) {
		if (f.start < from) return undefined;
		roots.set(f.start, f);
		covered.fill(1, f.start, f.end);
	}
	const pinned = new Set(pins);
	const facts = batchFacts(entries, lattice.tools, from, n);
	const lo = (p: number) => facts.lo[p - from];
	const hi = (p: number) => facts.hi[p - from];
	const noResult = (p: number) => facts.noResult[p - from] === 1;
	const noCall = (p: number) => facts.noCall[p - from] === 1;
	// A never-folding entry: a system entry, a pin, a blacklisted tool's call or result, an orphan result.
	const never = (p: number) =>
		entries[p].role === "system" ||
		pinned.has(entries[p].id) ||
		noCall(p) ||
		(settings.blacklistAutoFoldTools.size > 0 &&
			toolNames(sources[p]).some((t) => settings.blacklistAutoFoldTools.has(t)));
	// Only positions from `from` are compared with it: a user entry before `from` readies none of them.
	const lastUser = lastUserIn(entries, from, n);

	const items: Item[] = [];
	for (let p = from; p < n; ) {
		const root = roots.get(p);
		if (root) {
			// A root whose entries are pinned to the frontier (a damaged fold) is never absorbed.
			if (pinned.has(entries[root.start].id)) items.push({ type: "never", start: root.start, end: root.end });
			else items.push({ type: "fold", start: root.start, end: root.end, fold: root });
			p = root.end;
			continue;
		}
		const isTool = hi(p) !== p || lo(p) !== p || noResult(p) || noCall(p);
		if (!isTool) {
			const type = never(p) ? "never" : p < lastUser ? "ready" : "wait";
			items.push(type === "ready" ? { type, start: p, end: p + 1, batch: false } : { type, start: p, end: p + 1 });
			p++;
			continue;
		}
		// The batch: the smallest span holding every call and result its entries share.
		let end = hi(p) + 1;
		let broken = lo(p) < p;
		let incomplete = false;
		let blocked = false;
		for (let q = p; q < end; q++) {
			if (hi(q) + 1 > end) end = hi(q) + 1;
			if (lo(q) < p || covered[q] === 1) broken = true;
			if (noResult(q)) incomplete = true;
			if (never(q)) blocked = true;
		}
		end = Math.min(end, n);
		const type = broken || blocked ? "never" : incomplete ? "wait" : "ready";
		items.push(type === "ready" ? { type, start: p, end, batch: true } : { type, start: p, end });
		p = end;
	}
	return items;
}

/** The last user entry in [from, n), or -1. */
export function lastUserIn(entries: readonly LatticeEntry[], from: number, n: number): number {
	for (let p = n - 1; p >= from; p--) if (entries[p].role === "user") return p;
	return -1;
}
