// Rebuilding the lattice of one branch: replay that branch's pi-fold records, in order, through
// the same validated lattice operations that made them. Works the same after resume, reload,
// fork and /tree navigation, because records are ordinary branch entries. A record this build
// cannot read, or one the lattice refuses, is reported and skipped; nothing throws.
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import type { FoldId, FoldRecord, HexHash } from "../fold-types.ts";
import { FoldLattice } from "../lattice/index.ts";
import type { FoldStore } from "../store/index.ts";
import { errorMessage, RECORD_TYPE } from "../vocabulary.ts";
import { type ContextEntries, contextEntriesOf } from "./context-entries.ts";
import { adoptFold } from "./fork.ts";
import { type Healed, healLeaves, leafDamage } from "./heal.ts";
import { type CommittedFold, type JournalOp, parseJournalOp } from "./journal.ts";
import { type RecordIndex, rewriteRecord } from "./persist.ts";

export interface Rebuilt {
	ok: true;
	lattice: FoldLattice;
	context: ContextEntries;
	/** Fold id -> record hash, for every committed fold the records name. */
	records: RecordIndex;
	/** One line per record that was skipped, or that stays wrong, naming the entry and why. */
	problems: string[];
	/** One line per record whose damage was repaired (written again from the session's own bytes). */
	repaired: string[];
	/**
	 * Committed folds whose store record is damaged and could not be written again from the
	 * session: they stay in the lattice (the window hides their entries all the same), with why.
	 */
	damaged: Map<FoldId, string>;
	/**
	 * Folds recorded under another id than they rebuild with (an entry's bytes in the session file
	 * changed since): recorded id -> the lattice's id. The recorded id stays usable; the store's
	 * bytes are the original.
	 */
	aliases: Map<FoldId, FoldId>;
}

type Step = { ok: true } | { ok: false; reason: string };

function showBrief(lattice: FoldLattice, id: FoldId, fold: CommittedFold): Step {
	const current = lattice.get(id);
	if (!current) return { ok: false, reason: `fold ${fold.id} is not in the lattice` };
	if (current.state !== "pending" || current.brief === fold.brief) return { ok: true };
	return fold.provenance === "supplied" ? lattice.brief(id, fold.brief) : lattice.setDeterministicBrief(id, fold.brief);
}

/** Where records are looked up: the session's own store, and its fork ancestors' to adopt from. */
export interface RecordSource {
	store: FoldStore;
	ancestors?: readonly FoldStore[];
}

/**
 * Check a record the session names is the fold the lattice built (cheap: one record read).
 * `identity` undefined: the fold was recorded under another id, so only the recorded id is checked.
 */
function checkRecord(
	source: RecordSource,
	fold: CommittedFold,
	identity: HexHash | undefined,
): { ok: true; record: FoldRecord } | { ok: false; reason: string } {
	const { store } = source;
	try {
		if (!store.records.has(fold.record) && !adoptFold(store, source.ancestors ?? [], fold.record)) {
			return {
				ok: false,
				reason: `record ${fold.record} is in neither this session's store nor a parent's`,
			};
		}
		const record = store.readRecord(fold.record, { fold: fold.id });
		if (record.id !== fold.id || (identity !== undefined && record.identity !== identity)) {
			return {
				ok: false,
				reason: `store record ${fold.record} is fold ${record.id}, not the fold ${fold.id} built here`,
			};
		}
		return { ok: true, record };
	} catch (err) {
		return { ok: false, reason: errorMessage(err) };
	}
}

/** One rebuild's state: what replaying the records builds, and where they are checked. */
interface Replay {
	lattice: FoldLattice;
	context: ContextEntries;
	records: RecordIndex;
	damaged: Map<FoldId, string>;
	aliases: Map<FoldId, FoldId>;
	source: RecordSource | undefined;
	/** A line for problems (the record entry being replayed is named by the caller). */
	note(reason: string): void;
	/** A line for what was repaired. */
	repaired(reason: string): void;
	/** Write a fold's leaf objects again from the session's own bytes. */
	heal(store: FoldStore, id: FoldId): Healed;
	/** Records of committed folds that rebuild under another id, readable: their leaves are the originals. */
	aliasedRecords: HexHash[];
}

/** The lattice's id for a recorded one. */
function idOf(r: Replay, id: string): FoldId {
	return r.aliases.get(id) ?? id;
}

