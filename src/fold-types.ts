// The vocabulary the lattice, the store and the session records share.

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
