// The shapes of a fold: the spec an operation asks for, the node the structure builds from it,
// and the plain views the lattice hands out.
import type { BriefProvenance, FoldId, FoldKind, FoldState, HexHash } from "../fold-types.ts";

/** A direct child of a fold, in order. */
export type FoldChild = { type: "leaf"; entryId: string } | { type: "fold"; id: FoldId };

/** What the model sees at one place of the window. */
export type WindowItem = { type: "raw"; entryId: string } | { type: "fold"; id: FoldId };

/** One leaf of a fold: an entry of its span. */
export interface FoldLeaf {
	entryId: string;
	hash: HexHash;
}

/** A fold as an operation asks for it; identity, id and structure are derived by the builder. */
export interface FoldSpec {
	start: number;
	end: number;
	kind: FoldKind;
	state: FoldState;
	brief: string;
	provenance: BriefProvenance;
	/** The id this fold had before the change: a fold carried over must keep it (its content is fixed). */
	was?: FoldId;
}

/**
 * A fold in the built structure. Span, identity and children are fixed for its lifetime, and so is
 * its slot; its parent changes only when a new fold is laid over it (it was a root). Kind, state,
 * brief and provenance are attributes an operation may change in place (none of them enters the
 * identity).
 */
export interface FoldNode {
	readonly id: FoldId;
	readonly identity: HexHash;
	readonly identityBytes: Uint8Array;
	kind: FoldKind;
	state: FoldState;
	brief: string;
	provenance: BriefProvenance;
	/** Positions, [start, end). */
	readonly start: number;
	readonly end: number;
	/** Index in the structure's nodes. */
	readonly slot: number;
	/** Slot of the parent, -1 for a root. */
	parent: number;
	/** Direct children in order: a leaf as its position p (>= 0), a fold as -(slot + 1). */
	readonly kids: readonly number[];
	/** Levels of folds in it: 1 with leaves only, else one more than its highest child fold. */
	readonly height: number;
}

/** A fold as the lattice hands it out: plain data, detached from the lattice. */
export interface FoldView {
	id: FoldId;
	identity: HexHash;
	kind: FoldKind;
	state: FoldState;
	brief: string;
	provenance: BriefProvenance;
	start: number;
	end: number;
	parent: FoldId | null;
	depth: number;
	children: FoldChild[];
}

/** A root fold's place at the top level: its span and state. */
export interface RootSpan {
	readonly id: FoldId;
	readonly state: FoldState;
	/** Positions, [start, end). */
	readonly start: number;
	readonly end: number;
}

import { foldIdOf } from "../fold-types.ts";

export { foldIdOf };

/** Encoded kid -> fold slot, for kids < 0. */
export function kidFold(kid: number): number {
	return -kid - 1;
}

/** Canonical (pre-order) order of a laminar family: start ascending, the longer first on equal starts. */
export function compareSpans(a: { start: number; end: number }, b: { start: number; end: number }): number {
	return a.start - b.start || b.end - a.end;
}

/** `committed fold f0123456789 [3, 7)` / `pending mark f... [3, 7)`, for reasons. */
export function describeFold(f: FoldNode): string {
	return `${f.state === "pending" ? "pending mark" : `${f.state} fold`} ${f.id} [${f.start}, ${f.end})`;
}

/** A node for `spec` with the identity, place and children the builder found for it. */
export function nodeOf(
	s: FoldSpec,
	identityBytes: Uint8Array,
	identity: HexHash,
	at: { slot: number; parent: number; kids: readonly number[]; height: number },
): FoldNode {
	const { start, end, kind, state, brief, provenance } = s;
	return { id: foldIdOf(identity), identity, identityBytes, kind, state, brief, provenance, start, end, ...at };
}

export function specOf(f: FoldNode): FoldSpec {
	return {
		start: f.start,
		end: f.end,
		kind: f.kind,
		state: f.state,
		brief: f.brief,
		provenance: f.provenance,
		was: f.id,
	};
}