/** A fold rebuilt under another id than recorded: the recorded id stays an alias of it. */
function alias(r: Replay, recorded: FoldId, rebuilt: FoldId, what: string): void {
	r.aliases.set(recorded, rebuilt);
	r.note(
		`the ${what} recorded as ${recorded} rebuilds as ${rebuilt}: the session's copy of its entries changed; ${recorded} still names it, and the store keeps the original bytes`,
	);
}

/**
 * A committed fold's record, checked against the store: when it is damaged or missing, it is
 * written again from the session's own bytes if they still make exactly that record; otherwise the
 * fold is kept (the session's edits hide its entries all the same) and listed as damaged.
 */
function settleRecord(r: Replay, id: FoldId, fold: CommittedFold): void {
	const source = r.source;
	const aliased = id !== fold.id;
	if (source) {
		const checked = checkRecord(source, fold, aliased ? undefined : r.lattice.get(id)?.identity);
		if (!checked.ok) {
			const rewritten = aliased
				? { ok: false as const, reason: "the session's copy of its entries changed" }
				: rewriteRecord(r.lattice, source.store, r.context, id, r.records, fold.record);
			if (rewritten.ok) r.repaired(`fold ${fold.id}: ${checked.reason}; written again from the session's own bytes`);
			else {
				const why = `${checked.reason}; not repaired: ${rewritten.reason}`;
				r.damaged.set(id, why);
				r.note(`fold ${fold.id} is damaged: ${why}`);
			}
		} else if (aliased) {
			// Readable under its recorded id: the store's original is what peek serves.
			r.damaged.set(id, `recorded as ${fold.id}; the session's copy of its entries changed since`);
			r.aliasedRecords.push(fold.record);
		} else settleLeaves(r, source.store, id, checked.record);
	}
	r.records.set(id, fold.record);
}

/**
 * The leaf objects a readable record names, looked at without reading them (a lookup per leaf):
 * one gone, replaced or cut short is written again from the session's own bytes when they still
 * hash to it; otherwise the fold is listed as damaged. A flipped byte is found by the first read.
 */
function settleLeaves(r: Replay, store: FoldStore, id: FoldId, record: FoldRecord): void {
	const leaves = record.children.flatMap((c) => (c.type === "leaf" ? [c] : []));
	if (leaves.length === 0) return;
	const damage = leafDamage(store, leaves);
	if (damage === undefined) return;
	const healed = r.heal(store, id);
	if (healed.ok) r.repaired(`fold ${id}: ${damage}; written again from the session's own bytes`);
	else {
		const why = `${damage}; not repaired: ${healed.reason}`;
		r.damaged.set(id, why);
		r.note(`fold ${id} is damaged: ${why}`);
	}
}

function apply(r: Replay, op: JournalOp): Step {
	const { lattice } = r;
	switch (op.op) {
		case "mark": {
			const m = lattice.mark(op.from, op.to, op.kind);
			if (m.ok && m.id !== op.id) alias(r, op.id, m.id, "mark");
			return m;
		}
		case "brief":
			return lattice.brief(idOf(r, op.id), op.text);
		case "unmark":
			return lattice.unmark(idOf(r, op.id));
		case "reboundary":
			return lattice.reboundary(op.from, op.to);
		case "pin":
			return lattice.pin(op.entryIds);
		case "unpin":
			return lattice.unpin(op.entryIds);
		case "expand":
			return lattice.expand(idOf(r, op.id));
		case "refold":
			return lattice.refold(idOf(r, op.id));
		case "commit": {
			const ids = op.folds.map((f) => idOf(r, f.id));
			for (const [i, fold] of op.folds.entries()) {
				const shown = showBrief(lattice, ids[i], fold);
				if (!shown.ok) return shown;
			}
			const c = lattice.commit(ids);
			if (c.ok) for (const [i, fold] of op.folds.entries()) settleRecord(r, ids[i], fold);
			return c;
		}
		case "consolidate": {
			const c = lattice.consolidate(
				op.roots.map((id) => idOf(r, id)),
				{ brief: op.fold.brief, provenance: op.fold.provenance, maxGap: op.maxGap },
			);
			if (!c.ok) return c;
			if (c.id !== op.fold.id) alias(r, op.fold.id, c.id, "consolidation");
			settleRecord(r, c.id, op.fold);
			return { ok: true };
		}
	}
}

/**
 * Rebuild from a session manager's view of one branch: `branch` = getBranch() (where the records
 * are), `contextEntries` = buildContextEntries() (what the lattice is over). With a `store`, every
 * committed fold's record is checked there (adopted from a fork ancestor's store when missing, and
 * written again from the session's own bytes when damaged).
 */
