// Writing folds to the store before anything shows them: leaf objects first, then each fold's
// record (nested child folds before their parents), so a record never names missing bytes.
import type { FoldId, FoldRecord, HexHash, RecordChild } from "../fold-types.ts";
import type { FoldLattice } from "../lattice/index.ts";
import type { FoldStore } from "../store/index.ts";
import type { ContextEntries } from "./context-entries.ts";
import type { CommittedFold } from "./journal.ts";

/** Fold id -> the hash of its record in the store; grows as folds are written. */
export type RecordIndex = Map<FoldId, HexHash>;

/**
 * Write the folds `ids` (and any nested fold not written yet) to the store; returns what a
 * commit record names for each: its record hash and the brief it shows.
 */
export function persistFolds(
	lattice: FoldLattice,
	store: FoldStore,
	context: ContextEntries,
	ids: readonly FoldId[],
	written: RecordIndex,
): CommittedFold[] {
	const position = new Map(context.entries.map((e, i) => [e.id, i]));
	const write = (id: FoldId): HexHash => {
		const known = written.get(id);
		if (known) return known;
		const fold = lattice.get(id);
		if (!fold) throw new Error(`fold ${id} is not in the lattice`);
		const leafTexts: string[] = [];
		const children: RecordChild[] = fold.children.map((child) => {
			if (child.type === "fold") {
				const record = write(child.id);
				const nested = lattice.get(child.id);
				if (!nested) throw new Error(`fold ${child.id} is not in the lattice`);
				return { type: "fold", id: child.id, identity: nested.identity, record };
			}
			const at = position.get(child.entryId);
			if (at === undefined) throw new Error(`entry ${child.entryId} of fold ${id} is not in the context`);
			const entry = context.entries[at];
			leafTexts.push(context.texts[at]);
			return { type: "leaf", entryId: entry.id, hash: entry.hash, bytes: entry.bytes };
		});
		if (leafTexts.length > 0) store.putLeaves(leafTexts);
		const record: FoldRecord = {
			format: "pi-fold.fold",
			v: 1,
			id: fold.id,
			identity: fold.identity,
			kind: fold.kind,
			brief: fold.brief,
			provenance: fold.provenance,
			children,
		};
		const hash = store.putRecord(record);
		written.set(id, hash);
		return hash;
	};
	return ids.map((id) => {
		const record = write(id);
		const fold = lattice.get(id);
		return { id, record, brief: fold?.brief ?? "", provenance: fold?.provenance ?? "deterministic" };
	});
}
