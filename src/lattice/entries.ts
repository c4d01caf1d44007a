// The context a lattice is built over: the active branch's entries in order, and the span checks
// that depend only on them (system entries, tool batches). Positions are indices in this list.
import { fromHex } from "../../bindings/hex.ts";
import { type HexHash, isHexHash } from "../fold-types.ts";
import { type Backing, copyBacking, emptyBacking, reserve } from "./entry-backing.ts";
import { refuse, show } from "./outcome.ts";

export type EntryRole = "user" | "assistant" | "toolResult" | "custom" | "system" | "other";

const ROLES: Record<EntryRole, true> = {
	user: true,
	assistant: true,
	toolResult: true,
	custom: true,
	system: true,
	other: true,
};
export const ENTRY_ROLES = Object.keys(ROLES) as readonly EntryRole[];

export interface LatticeEntry {
	readonly id: string;
	/** SHA-256 of the entry's canonical bytes, lower-case hex. */
	readonly hash: HexHash;
	readonly bytes: number;
	readonly role: EntryRole;
	/** An assistant entry's tool calls. */
	readonly toolCallIds?: readonly string[];
	/** A tool result's call. */
	readonly toolCallId?: string;
}

/**
 * Positions claimed by ids and tool call ids, shared by an index and the indexes appended to it.
 * A claim counts only when the index reading it holds, at that position, an entry with that id
 * or call: an append adds claims without copying the maps (O(new), not O(context)), and claims
 * left by an append that was refused, or made along another chain of appends from the same
 * index, are simply not seen by an index whose entries do not match them.
 */
interface Claims {
	/** One position, or several (stale claims, or several calls and results of one call id). */
	positions: Map<string, number | number[]>;
	calls: Map<string, number | number[]>;
	results: Map<string, number | number[]>;
}

function claim(map: Map<string, number | number[]>, key: string, p: number): void {
	const known = map.get(key);
	if (known === undefined) map.set(key, p);
	else if (typeof known === "number") map.set(key, [known, p]);
	else known.push(p);
}

/** The claims the entries bear out (`holds`), below `n`, ascending, each once. */
/** A tool call id's entries (its call and its results), their span, and whether one side is missing. */
type ToolGroup = { lo: number; hi: number; open: boolean; members: number[] };

function toolGroup(claims: Claims, c: string, n: number, view: (p: number) => LatticeEntry): ToolGroup {
	const calls = validClaims(claims.calls.get(c), n, (p) => view(p).toolCallIds?.includes(c) ?? false);
	const results = validClaims(claims.results.get(c), n, (p) => view(p).toolCallId === c);
	const members = calls.length === 0 ? results : results.length === 0 ? calls : [...calls, ...results];
	let lo = members[0];
	let hi = members[0];
	for (const q of members) {
		if (q < lo) lo = q;
		if (q > hi) hi = q;
	}
	return { lo, hi, open: calls.length === 0 || results.length === 0, members };
}

/** Refuse an entry whose id an earlier one (in `base` or before it in `added`) has. */
function refuseRepeatedIds(added: readonly LatticeEntry[], from: number, base: ContextIndex | undefined): void {
	const fresh = new Map<string, number>();
	added.forEach((e, k) => {
		const seen = base?.position(e.id) ?? fresh.get(e.id);
		if (seen !== undefined) refuse(`entries at positions ${seen} and ${from + k} share the id ${show(e.id)}`);
		fresh.set(e.id, from + k);
	});
}

function validClaims(
	claims: number | readonly number[] | undefined,
	n: number,
	holds: (p: number) => boolean,
): number[] {
	if (claims === undefined) return [];
	if (typeof claims === "number") return claims < n && holds(claims) ? [claims] : [];
	const out = claims.filter((p) => p < n && holds(p));
	for (let i = 1; i < out.length; i++) if (out[i] <= out[i - 1]) return [...new Set(out)].sort((a, b) => a - b);
	return out;
}

