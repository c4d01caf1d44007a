// Rebuilding the lattice of one branch: replay that branch's pi-fold records, in order, through
// the same validated lattice operations that made them. Works the same after resume, reload,
// fork and /tree navigation, because records are ordinary branch entries. A record this build
// cannot read, or one the lattice refuses, is reported and skipped; nothing throws.
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import type { FoldId, HexHash } from "../fold-types.ts";
import { FoldLattice } from "../lattice/index.ts";
import type { FoldStore } from "../store/index.ts";
import { type ContextEntries, contextEntriesOf } from "./context-entries.ts";
import { adoptFold } from "./fork.ts";
import { type CommittedFold, type JournalOp, parseJournalOp, RECORD_TYPE } from "./journal.ts";
import type { RecordIndex } from "./persist.ts";

export interface Rebuilt {
	ok: true;
	lattice: FoldLattice;
	context: ContextEntries;
	/** Fold id -> record hash, for every committed fold the records name. */
	records: RecordIndex;
	/** One line per record that was skipped, naming the entry and why. */
	problems: string[];
}

type Step = { ok: true } | { ok: false; reason: string };

function showBrief(lattice: FoldLattice, fold: CommittedFold): Step {
	const current = lattice.get(fold.id);
	if (!current) return { ok: false, reason: `fold ${fold.id} is not in the lattice` };
	if (current.state !== "pending" || current.brief === fold.brief) return { ok: true };
	return fold.provenance === "supplied"
		? lattice.brief(fold.id, fold.brief)
		: lattice.setDeterministicBrief(fold.id, fold.brief);
}

/** Where records are looked up: the session's own store, and its fork ancestors' to adopt from. */
export interface RecordSource {
	store: FoldStore;
	ancestors?: readonly FoldStore[];
}

/** Check a record the session names is the fold the lattice built (cheap: one record read). */
function checkRecord(source: RecordSource | undefined, fold: CommittedFold, identity: HexHash | undefined): Step {
	if (!source) return { ok: true };
	const { store } = source;
	try {
		if (!store.records.has(fold.record) && !adoptFold(store, source.ancestors ?? [], fold.record)) {
			return {
				ok: false,
				reason: `fold ${fold.id}: record ${fold.record} is in neither this session's store nor a parent's`,
			};
		}
		const record = store.readRecord(fold.record, { fold: fold.id });
		if (record.id !== fold.id || record.identity !== identity) {
			return {
				ok: false,
				reason: `store record ${fold.record} is fold ${record.id}, not the fold ${fold.id} built here`,
			};
		}
		return { ok: true };
	} catch (err) {
		return { ok: false, reason: err instanceof Error ? err.message : String(err) };
	}
}

function apply(lattice: FoldLattice, op: JournalOp, records: RecordIndex, store: RecordSource | undefined): Step {
	switch (op.op) {
		case "mark": {
			const r = lattice.mark(op.from, op.to, op.kind);
			if (r.ok && r.id !== op.id) return { ok: false, reason: `the mark rebuilt as ${r.id}, recorded as ${op.id}` };
			return r;
		}
		case "brief":
			return lattice.brief(op.id, op.text);
		case "unmark":
			return lattice.unmark(op.id);
		case "reboundary":
			return lattice.reboundary(op.from, op.to);
		case "pin":
			return lattice.pin(op.entryIds);
		case "unpin":
			return lattice.unpin(op.entryIds);
		case "expand":
			return lattice.expand(op.id);
		case "refold":
			return lattice.refold(op.id);
		case "commit": {
			for (const fold of op.folds) {
				const shown = showBrief(lattice, fold);
				if (!shown.ok) return shown;
				const checked = checkRecord(store, fold, lattice.get(fold.id)?.identity);
				if (!checked.ok) return checked;
			}
			const r = lattice.commit(op.folds.map((f) => f.id));
			if (r.ok) for (const f of op.folds) records.set(f.id, f.record);
			return r;
		}
		case "consolidate": {
			const r = lattice.consolidate(op.roots, {
				brief: op.fold.brief,
				provenance: op.fold.provenance,
				maxGap: op.maxGap,
			});
			if (!r.ok) return r;
			if (r.id !== op.fold.id) {
				return { ok: false, reason: `the consolidation rebuilt as ${r.id}, recorded as ${op.fold.id}` };
			}
			const checked = checkRecord(store, op.fold, lattice.get(r.id)?.identity);
			if (!checked.ok) return checked;
			records.set(op.fold.id, op.fold.record);
			return { ok: true };
		}
	}
}

/**
 * Rebuild from a session manager's view of one branch: `branch` = getBranch() (where the records
 * are), `contextEntries` = buildContextEntries() (what the lattice is over). With a `store`, every
 * committed fold's record is checked there (adopted from a fork ancestor's store when missing).
 */
export function rebuildLattice(
	branch: readonly SessionEntry[],
	contextEntries: readonly SessionEntry[],
	core: PiFoldCore,
	store?: RecordSource,
): Rebuilt | { ok: false; reason: string } {
	const context = contextEntriesOf(contextEntries, core);
	const created = FoldLattice.create(core, context.entries);
	if (!created.ok) return { ok: false, reason: created.reason };
	const { lattice } = created;
	const records: RecordIndex = new Map<FoldId, HexHash>();
	const problems: string[] = [];
	const report = (entry: SessionEntry, reason: string) =>
		problems.push(`pi-fold record ${entry.id}: ${reason}; skipped`);
	const one = (entry: SessionEntry, op: JournalOp) => {
		const step = apply(lattice, op, records, store);
		if (!step.ok) report(entry, step.reason);
	};
	// Consecutive marks (a frontier pass writes many) are replayed as one batch: one structure
	// build instead of one per mark. If the batch is refused, they are replayed one by one so each
	// bad record is reported on its own.
	let marks: { entry: SessionEntry; op: Extract<JournalOp, { op: "mark" }> }[] = [];
	const flushMarks = () => {
		if (marks.length > 1) {
			const r = lattice.markMany(marks.map(({ op }) => ({ from: op.from, to: op.to, kind: op.kind })));
			if (r.ok) {
				r.ids.forEach((id, i) => {
					if (id !== marks[i].op.id) report(marks[i].entry, `the mark rebuilt as ${id}, recorded as ${marks[i].op.id}`);
				});
				marks = [];
				return;
			}
		}
		for (const { entry, op } of marks) one(entry, op);
		marks = [];
	};
	for (const entry of branch) {
		if (entry.type !== "custom" || entry.customType !== RECORD_TYPE) continue;
		const parsed = parseJournalOp(entry.data);
		if (!parsed.ok) {
			report(entry, parsed.reason);
			continue;
		}
		if (parsed.op.op === "mark") {
			marks.push({ entry, op: parsed.op });
			continue;
		}
		flushMarks();
		one(entry, parsed.op);
	}
	flushMarks();
	return { ok: true, lattice, context, records, problems };
}
