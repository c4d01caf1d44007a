// Folds a real session the way the runtime will: every complete tool batch marked, briefed and
// committed, then adjacent roots consolidated; store written first, records appended after.
import type { SessionManager } from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../bindings/index.ts";
import { FoldLattice } from "../src/lattice/index.ts";
import { contextEntriesOf } from "../src/session/context-entries.ts";
import type { JournalOp } from "../src/session/journal.ts";
import { persistFolds, type RecordIndex } from "../src/session/persist.ts";
import { FoldStore, type StoreLayout } from "../src/store/index.ts";
import { RECORD_TYPE } from "../src/vocabulary.ts";

/** [first, last] positions of every complete tool batch: an assistant's calls and then all their results. */
export function toolBatches(
	entries: readonly { role: string; toolCallIds?: readonly string[]; toolCallId?: string }[],
) {
	const batches: [number, number][] = [];
	for (let i = 0; i < entries.length; i++) {
		const calls = new Set(entries[i].toolCallIds ?? []);
		if (entries[i].role !== "assistant" || calls.size === 0) continue;
		let j = i + 1;
		while (j < entries.length && entries[j].role === "toolResult" && calls.delete(entries[j].toolCallId ?? "")) j++;
		if (calls.size === 0) batches.push([i, j - 1]);
	}
	return batches;
}

interface FoldedFixture {
	store: FoldStore;
	lattice: FoldLattice;
	records: RecordIndex;
	batches: number;
	consolidations: number;
}

export function foldEverything(
	sm: SessionManager,
	core: PiFoldCore,
	groupSize = 4,
	layout: StoreLayout = "packs",
): FoldedFixture {
	const context = contextEntriesOf(sm.buildContextEntries(), core);
	const created = FoldLattice.create(core, context.entries);
	if (!created.ok) throw new Error(created.reason);
	const { lattice } = created;
	const store = FoldStore.forSession(
		{ sessionFile: sm.getSessionFile(), sessionDir: sm.getSessionDir(), sessionId: sm.getSessionId() },
		core,
		{ layout },
	);
	const journal = (op: JournalOp) => sm.appendCustomEntry(RECORD_TYPE, op);
	const records: RecordIndex = new Map();
	const ids: string[] = [];
	for (const [s, e] of toolBatches(context.entries)) {
		const from = context.entries[s].id;
		const to = context.entries[e].id;
		const marked = lattice.mark(from, to, "tool-batch");
		if (!marked.ok) throw new Error(marked.reason);
		const brief = lattice.setDeterministicBrief(marked.id, `[tool batch ${from}..${to}]`);
		if (!brief.ok) throw new Error(brief.reason);
		journal({ v: 1, op: "mark", id: marked.id, kind: "tool-batch", from, to });
		ids.push(marked.id);
	}
	// Durable before visible: the store first, then the commit record, then the lattice state.
	const folds = persistFolds(lattice, store, context, ids, records);
	const committed = lattice.commit(ids);
	if (!committed.ok) throw new Error(committed.reason);
	journal({ v: 1, op: "commit", folds });

	let consolidations = 0;
	const roots = lattice.visibleRoots();
	for (let i = 0; i + 1 < roots.length; i += groupSize) {
		const group = roots.slice(i, i + groupSize);
		const maxGap = 2;
		const done = lattice.consolidate(group, { maxGap });
		if (!done.ok) continue; // a gap too wide or a system entry between: leave those roots alone
		const [fold] = persistFolds(lattice, store, context, [done.id], records);
		journal({ v: 1, op: "consolidate", roots: group, maxGap, fold });
		consolidations++;
	}
	return { store, lattice, records, batches: ids.length, consolidations };
}