export function rebuildLattice(
	branch: readonly SessionEntry[],
	contextEntries: readonly SessionEntry[],
	core: PiFoldCore,
	store?: RecordSource,
): Rebuilt | { ok: false; reason: string } {
	const context = contextEntriesOf(contextEntries, core);
	const first = replayBranch(branch, context, core, store);
	if (!first.ok || first.aliasedRecords.length === 0 || !store) return first;
	// A committed entry edited in the session file since: the lattice takes the leaf its record
	// holds (the store keeps those bytes), so every fold keeps the id the agent was shown.
	const originals = originalLeaves(store.store, first.aliasedRecords, context);
	if (originals.lines.length === 0) return first;
	const again = replayBranch(branch, originals.context, core, store);
	if (again.ok) again.repaired.unshift(...originals.lines);
	return again;
}

/**
 * The context with each entry a readable record names as a leaf taking that leaf's hash and size
 * where the session's bytes differ now, and a line per such entry.
 */
function originalLeaves(
	store: FoldStore,
	recordHashes: readonly HexHash[],
	context: ContextEntries,
): { context: ContextEntries; lines: string[] } {
	const at = new Map(context.entries.map((e, i) => [e.id, i]));
	const entries = [...context.entries];
	const lines: string[] = [];
	for (const hash of recordHashes) {
		let record: FoldRecord;
		try {
			record = store.readRecord(hash);
		} catch {
			continue; // unreadable: the fold stays as the session's bytes make it, listed as damaged
		}
		for (const child of record.children) {
			const p = child.type === "leaf" ? at.get(child.entryId) : undefined;
			if (child.type !== "leaf" || p === undefined || entries[p].hash === child.hash) continue;
			entries[p] = { ...entries[p], hash: child.hash, bytes: child.bytes };
			lines.push(
				`entry ${child.entryId} changed in the session file since fold ${record.id} was committed: the fold keeps its id, and peek serves the store's original bytes`,
			);
		}
	}
	return { context: { entries, sources: context.sources }, lines };
}

/** One replay of the branch's records over `context`; `aliasedRecords`: records of committed folds that rebuilt under another id. */
function replayBranch(
	branch: readonly SessionEntry[],
	context: ContextEntries,
	core: PiFoldCore,
	store: RecordSource | undefined,
): (Rebuilt & { aliasedRecords: HexHash[] }) | { ok: false; reason: string } {
	const created = FoldLattice.create(core, context.entries);
	if (!created.ok) return { ok: false, reason: created.reason };
	const { lattice } = created;
	const problems: string[] = [];
	const repaired: string[] = [];
	let current: SessionEntry | undefined;
	// A record from before Pi's latest compaction may name entries it summarised: expected, not a fault.
	const compactionAt = branch.findLastIndex((e) => e.type === "compaction");
	let beforeCompaction = false;
	let summarised = 0;
	const problem = (line: string) => {
		if (beforeCompaction) summarised++;
		else problems.push(line);
	};
	const replay: Replay = {
		lattice,
		context,
		records: new Map<FoldId, HexHash>(),
		damaged: new Map(),
		aliases: new Map(),
		source: store,
		note: (reason) => problem(`pi-fold record ${current?.id}: ${reason}`),
		repaired: (reason) => repaired.push(`pi-fold record ${current?.id}: ${reason}`),
		heal: (into, id) => healLeaves({ lattice, context, store: into, core }, id),
		aliasedRecords: [],
	};
	const report = (entry: SessionEntry, reason: string) => problem(`pi-fold record ${entry.id}: ${reason}; skipped`);
	const one = (entry: SessionEntry, op: JournalOp) => {
		current = entry;
		const step = apply(replay, op);
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
					current = marks[i].entry;
					if (id !== marks[i].op.id) alias(replay, marks[i].op.id, id, "mark");
				});
				marks = [];
				return;
			}
		}
		for (const { entry, op } of marks) one(entry, op);
		marks = [];
	};
	for (const [i, entry] of branch.entries()) {
		if (entry.type !== "custom" || entry.customType !== RECORD_TYPE) continue;
		if (beforeCompaction !== i < compactionAt) flushMarks();
		beforeCompaction = i < compactionAt;
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
	if (summarised > 0) {
		repaired.push(
			`${summarised} pi-fold records from before Pi's compaction name entries it summarised: those folds are no longer expandable in this session (their originals stay in the store: pi-fold peek)`,
		);
	}
	const { records, damaged, aliases, aliasedRecords } = replay;
	return { ok: true, lattice, context, records, problems, repaired, damaged, aliases, aliasedRecords };
}
