// What `peek` and search read: one fold's exact source, verified, and its readable text view.
// A committed or expanded fold is read from the store alone (verifyFold: every record and leaf
// object checked against its SHA-256), which is the lossless promise itself; a pending mark is
// not in the window yet and its leaves may not be written, so it is read from the session's own
// entries, each re-hashed by the core and compared with the leaf hash the lattice holds.
import { DIGEST_BYTES, type PiFoldCore, toHex } from "../../bindings/index.ts";
import type { FoldId } from "../fold-types.ts";
import type { FoldLattice, FoldView } from "../lattice/index.ts";
import { type FoldStore, isStoreError } from "../store/index.ts";
import { errorMessage, type Outcome, type ProblemState } from "../vocabulary.ts";
import { type ContextEntries, textAt } from "./canonical.ts";
import { entryText } from "./entry-text.ts";
import { healLeaves, healRecords } from "./heal.ts";
import type { RecordIndex } from "./persist.ts";

interface SourceLeaf {
	entryId: string;
	/** The entry's exact canonical JSON (one session-file line). */
	text: string;
	/** The innermost fold under `id` holding this leaf, or the fold itself. */
	fold: FoldId;
}

export interface FoldSource {
	fold: FoldView;
	leaves: SourceLeaf[];
	/** Where the bytes came from, both verified by SHA-256. */
	verifiedBy: "store" | "session";
	bytes: number;
}

interface SourceInput {
	lattice: FoldLattice;
	context: ContextEntries;
	store: FoldStore;
	records: RecordIndex;
	core: PiFoldCore;
	/** Recorded id -> lattice id, for folds whose entries changed in the session file since. */
	aliases?: ReadonlyMap<FoldId, FoldId>;
	/** Folds known damaged: one whose leaves cannot be healed joins them. */
	damaged?: Map<FoldId, string>;
	problem?: (where: string, reason: string, state?: ProblemState) => void;
}

/** The id a fold was recorded (and stored) under: its own, unless its entries changed since. */
function recordedIdOf(aliases: ReadonlyMap<FoldId, FoldId> | undefined, id: FoldId): FoldId | undefined {
	if (aliases) for (const [recorded, now] of aliases) if (now === id) return recorded;
	return undefined;
}

/**
 * A fold's exact source, verified. A committed fold whose leaf object fails verification is healed
 * from the session's own bytes (when they still hash to it) and read again; one that cannot be
 * healed is listed as damaged (never folded into a new parent), and the refusal names what is wrong.
 */
export function readFoldSource(input: SourceInput, id: FoldId): Outcome<{ source: FoldSource }> {
	const first = readOnce(input, id);
	if (first.ok) return first;
	if (first.leaf === undefined) return healedRecords(input, id, first.reason);
	// Each pass writes every leaf the session still holds, so a second failure is rare; bounded all the same.
	let failed = first;
	for (let pass = 0; pass < HEAL_PASSES && failed.leaf; pass++) {
		const healed = healLeaves(input, id, failed.leaf);
		if (!healed.ok) return damagedFold(input, id, failed.leaf.fold, `${failed.reason}; not repaired: ${healed.reason}`);
		const again = readOnce(input, id);
		if (again.ok) {
			input.problem?.("store", `${first.reason}; written again from the session's own bytes`, "repaired");
			return again;
		}
		failed = again;
	}
	return damagedFold(input, id, failed.leaf?.fold ?? id, `${failed.reason}; not repaired`);
}

/**
 * A committed fold whose store read failed short of a leaf (a record gone or damaged under it):
 * its records written again from the session's own bytes and read again; when they cannot be, it
 * is known damaged at once (status says so; nothing is consolidated over it).
 */
