// How much of what was folded the window still names: of the tool calls inside the folds the
// window shows as briefs, the share whose tool name and principal argument (call-args.ts) can be
// read in one line of a brief the window shows. A value counts when the line holds its first
// PRINCIPAL_KEY_CHARS characters (a number with its key, `stage=3`) literally, or once one `{a,b}` group of the line (nested groups
// inside it too) is replaced by one of its alternatives: index lines factor common prefixes and
// suffixes that way (`src/{a,b}.ts`), and a directory the brief declares once (`$R = /repo`) is read
// back where its lines write `$R/`. The tool name must be on the same line, and that line must
// speak for a fold holding the call: the brief's own lines, or the index line of the child (at
// any depth below) it lies in.
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { principalKey } from "../briefs/call-args.ts";
import { rootExpanded } from "../briefs/path-root.ts";
import type { FoldId } from "../fold-types.ts";
import type { FoldLattice } from "../lattice/index.ts";

export interface IndexCoverage {
	/** Tool calls inside the folds the window shows as briefs. */
	calls: number;
	/** Of those, calls whose name and principal argument a shown brief names. */
	visible: number;
	share: number;
	/** Calls named by the brief of some fold holding them at any depth (what peek or expand reach in one step). */
	anyDepth: number;
	/** Briefs the window shows, and their characters in all. */
	briefs: number;
	briefChars: number;
	/** Per brief the window shows: its fold, calls and calls named. */
	perBrief: { fold: string; chars: number; calls: number; visible: number }[];
	/** Up to 20 calls that are not named, for reading. */
	missing: { fold: string; name: string; principal: string }[];
}

interface FoldedCall {
	/** The shown fold it is in, and every fold holding it up to that one (innermost first). */
	fold: string;
	owners: ReadonlySet<string>;
	name: string;
	/** The principal argument's identifying text, or "" for a call without arguments. */
	key: string;
}

/** Every way of reading `line` with one brace group (and the groups inside it) resolved. */
export function braceReadings(line: string, cap = 4096): string[] {
	const out: string[] = [];
	for (const [start, end] of topGroups(line)) {
		for (const alt of alternatives(line.slice(start + 1, end - 1), cap)) {
			if (out.length >= cap) return out;
			out.push(line.slice(0, start) + alt + line.slice(end));
		}
	}
	return out;
}

/** [start, end) of each outermost balanced `{...}` group. */
function topGroups(s: string): [number, number][] {
	const out: [number, number][] = [];
	let depth = 0;
	let open = -1;
	for (let i = 0; i < s.length; i++) {
		const c = s[i];
		if (c === "{") {
			if (depth === 0) open = i;
			depth++;
		} else if (c === "}" && depth > 0) {
			depth--;
			if (depth === 0) out.push([open, i + 1]);
		}
	}
	return out;
}

const RANGE = /^(-?\d{1,15})\.\.(-?\d{1,15})$/;

/** The alternatives of a group's inside (split at top-level commas; `a..b` is a range), each expanded. */
function alternatives(inside: string, cap: number): string[] {
	const out: string[] = [];
	let depth = 0;
	let from = 0;
	for (let i = 0; i <= inside.length && out.length < cap; i++) {
		const c = inside[i];
		if (c === "{") depth++;
		else if (c === "}") depth--;
		else if ((c === "," && depth === 0) || i === inside.length) {
			const alt = inside.slice(from, i);
			from = i + 1;
			const range = RANGE.exec(alt);
			if (range) {
				for (let n = Number(range[1]); n <= Number(range[2]) && out.length < cap; n++) out.push(String(n));
			} else out.push(...expand(alt, cap - out.length));
		}
	}
	return out;
}

