// The frontier's rules computed the straightforward way, for property tests of the optimised pass
// (src/policy/frontier.ts): one whole pass over a context of exactly the entries examined, tool
// groups gathered from those entries alone, folds read as FoldViews. No cursor, no index of tool
// batches, no reuse between passes: slow, and easy to check by reading.
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { FoldView, MarkRequest } from "../../src/lattice/index.ts";
import type { FrontierSettings } from "../../src/policy/frontier.ts";
import type { ContextEntries } from "../../src/session/context-entries.ts";

type Unit =
	| { type: "ready"; start: number; end: number; batch: boolean }
	| { type: "wait" | "never"; start: number; end: number }
	| { type: "fold"; start: number; end: number; committed: boolean };

function toolNamesOf(entry: SessionEntry): string[] {
	if (entry.type !== "message") return [];
	const m = entry.message as { role?: string; content?: unknown; toolName?: unknown };
	if (m.role === "toolResult") return typeof m.toolName === "string" ? [m.toolName] : [];
	if (m.role !== "assistant" || !Array.isArray(m.content)) return [];
	return m.content.flatMap((b: { type?: string; name?: unknown }) =>
		b?.type === "toolCall" && typeof b.name === "string" ? [b.name] : [],
	);
}

/** The marks a whole pass proposes over `context` (every entry of it), with these folds and pins. */
export function referenceMarks(
	context: ContextEntries,
	folds: readonly FoldView[],
	pins: readonly string[],
	settings: FrontierSettings,
): MarkRequest[] {
	const { entries, sources } = context;
	const n = entries.length;
	// Tool groups, by call id, from these entries only.
	const groups = new Map<string, { calls: number[]; results: number[] }>();
	const groupOf = (id: string) => groups.get(id) ?? groups.set(id, { calls: [], results: [] }).get(id)!;
	entries.forEach((e, p) => {
		for (const c of e.toolCallIds ?? []) groupOf(c).calls.push(p);
		if (e.toolCallId !== undefined) groupOf(e.toolCallId).results.push(p);
	});
	const idsOf = (p: number) => [
		...(entries[p].toolCallIds ?? []),
		...(entries[p].toolCallId ? [entries[p].toolCallId] : []),
	];
	const membersOf = (p: number) => idsOf(p).flatMap((c) => [...groupOf(c).calls, ...groupOf(c).results]);
	const lo = (p: number) => Math.min(p, ...membersOf(p));
	const hi = (p: number) => Math.max(p, ...membersOf(p));
	const noResult = (p: number) => idsOf(p).some((c) => groupOf(c).results.length === 0);
	const noCall = (p: number) => idsOf(p).some((c) => groupOf(c).calls.length === 0);
	const covered = (p: number) => folds.some((f) => f.start <= p && p < f.end);
	const never = (p: number) =>
		entries[p].role === "system" ||
		pins.includes(entries[p].id) ||
		noCall(p) ||
		toolNamesOf(sources[p]).some((t) => settings.blacklistAutoFoldTools.has(t));
	let lastUser = -1;
	entries.forEach((e, p) => {
		if (e.role === "user") lastUser = p;
	});

	const units: Unit[] = [];
	for (let p = 0; p < n; ) {
		const root = folds.find((f) => f.parent === null && f.start === p);
		if (root) {
			units.push({ type: "fold", start: root.start, end: root.end, committed: root.state === "committed" });
			p = root.end;
			continue;
		}
		if (idsOf(p).length === 0) {
			const type = never(p) ? "never" : p < lastUser ? "ready" : "wait";
			units.push(type === "ready" ? { type, start: p, end: p + 1, batch: false } : { type, start: p, end: p + 1 });
			p++;
			continue;
		}
		let end = hi(p) + 1;
		let broken = lo(p) < p;
		let incomplete = false;
		let blocked = false;
		for (let q = p; q < end; q++) {
			end = Math.max(end, hi(q) + 1);
			if (lo(q) < p || covered(q)) broken = true;
			if (noResult(q)) incomplete = true;
			if (never(q)) blocked = true;
		}
		end = Math.min(end, n);
		const type = broken || blocked ? "never" : incomplete ? "wait" : "ready";
		units.push(type === "ready" ? { type, start: p, end, batch: true } : { type, start: p, end });
		p = end;
	}

	const bytes = (s: number, e: number) => {
		if (e > n) return Number.NaN; // a span past the examined entries is never cut
		let sum = 0;
		for (let p = s; p < e; p++) sum += entries[p].bytes;
		return sum;
	};
	const cuts: { start: number; end: number; batchesOnly: boolean }[] = [];
	let run: Extract<Unit, { type: "ready" }>[] = [];
	let left: Unit | undefined;
	const closeRun = (right: Unit | undefined) => {
		const made: { start: number; end: number; batchesOnly: boolean }[] = [];
		let open: { start: number; end: number; batchesOnly: boolean } | undefined;
		for (const u of run) {
			open = open
				? { start: open.start, end: u.end, batchesOnly: open.batchesOnly && u.batch }
				: { start: u.start, end: u.end, batchesOnly: u.batch };
			if (bytes(open.start, open.end) >= settings.minFoldChars) {
				made.push(open);
				open = undefined;
			}
		}
		if (open && right && (right.type === "fold" || right.type === "never")) {
			const last = made.at(-1);
			if (last) made[made.length - 1] = { ...last, end: open.end, batchesOnly: last.batchesOnly && open.batchesOnly };
			else {
				const absorbed =
					left?.type === "fold" && left.committed
						? { start: left.start, end: open.end, batchesOnly: false }
						: right.type === "fold" && right.committed
							? { start: open.start, end: right.end, batchesOnly: false }
							: undefined;
				if (absorbed && bytes(absorbed.start, absorbed.end) >= settings.minFoldChars) made.push(absorbed);
			}
		}
		cuts.push(...made);
	};
	for (const u of units) {
		if (u.type === "ready") {
			run.push(u);
			continue;
		}
		if (run.length > 0) closeRun(u);
		run = [];
		left = u;
	}
	if (run.length > 0) closeRun(undefined);
	cuts.sort((a, b) => a.start - b.start);
	// Marks never overlap: two gaps that both absorbed the committed root between them are one mark.
	for (let i = 1; i < cuts.length; i++) {
		if (cuts[i].start >= cuts[i - 1].end) continue;
		const [a, b] = [cuts[i - 1], cuts[i]];
		cuts.splice(i - 1, 2, { start: a.start, end: Math.max(a.end, b.end), batchesOnly: a.batchesOnly && b.batchesOnly });
		i--;
	}
	return cuts.slice(0, settings.maxCutsPerPass).map((c) => ({
		from: entries[c.start].id,
		to: entries[c.end - 1].id,
		kind: c.batchesOnly ? "tool-batch" : "chapter",
	}));
}
