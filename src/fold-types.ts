// The vocabulary the lattice, the store and the session records share: types, and the one
// definition of what a fold id and a hash look like.

/** What a fold covers: a tool batch, a chapter, a fold of folds, or a peek result. */
export type FoldKind = "tool-batch" | "chapter" | "consolidation" | "peek";

/** pending: a mark, not in the window yet; committed: collapsed to its brief; expanded: its children show. */
export type FoldState = "pending" | "committed" | "expanded";

/** Who wrote the brief: the runtime from the span itself, or the agent (`brief` action). */
export type BriefProvenance = "deterministic" | "supplied";

/** Lower-case hex SHA-256, 64 characters. */
export type HexHash = string;

/** A fold id: "f" + the first 10 hex digits of its identity (content-derived, stable). */
export type FoldId = string;

/**
 * The longest brief, in characters (Unicode code points): one cap for the agent's briefs and the
 * runtime's alike. A brief enters the window and every request after it, so it stays short.
 */
export const BRIEF_MAX_CHARS = 2000;

/** How many hex digits of the identity a fold id keeps. */
export const FOLD_ID_HEX_DIGITS = 10;

const FOLD_ID = /^f[0-9a-f]{10}$/;

/** The id of the fold with this identity. */
export function foldIdOf(identity: HexHash): FoldId {
	return `f${identity.slice(0, FOLD_ID_HEX_DIGITS)}`;
}

export function isFoldId(value: unknown): value is FoldId {
	return typeof value === "string" && FOLD_ID.test(value);
}

/** Exactly 64 lower-case hex digits. A char-code loop: every store read checks several, and it beats a regex. */
export function isHexHash(value: unknown): value is HexHash {
	if (typeof value !== "string" || value.length !== 64) return false;
	for (let i = 0; i < 64; i++) {
		const c = value.charCodeAt(i);
		if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
	}
	return true;
}

/** A direct child of a fold as the store records it: a session entry (leaf) or a nested fold. */
export type RecordChild =
	| { type: "leaf"; entryId: string; hash: HexHash; bytes: number }
	| { type: "fold"; id: FoldId; identity: HexHash; record: HexHash };

/**
 * A fold as written to the store (msgpack): enough to verify it from the store alone.
 * identity = SHA-256 over the children's hashes in order (leaf hash, or a child fold's identity).
 */
export interface FoldRecord {
	format: "pi-fold.fold";
	v: 1;
	id: FoldId;
	identity: HexHash;
	kind: FoldKind;
	brief: string;
	provenance: BriefProvenance;
	children: RecordChild[];
}