/** Every full expansion of `s` (all its groups, in sequence and nested), at most `cap`. */
function expand(s: string, cap: number): string[] {
	const groups = topGroups(s);
	if (groups.length === 0) return [s];
	const [start, end] = groups[0];
	const rest = expand(s.slice(end), cap);
	const out: string[] = [];
	for (const alt of alternatives(s.slice(start + 1, end - 1), cap)) {
		for (const r of rest) {
			if (out.length >= cap) return out;
			out.push(s.slice(0, start) + alt + r);
		}
	}
	return out;
}

function foldedCalls(lattice: FoldLattice, byId: ReadonlyMap<string, SessionEntry>, shown: string[]): FoldedCall[] {
	const out: FoldedCall[] = [];
	for (const id of shown) {
		for (const leaf of lattice.leavesOf(id as FoldId) ?? []) {
			const e = byId.get(leaf.entryId);
			if (e?.type !== "message" || e.message.role !== "assistant") continue;
			const owners = new Set<string>();
			for (let f = lattice.foldOf(leaf.entryId); f && !owners.has(id); f = lattice.get(f)?.parent ?? null)
				owners.add(f);
			for (const b of e.message.content) {
				if (b.type !== "toolCall") continue;
				out.push({ fold: id, owners, name: b.name, key: principalKey(b.arguments) });
			}
		}
	}
	return out;
}

/** A consolidation's index line names its child first (`- f0123456789 …`); other lines speak for the brief's fold. */
const CHILD_LINE = /^- (f[0-9a-f]{10})\b/;

const wordRe = (name: string) => new RegExp(`(^|[^\\w])${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}([^\\w]|$)`);

/** The index coverage of the window `lattice` shows, over the context's session entries. */
export function indexCoverage(lattice: FoldLattice, sources: readonly SessionEntry[]): IndexCoverage {
	const byId = new Map(sources.map((s) => [s.id, s]));
	const shown = lattice.window().flatMap((w) => (w.type === "fold" ? [w.id] : []));
	const briefs = shown.map((id) => lattice.get(id)?.brief ?? "");
	const lines = briefs.flatMap((b, i) =>
		rootExpanded(b.split("\n")).map((line) => ({
			owner: CHILD_LINE.exec(line)?.[1] ?? shown[i],
			line,
			readings: braceReadings(line),
		})),
	);
	const calls = foldedCalls(lattice, byId, shown);
	const missing: IndexCoverage["missing"] = [];
	const perBrief = shown.map((fold, i) => ({ fold, chars: briefs[i].length, calls: 0, visible: 0 }));
	const slot = new Map(shown.map((id, i) => [id, perBrief[i]]));
	let visible = 0;
	let anyDepth = 0;
	const briefLines = new Map<string, string[]>();
	const briefOf = (id: string) => {
		let lines = briefLines.get(id);
		if (!lines) {
			lines = rootExpanded((lattice.get(id as FoldId)?.brief ?? "").split("\n"));
			briefLines.set(id, lines);
		}
		return lines;
	};
	const named = (line: string, c: FoldedCall) =>
		wordRe(c.name).test(line) && (line.includes(c.key) || braceReadings(line).some((r) => r.includes(c.key)));
	for (const c of calls) {
		const name = wordRe(c.name);
		const hit = lines.some(
			(l) =>
				c.owners.has(l.owner) &&
				name.test(l.line) &&
				(l.line.includes(c.key) || l.readings.some((r) => r.includes(c.key))),
		);
		const b = slot.get(c.fold);
		if (b) {
			b.calls++;
			if (hit) b.visible++;
		}
		if (hit) visible++;
		else if (missing.length < 20) missing.push({ fold: c.fold, name: c.name, principal: c.key });
		if (hit || [...c.owners].some((f) => briefOf(f).some((l) => named(l, c)))) anyDepth++;
	}
	return {
		calls: calls.length,
		visible,
		share: calls.length === 0 ? 1 : visible / calls.length,
		anyDepth,
		briefs: shown.length,
		briefChars: briefs.reduce((n, b) => n + b.length, 0),
		perBrief,
		missing,
	};
}