function checkEntry(e: unknown, i: number): LatticeEntry {
	const at = `entry ${i}`;
	if (typeof e !== "object" || e === null) refuse(`${at} is ${show(e)}, expected a LatticeEntry object`);
	const { id, hash, bytes, role, toolCallIds, toolCallId } = e as Record<string, unknown>;
	if (typeof id !== "string" || id === "") refuse(`${at} has id ${show(id)}, expected a non-empty string`);
	const named = `entry ${show(id)} (position ${i})`;
	if (!isHexHash(hash)) {
		refuse(`${named} has hash ${show(hash)}, expected 64 lower-case hex digits`);
	}
	if (typeof bytes !== "number" || !Number.isSafeInteger(bytes) || bytes < 0) {
		refuse(`${named} has bytes ${show(bytes)}, expected a non-negative integer`);
	}
	if (typeof role !== "string" || !Object.hasOwn(ROLES, role)) {
		refuse(`${named} has role ${show(role)}, expected one of ${ENTRY_ROLES.join(", ")}`);
	}
	if (toolCallIds !== undefined) {
		if (!Array.isArray(toolCallIds) || !toolCallIds.every((c) => typeof c === "string" && c !== "")) {
			refuse(`${named} has toolCallIds ${show(toolCallIds)}, expected an array of non-empty strings`);
		}
	}
	if (toolCallId !== undefined && (typeof toolCallId !== "string" || toolCallId === "")) {
		refuse(`${named} has toolCallId ${show(toolCallId)}, expected a non-empty string`);
	}
	const entry: LatticeEntry = { id, hash, bytes, role: role as EntryRole };
	return Object.freeze({
		...entry,
		...(toolCallIds === undefined ? {} : { toolCallIds: Object.freeze([...(toolCallIds as string[])]) }),
		...(toolCallId === undefined ? {} : { toolCallId: toolCallId as string }),
	});
}

/**
 * The tool batches of a context, read-only: the positions each entry must share a fold with
 * ([toolLo, toolHi], its tool calls' and results' whole groups) and where a group lacks its call
 * or its result. An index never changes once built (an append makes a new one), so a caller may
 * keep one for as long as it reads the entries that index was built over.
 */
export interface ToolBatches {
	readonly size: number;
	/** The least position sharing a tool call with position p (p itself when none). */
	toolLo(p: number): number;
	/** The greatest position sharing a tool call with position p (p itself when none). */
	toolHi(p: number): number;
	/** Whether one of p's tool calls lacks its call or its result in the context. */
	toolOpen(p: number): boolean;
	/** Positions of the entries making tool call `callId`, ascending. */
	calls(callId: string): number[];
	/** Positions of the results answering tool call `callId`, ascending. */
	results(callId: string): number[];
}

/** The entries, indexed for O(1) position lookups and O(span) span checks; appending costs O(new). */
export class ContextIndex implements ToolBatches {
	readonly #b: Backing;
	/** How many positions this index has. */
	readonly #n: number;
	/** How many of the backing's system positions are this index's. */
	readonly #systemCount: number;
	readonly #claims: Claims;
	#ownEntries: readonly LatticeEntry[] | undefined;

