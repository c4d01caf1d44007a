// The nodes of one verifyFold walk (each distinct record once, its children as leaf reads or shared
// nodes) and the checks run over them before any leaf or identity is trusted.
import type { FoldId, FoldRecord, HexHash } from "../fold-types.ts";
import type { ReadRequest } from "./content.ts";
import { StoreError } from "./errors.ts";

/** One distinct record of the walk. */
export interface FoldNode {
	record: FoldRecord;
	/** The first path by which the walk reached this record (for messages). */
	trail: FoldId[];
	/** Per child: a leaf (index of its distinct object read) or the nested node (shared when repeated). */
	refs: ({ leaf: number; entryId: string; bytes: number } | FoldNode)[];
	/** Leaves the record expands to, nested folds included. */
	leafCount: number;
	computed?: HexHash;
}

/** How many leaves each distinct record expands to (children first), before anything is built; refuses past `maxLeaves`. */
export function countLeaves(postOrder: readonly FoldNode[], maxLeaves: number): void {
	for (const node of postOrder) {
		node.leafCount = node.refs.reduce((n, ref) => n + ("leaf" in ref ? 1 : ref.leafCount), 0);
		if (node.leafCount > maxLeaves) {
			throw new StoreError(
				"BAD_RECORD",
				`fold ${node.trail.join(" > ")}: expands to ${node.leafCount} leaves, over the limit of ${maxLeaves}; not verified`,
				{ fold: node.record.id },
			);
		}
	}
}

/** Each leaf's bytes have the length its record states (their hash was checked as they were read). */
export function checkLeafSizes(
	postOrder: readonly FoldNode[],
	reads: readonly ReadRequest[],
	bytes: readonly Uint8Array[],
): void {
	for (const node of postOrder) {
		for (const ref of node.refs) {
			if ("leaf" in ref && bytes[ref.leaf].byteLength !== ref.bytes) {
				const hash = reads[ref.leaf].hash;
				throw new StoreError(
					"BAD_RECORD",
					`fold ${node.trail.join(" > ")}: entry ${ref.entryId}: object ${hash} verifies but the record says ${ref.bytes} bytes and it has ${bytes[ref.leaf].byteLength}`,
					{ fold: node.record.id, entry: ref.entryId, expected: hash },
				);
			}
		}
	}
}