function healedRecords(input: SourceInput, id: FoldId, reason: string): Outcome<{ source: FoldSource }> {
	const fold = input.lattice.get(id);
	if (!fold || fold.state === "pending" || !input.records.has(id)) return { ok: false, reason };
	const healed = healRecords(input, id);
	if (!healed.ok || healed.records === 0) {
		return damagedFold(
			input,
			id,
			id,
			`${reason}; not repaired: ${healed.ok ? "no record under it could be written again" : healed.reason}`,
		);
	}
	const again = readOnce(input, id);
	if (!again.ok) return damagedFold(input, id, id, `${reason}; not repaired: ${again.reason}`);
	input.problem?.("store", `${reason}; written again from the session's own bytes`, "repaired");
	return again;
}

/** Reads that heal a leaf and try again, at most. */
const HEAL_PASSES = 3;

/** The fold, and every fold around the unreadable leaf, are known damaged: none is folded into a new parent. */
function damagedFold(input: SourceInput, id: FoldId, leafOf: FoldId, why: string): { ok: false; reason: string } {
	input.damaged?.set(id, why);
	for (let f = input.lattice.get(leafOf); f; f = f.parent ? input.lattice.get(f.parent) : undefined) {
		input.damaged?.set(f.id, why);
	}
	input.problem?.("store", why);
	return { ok: false, reason: why };
}

type LeafFailure = { entry: string; expected: string; fold: FoldId };

/** One verified read; a leaf object that failed is named with its entry, its hash and its innermost fold. */
function readOnce(
	input: SourceInput,
	id: FoldId,
): { ok: true; source: FoldSource } | { ok: false; reason: string; leaf?: LeafFailure } {
	const { lattice, context, store, records, core } = input;
	const fold = lattice.get(id);
	if (!fold) return { ok: false, reason: `unknown fold ${id}` };
	const record = records.get(id);
	try {
		if (fold.state !== "pending" && record !== undefined) {
			// A fold whose entries changed in the session since is served from the store as recorded.
			const recorded = recordedIdOf(input.aliases, id);
			const verified = store.verifyFold(record, recorded ? { id: recorded } : { id, identity: fold.identity });
			const decoder = new TextDecoder("utf-8", { fatal: true });
			const leaves = verified.leaves.map((l) => ({ entryId: l.entryId, text: decoder.decode(l.bytes), fold: l.fold }));
			return { ok: true, source: { fold, leaves, verifiedBy: "store", bytes: sumBytes(verified.leaves) } };
		}
		const leafList = lattice.leavesOf(id) ?? [];
		const texts = leafList.map((l, i) => {
			const p = fold.start + i;
			if (context.entries[p]?.id !== l.entryId) throw new Error(`leaf ${l.entryId} is not at its place in the context`);
			return textAt(context, p);
		});
		const digests = core.hashSpans(texts);
		leafList.forEach((l, i) => {
			const actual = toHex(digests, i * DIGEST_BYTES, (i + 1) * DIGEST_BYTES);
			if (actual !== l.hash) {
				throw new Error(
					`fold ${id}, entry ${l.entryId}: the session's bytes hash to ${actual}, the fold holds ${l.hash}`,
				);
			}
		});
		const owner = innermostOwners(lattice, fold);
		const leaves = leafList.map((l, i) => ({ entryId: l.entryId, text: texts[i], fold: owner[i] }));
		const bytes = texts.reduce((s, t) => s + new TextEncoder().encode(t).length, 0);
		return { ok: true, source: { fold, leaves, verifiedBy: "session", bytes } };
	} catch (err) {
		const reason = `fold ${id} could not be read back: ${errorMessage(err)}`;
		if (!isStoreError(err) || err.entry === undefined || err.expected === undefined || fold.state === "pending") {
			return { ok: false, reason };
		}
		return { ok: false, reason, leaf: { entry: err.entry, expected: err.expected, fold: err.fold ?? id } };
	}
}

function sumBytes(leaves: readonly { bytes: Uint8Array }[]): number {
	return leaves.reduce((s, l) => s + l.bytes.length, 0);
}

