// What pi-fold's records on a branch say, reduced in order: every fold they name with its state at
// the branch's end (pending, committed, expanded), its record and brief, the pins, and the spans the
// marks covered. The readers that work without Pi (`pi-fold peek`, `pi-fold unfold`, `pi-fold
// view`) read the records through this one reduction, by the rules the runtime's rebuild applies to
// its lattice (rebuild.ts): a mark is pending until a commit names it, an unmark withdraws a pending
// mark, a consolidation is a committed fold of its own, expand and refold toggle a standing fold.
// Pure, no Node: the view's page may use it too.
import type { FoldId, HexHash } from "../fold-types.ts";
import { RECORD_TYPE } from "../vocabulary.ts";
import { type JournalOp, parseJournalOp } from "./journal.ts";

export type JournalFoldState = "pending" | "committed" | "expanded";

export interface JournalFold {
	id: FoldId;
	state: JournalFoldState;
	/** The brief the records give it (a mark's agent brief, or what its commit showed). */
	brief: string;
	/** The mark's kind and span, when a mark named it. */
	kind?: string;
	from?: string;
	to?: string;
	/** Its record in the store, once committed. */
	record?: HexHash;
	/** Which commit made it (0 first); a consolidation belongs to the commit before it in the batch. */
	commit?: number;
}

export interface JournalState {
	/** Every fold the records name and that still stands (an unmarked mark is gone), first named first. */
	folds: Map<FoldId, JournalFold>;
	/** Committed folds in the order their records name them. */
	committed: FoldId[];
	pinned: Set<string>;
	/** Every span a mark covered, withdrawn or not (entries pi-fold may have edited). */
	marks: { id: FoldId; from: string; to: string }[];
}

/** pi-fold's records among session entries (as a file holds them), parsed, in order; unreadable ones left out. */
export function journalOps(entries: Iterable<{ type: string; customType?: unknown; data?: unknown }>): JournalOp[] {
	const out: JournalOp[] = [];
	for (const e of entries) {
		if (e.type !== "custom" || e.customType !== RECORD_TYPE) continue;
		const parsed = parseJournalOp(e.data);
		if (parsed.ok) out.push(parsed.op);
	}
	return out;
}

/** The records' ops in order, reduced. Ops that name a fold the records never made are passed over. */
export function reduceJournal(ops: Iterable<JournalOp>): JournalState {
	const out: JournalState = { folds: new Map(), committed: [], pinned: new Set(), marks: [] };
	let commits = 0;
	const committed = (id: FoldId, record: HexHash, brief: string, commit: number) => {
		const before = out.folds.get(id);
		out.folds.set(id, { ...before, id, state: "committed", brief, record, commit });
		if (!out.committed.includes(id)) out.committed.push(id);
	};
	for (const op of ops) {
		switch (op.op) {
			case "mark": {
				const known = out.folds.get(op.id);
				out.folds.set(op.id, {
					id: op.id,
					state: "pending",
					brief: known?.brief ?? "",
					kind: op.kind,
					from: op.from,
					to: op.to,
				});
				out.marks.push({ id: op.id, from: op.from, to: op.to });
				break;
			}
			case "brief": {
				const f = out.folds.get(op.id);
				if (f?.state === "pending") f.brief = op.text;
				break;
			}
			case "unmark":
				if (out.folds.get(op.id)?.state === "pending") out.folds.delete(op.id);
				break;
			case "commit":
				for (const f of op.folds) committed(f.id, f.record, f.brief, commits);
				commits++;
				break;
			case "consolidate":
				// Written in its commit's batch, after the commit's own record.
				committed(op.fold.id, op.fold.record, op.fold.brief, Math.max(0, commits - 1));
				break;
			case "expand":
			case "refold": {
				const f = out.folds.get(op.id);
				if (f && f.state !== "pending") f.state = op.op === "expand" ? "expanded" : "committed";
				break;
			}
			case "pin":
				for (const id of op.entryIds) out.pinned.add(id);
				break;
			case "unpin":
				for (const id of op.entryIds) out.pinned.delete(id);
				break;
			case "reboundary":
				// The re-cut mark is recorded by the lattice that makes it; the span alone names no fold.
				break;
		}
	}
	return out;
}