	/**
	 * Check and index the entries; throws `Refused` naming the first bad entry. With `base` (use
	 * `base.append(entries)`), `input` holds only the entries appended after base's.
	 */
	constructor(input: unknown, base?: ContextIndex) {
		if (!Array.isArray(input)) {
			refuse(
				base
					? `extend takes an array of entries, got ${show(input)}`
					: `the context must be an array of entries, got ${show(input)}`,
			);
		}
		const from = base?.size ?? 0;
		const added = input.map((e, k) => checkEntry(e, from + k));
		refuseRepeatedIds(added, from, base); // every id, before anything is claimed
		const n = from + added.length;
		const claims = base ? base.#claims : { positions: new Map(), calls: new Map(), results: new Map() };
		this.#claims = claims;
		this.#n = n;
		// Claims first (they are validated against entries, so stale ones are harmless), then the
		// groups the new entries touch: their members are the positions whose tool spans change.
		const touched = new Set<string>();
		added.forEach((e, k) => {
			const p = from + k;
			claim(claims.positions, e.id, p);
			for (const c of e.toolCallIds ?? []) {
				claim(claims.calls, c, p);
				touched.add(c);
			}
			if (e.toolCallId !== undefined) {
				claim(claims.results, e.toolCallId, p);
				touched.add(e.toolCallId);
			}
		});
		const view = (p: number) => (p < from ? (base as ContextIndex).#entryAt(p) : added[p - from]);
		const groups = new Map<string, ToolGroup>();
		const group = (c: string) => {
			let g = groups.get(c);
			if (!g) {
				g = toolGroup(claims, c, n, view);
				groups.set(c, g);
			}
			return g;
		};
		const affected = new Set<number>();
		for (const c of touched) for (const p of group(c).members) affected.add(p);

		// Share the backing when this append only writes past its end; else take a copy of our own.
		let earlier = false;
		for (const p of affected) if (p < from) earlier = true;
		const baseB = base === undefined ? undefined : base.#b;
		const b =
			baseB && baseB.entries.length === from && !earlier
				? baseB
				: baseB && base
					? copyBacking(baseB, from, base.#systemCount, n)
					: emptyBacking(Math.max(n, 16));
		reserve(b, n);
		b.entries.push(...added);
		for (const e of added) b.digests.push(fromHex(e.hash));
		added.forEach((e, k) => {
			if (e.role === "system") b.systems.push(from + k);
		});
		this.#systemCount = b.systems.length;
		this.#b = b;
		for (let p = from; p < n; p++) {
			b.toolLo[p] = p;
			b.toolHi[p] = p;
			b.toolOpen[p] = 0;
		}
		// Recompute every member of a touched group from all of its groups (lo, hi and open).
		for (const p of affected) {
			let lo = p;
			let hi = p;
			let open = 0;
			const e = view(p);
			for (const c of e.toolCallIds ?? []) {
				const g = group(c);
				lo = Math.min(lo, g.lo);
				hi = Math.max(hi, g.hi);
				if (g.open) open = 1;
			}
			if (e.toolCallId !== undefined) {
				const g = group(e.toolCallId);
				lo = Math.min(lo, g.lo);
				hi = Math.max(hi, g.hi);
				if (g.open) open = 1;
			}
			b.toolLo[p] = lo;
			b.toolHi[p] = hi;
			b.toolOpen[p] = open;
		}
	}

	/**
	 * The entries, in order: an array of this index's own, copied once from the shared storage when
	 * first read (never the storage itself, which later appends grow: a caller may keep it, and
	 * compare it by identity, for as long as it likes).
	 */
	get entries(): readonly LatticeEntry[] {
		this.#ownEntries ??= this.#b.entries.slice(0, this.#n);
		return this.#ownEntries;
	}

	/** Entry digests as bytes, in order (for fold identities use `digest`). */
	get digests(): readonly Uint8Array[] {
		return this.#b.digests.slice(0, this.#n);
	}

	/** The digest of the entry at p, as bytes. */
	digest(p: number): Uint8Array {
		return this.#b.digests[p];
	}

	/** The entry at position p (p < size), without the copy `entries` makes once per index. */
	at(p: number): LatticeEntry {
		return this.#entryAt(p);
	}

	#entryAt(p: number): LatticeEntry {
		return this.#b.entries[p];
	}

	/** This index followed by `entries` (checked as the constructor checks them); this index is unchanged. */
	append(entries: unknown): ContextIndex {
		return new ContextIndex(entries, this);
	}

	/** Positions of the entries making tool call `callId`, ascending. */
	calls(callId: string): number[] {
		return validClaims(
			this.#claims.calls.get(callId),
			this.#n,
			(p) => this.#entryAt(p).toolCallIds?.includes(callId) ?? false,
		);
	}

	/** Positions of the results answering tool call `callId`, ascending. */
	results(callId: string): number[] {
		return validClaims(this.#claims.results.get(callId), this.#n, (p) => this.#entryAt(p).toolCallId === callId);
	}

	/** Every position mentioning tool call `callId` (calls, then results). */
	members(callId: string): number[] {
		return [...this.calls(callId), ...this.results(callId)];
	}

	get size(): number {
		return this.#n;
	}

	toolLo(p: number): number {
		return this.#b.toolLo[p];
	}

	toolHi(p: number): number {
		return this.#b.toolHi[p];
	}

	toolOpen(p: number): boolean {
		return this.#b.toolOpen[p] === 1;
	}

	position(entryId: string): number | undefined {
		const claims = this.#claims.positions.get(entryId);
		if (claims === undefined) return undefined;
		const n = this.#n;
		if (typeof claims === "number") return claims < n && this.#entryAt(claims).id === entryId ? claims : undefined;
		for (const p of claims) if (p < n && this.#entryAt(p).id === entryId) return p;
		return undefined;
	}

	/** The first system entry at or after p (size when none): a binary search over the few system entries. */
	#nextSystem(p: number): number {
		const sys = this.#b.systems;
		let lo = 0;
		let hi = this.#systemCount;
		while (lo < hi) {
			const mid = (lo + hi) >>> 1;
			if (sys[mid] < p) lo = mid + 1;
			else hi = mid;
		}
		return lo < this.#systemCount ? sys[lo] : this.#n;
	}

	/** The position of an entry named by the caller, or a refusal naming what was wrong with it. */
	resolve(entryId: unknown, role = "entry"): number {
		if (typeof entryId !== "string") refuse(`${role} id must be a string, got ${show(entryId)}`);
		const p = this.position(entryId);
		if (p === undefined) {
			refuse(`unknown ${role} ${show(entryId)}: the branch's context (${this.size} entries) has no entry with that id`);
		}
		return p;
	}

	/** `entry "id" (position p)`, for reasons. */
	label(p: number): string {
		return `entry ${show(this.#entryAt(p).id)} (position ${p})`;
	}

	/** `[s, e) (entries "a".."b")`, for reasons. */
	spanLabel(s: number, e: number): string {
		return `[${s}, ${e}) (entries ${show(this.#entryAt(s).id)}..${show(this.#entryAt(e - 1).id)})`;
	}

	/** Why [s, e) can never be one fold's span (a system entry, a split tool batch), or null. */
	spanProblem(s: number, e: number): string | null {
		const sys = this.#nextSystem(s);
		if (sys < e)
			return `the span ${this.spanLabel(s, e)} contains system ${this.label(sys)}: system entries never fold`;
		const b = this.#b;
		for (let p = s; p < e; p++) {
			if (b.toolOpen[p] === 0 && b.toolLo[p] >= s && b.toolHi[p] < e) continue;
			return this.#toolProblem(p, s, e);
		}
		return null;
	}

	/** The first tool call of entry p that [s, e) fails to hold whole, in words. */
	#toolProblem(p: number, s: number, e: number): string {
		const entry = this.#entryAt(p);
		const span = `the span ${this.spanLabel(s, e)}`;
		for (const c of entry.toolCallIds ?? []) {
			const g = { calls: this.calls(c), results: this.results(c) };
			if (g.results.length === 0) {
				return `${span} holds ${this.label(p)}, whose tool call ${show(c)} has no result yet: an incomplete tool batch never folds`;
			}
			const out = [...g.results, ...g.calls].find((q) => q < s || q >= e);
			if (out !== undefined) {
				const what = g.results.includes(out) ? "its result" : "another entry making the same call";
				return `${span} splits tool call ${show(c)} of ${this.label(p)} from ${what}, ${this.label(out)}: a fold covers whole tool batches`;
			}
		}
		const c = entry.toolCallId;
		const g = c === undefined ? undefined : { calls: this.calls(c), results: this.results(c) };
		if (c === undefined || g === undefined) return `${span} cuts through the tool batch of ${this.label(p)}`;
		if (g.calls.length === 0) {
			return `${span} holds tool result ${this.label(p)}, whose call ${show(c)} no entry in the context makes: an orphaned result never folds`;
		}
		const out = [...g.calls, ...g.results].find((q) => q < s || q >= e)!;
		const what = g.calls.includes(out) ? `its call ${show(c)} in` : `another result of call ${show(c)},`;
		return `${span} splits tool result ${this.label(p)} from ${what} ${this.label(out)}: a fold covers whole tool batches`;
	}
}
