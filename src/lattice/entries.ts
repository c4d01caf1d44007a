// The context a lattice is built over: the active branch's entries in order, and the span checks
// that depend only on them (system entries, tool batches). Positions are indices in this list.
import { fromHex } from "../../bindings/hex.ts";
import type { HexHash } from "../fold-types.ts";
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

/** Every entry mentioning one tool call id: the assistant entries making it and the results answering it. */
interface CallGroup {
	calls: number[];
	results: number[];
}

const HASH = /^[0-9a-f]{64}$/;

function checkEntry(e: unknown, i: number): LatticeEntry {
	const at = `entry ${i}`;
	if (typeof e !== "object" || e === null) refuse(`${at} is ${show(e)}, expected a LatticeEntry object`);
	const { id, hash, bytes, role, toolCallIds, toolCallId } = e as Record<string, unknown>;
	if (typeof id !== "string" || id === "") refuse(`${at} has id ${show(id)}, expected a non-empty string`);
	const named = `entry ${show(id)} (position ${i})`;
	if (typeof hash !== "string" || !HASH.test(hash)) {
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

/** The entries, indexed for O(1) position lookups and O(span) span checks. */
export class ContextIndex {
	readonly entries: readonly LatticeEntry[];
	/** Entry digests as bytes, for fold identities. */
	readonly digests: readonly Uint8Array[];
	readonly #positions: ReadonlyMap<string, number>;
	/** nextSystem[p]: the first system entry at or after p (size when none). */
	readonly #nextSystem: Int32Array;
	/** The positions every entry at p must share a fold with: [toolLo[p], toolHi[p]] (p itself when none). */
	readonly #toolLo: Int32Array;
	readonly #toolHi: Int32Array;
	/** 1 when one of p's tool calls lacks its call or its result in the context. */
	readonly #toolOpen: Uint8Array;
	readonly #groups: ReadonlyMap<string, CallGroup>;

	/** Check and index the entries; throws `Refused` naming the first bad entry. */
	constructor(input: unknown) {
		if (!Array.isArray(input)) refuse(`the context must be an array of entries, got ${show(input)}`);
		const entries = input.map(checkEntry);
		const n = entries.length;
		const positions = new Map<string, number>();
		const groups = new Map<string, CallGroup>();
		const group = (callId: string) => {
			let g = groups.get(callId);
			if (!g) {
				g = { calls: [], results: [] };
				groups.set(callId, g);
			}
			return g;
		};
		entries.forEach((e, p) => {
			const seen = positions.get(e.id);
			if (seen !== undefined) refuse(`entries at positions ${seen} and ${p} share the id ${show(e.id)}`);
			positions.set(e.id, p);
			for (const c of e.toolCallIds ?? []) group(c).calls.push(p);
			if (e.toolCallId !== undefined) group(e.toolCallId).results.push(p);
		});
		const nextSystem = new Int32Array(n + 1);
		nextSystem[n] = n;
		for (let p = n - 1; p >= 0; p--) nextSystem[p] = entries[p].role === "system" ? p : nextSystem[p + 1];
		const toolLo = Int32Array.from({ length: n }, (_, p) => p);
		const toolHi = Int32Array.from({ length: n }, (_, p) => p);
		const toolOpen = new Uint8Array(n);
		for (const g of groups.values()) {
			const members = [...g.calls, ...g.results];
			const lo = Math.min(...members);
			const hi = Math.max(...members);
			const open = g.calls.length === 0 || g.results.length === 0;
			for (const p of members) {
				toolLo[p] = Math.min(toolLo[p], lo);
				toolHi[p] = Math.max(toolHi[p], hi);
				if (open) toolOpen[p] = 1;
			}
		}
		this.entries = Object.freeze(entries);
		this.digests = Object.freeze(entries.map((e) => fromHex(e.hash)));
		this.#positions = positions;
		this.#nextSystem = nextSystem;
		this.#toolLo = toolLo;
		this.#toolHi = toolHi;
		this.#toolOpen = toolOpen;
		this.#groups = groups;
	}

	get size(): number {
		return this.entries.length;
	}

	position(entryId: string): number | undefined {
		return this.#positions.get(entryId);
	}

	/** The position of an entry named by the caller, or a refusal naming what was wrong with it. */
	resolve(entryId: unknown, role = "entry"): number {
		if (typeof entryId !== "string") refuse(`${role} id must be a string, got ${show(entryId)}`);
		const p = this.#positions.get(entryId);
		if (p === undefined) {
			refuse(`unknown ${role} ${show(entryId)}: the branch's context (${this.size} entries) has no entry with that id`);
		}
		return p;
	}

	/** `entry "id" (position p)`, for reasons. */
	label(p: number): string {
		return `entry ${show(this.entries[p].id)} (position ${p})`;
	}

	/** `[s, e) (entries "a".."b")`, for reasons. */
	spanLabel(s: number, e: number): string {
		return `[${s}, ${e}) (entries ${show(this.entries[s].id)}..${show(this.entries[e - 1].id)})`;
	}

	/** Why [s, e) can never be one fold's span (a system entry, a split tool batch), or null. */
	spanProblem(s: number, e: number): string | null {
		const sys = this.#nextSystem[s];
		if (sys < e)
			return `the span ${this.spanLabel(s, e)} contains system ${this.label(sys)}: system entries never fold`;
		for (let p = s; p < e; p++) {
			if (this.#toolOpen[p] === 0 && this.#toolLo[p] >= s && this.#toolHi[p] < e) continue;
			return this.#toolProblem(p, s, e);
		}
		return null;
	}

	/** The first tool call of entry p that [s, e) fails to hold whole, in words. */
	#toolProblem(p: number, s: number, e: number): string {
		const entry = this.entries[p];
		const span = `the span ${this.spanLabel(s, e)}`;
		for (const c of entry.toolCallIds ?? []) {
			const g = this.#groups.get(c)!;
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
		const g = c === undefined ? undefined : this.#groups.get(c);
		if (c === undefined || g === undefined) return `${span} cuts through the tool batch of ${this.label(p)}`;
		if (g.calls.length === 0) {
			return `${span} holds tool result ${this.label(p)}, whose call ${show(c)} no entry in the context makes: an orphaned result never folds`;
		}
		const out = [...g.calls, ...g.results].find((q) => q < s || q >= e)!;
		const what = g.calls.includes(out) ? `its call ${show(c)} in` : `another result of call ${show(c)},`;
		return `${span} splits tool result ${this.label(p)} from ${what} ${this.label(out)}: a fold covers whole tool batches`;
	}
}