/** For each leaf position of `fold`, the innermost fold (at or under it) that holds it. */
export function innermostOwners(lattice: FoldLattice, fold: FoldView): FoldId[] {
	const out = new Array<FoldId>(fold.end - fold.start).fill(fold.id);
	const walk = (f: FoldView) => {
		for (const c of f.children) {
			if (c.type !== "fold") continue;
			const sub = lattice.get(c.id);
			if (!sub) continue;
			for (let p = sub.start; p < sub.end; p++) out[p - fold.start] = sub.id;
			walk(sub);
		}
	};
	walk(fold);
	return out;
}

/** One part of a fold's text view: a leaf (by its index among the fold's leaves) or a marker line. */
export type ViewPart = { leaf: number } | { marker: string };

/** Parts are joined by a blank line. */
export const VIEW_SEPARATOR = "\n\n";

/**
 * The layout of a fold's text view: its leaves in order (each owned by `owners[i]`, the innermost
 * fold holding it), with a line where each nested fold begins and ends. Peek shows exactly this;
 * search computes byte offsets into it.
 */
export function viewLayout(
	root: FoldId,
	owners: readonly FoldId[],
	lattice: { get(id: FoldId): { kind: string; state: string } | undefined },
): ViewPart[] {
	const parts: ViewPart[] = [];
	let current = root;
	owners.forEach((owner, i) => {
		if (owner !== current) {
			if (current !== root) parts.push({ marker: `## end of nested fold ${current}` });
			if (owner !== root) {
				const sub = lattice.get(owner);
				parts.push({
					marker: `## nested fold ${owner} (${sub?.kind ?? "fold"}, ${sub?.state ?? "?"}; peek it alone by its id)`,
				});
			}
			current = owner;
		}
		parts.push({ leaf: i });
	});
	if (current !== root) parts.push({ marker: `## end of nested fold ${current}` });
	return parts;
}

/** A fold's text view with its parts: each part's text and where it starts (UTF-8 bytes). */
export interface SourceView {
	text: string;
	parts: ViewPart[];
	partTexts: string[];
	offsets: number[];
}

export function sourceView(source: FoldSource, lattice: FoldLattice): SourceView {
	const owners = source.leaves.map((l) => l.fold);
	const parts = viewLayout(source.fold.id, owners, lattice);
	const partTexts = parts.map((p) => ("marker" in p ? p.marker : entryText(source.leaves[p.leaf].text)));
	const encoder = new TextEncoder();
	const offsets = partOffsets(parts, (_p, i) => encoder.encode(partTexts[i]).length);
	return { text: partTexts.join(VIEW_SEPARATOR), parts, partTexts, offsets };
}

/** Where each part of a fold's text view starts, in UTF-8 bytes, given each part's length. */
function partOffsets(parts: readonly ViewPart[], bytesOf: (part: ViewPart, i: number) => number): number[] {
	const sep = new TextEncoder().encode(VIEW_SEPARATOR).length;
	const out: number[] = [];
	let at = 0;
	parts.forEach((p, i) => {
		if (i > 0) at += sep;
		out.push(at);
		at += bytesOf(p, i);
	});
	return out;
}

export interface Slice {
	text: string;
	/** UTF-8 byte offsets of the slice in the whole text view, and the view's length. */
	start: number;
	end: number;
	total: number;
}

/** A UTF-8 byte slice of `text`, moved back to character boundaries so no character is cut. */
export function sliceUtf8(text: string, offset: number, bytes: number): Slice {
	const all = new TextEncoder().encode(text);
	const boundary = (i: number) => {
		let k = Math.max(0, Math.min(i, all.length));
		while (k > 0 && k < all.length && (all[k] & 0xc0) === 0x80) k--;
		return k;
	};
	const start = boundary(offset);
	const end = boundary(start + bytes);
	return { text: new TextDecoder().decode(all.subarray(start, end)), start, end, total: all.length };
}
