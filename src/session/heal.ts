// Healing a fold's leaf objects from the session's own bytes. The session file holds every folded
// entry as well as the store does: a leaf object that is missing, cut short, flipped or replaced
// can be written again from it, but only when the session's bytes still hash to the leaf's address
// (an entry edited in the session file since never overwrites the original). The store sets the
// damaged copy aside as it writes the good one (a loose file renamed, a pack once its good entries
// are copied; nothing deleted).
import { DIGEST_BYTES, type PiFoldCore, toHex } from "../../bindings/index.ts";
import type { FoldId } from "../fold-types.ts";
import type { FoldLattice } from "../lattice/index.ts";
import type { FoldStore } from "../store/index.ts";
import { errorMessage } from "../vocabulary.ts";
import { type ContextEntries, textAt } from "./canonical.ts";
import { type RecordIndex, rewriteRecord } from "./persist.ts";

interface HealInput {
	lattice: FoldLattice;
	context: ContextEntries;
	store: FoldStore;
	core: PiFoldCore;
}

export type Healed = { ok: true; leaves: number } | { ok: false; reason: string };

/**
 * Write again the leaf that failed (`failed`: its entry and the hash its record names) and every
 * other leaf under fold `id` whose entry still hashes to the lattice's leaf, from the session's
 * bytes (the store compares each copy it has byte for byte and writes only what is not whole).
 * Refused, with nothing written, when the failed entry's bytes in the session no longer hash to its
 * leaf: then the store's copy was the only one.
 */
export function healLeaves(input: HealInput, id: FoldId, failed?: { entry: string; expected: string }): Healed {
	const { lattice, context, store, core } = input;
	try {
		const fold = lattice.get(id);
		const leaves = lattice.leavesOf(id);
		if (!fold || !leaves) return { ok: false, reason: `fold ${id} is not in the lattice` };
		const texts = leaves.map((_, i) => textAt(context, fold.start + i));
		const digests = core.hashSpans(texts);
		const hashOf = (i: number) => toHex(digests, i * DIGEST_BYTES, (i + 1) * DIGEST_BYTES);
		if (failed) {
			const at = leaves.findIndex((l) => l.entryId === failed.entry);
			if (at < 0) return { ok: false, reason: `entry ${failed.entry} is not in fold ${id} here` };
			if (hashOf(at) !== failed.expected) {
				return {
					ok: false,
					reason: `the session's copy of entry ${failed.entry} changed too (it hashes to ${hashOf(at)}, the leaf is ${failed.expected})`,
				};
			}
		}
		const same = texts.filter((_, i) => hashOf(i) === leaves[i].hash || leaves[i].entryId === failed?.entry);
		store.putLeaves(same);
		return { ok: true, leaves: same.length };
	} catch (err) {
		return { ok: false, reason: errorMessage(err) };
	}
}

/**
 * Whether each leaf object a fold's record names looks whole in the store (see
 * ContentStore.looksWhole: no bytes read); what is wrong with the first that does not, or undefined.
 */
export function leafDamage(store: FoldStore, leaves: readonly { hash: string; bytes: number }[]): string | undefined {
	const found = store.objects.looksWhole(leaves);
	const at = found.findIndex((why) => why !== undefined);
	if (at < 0) return undefined;
	const more = found.filter((why) => why !== undefined).length - 1;
	return `leaf object ${leaves[at].hash} is ${found[at]}${more > 0 ? ` (and ${more} more)` : ""}`;
}

/**
 * Write again every record under fold `id` (children first) the store cannot read, from the
 * session's own bytes, each only where they make exactly the record the session names. The first
 * that cannot be is the answer's reason, and nothing after it is tried.
 */
export function healRecords(
	input: HealInput & { records: RecordIndex },
	id: FoldId,
): { ok: true; records: number } | { ok: false; reason: string } {
	const { lattice, store, context, records } = input;
	let written = 0;
	const visit = (f: FoldId): string | undefined => {
		for (const c of lattice.get(f)?.children ?? []) {
			if (c.type !== "fold") continue;
			const why = visit(c.id);
			if (why) return why;
		}
		const hash = records.get(f);
		if (hash === undefined) return undefined;
		try {
			store.readRecord(hash, { fold: f });
			return undefined;
		} catch {
			// Its children's records are known; its own is the one to write.
			const others = new Map(records);
			others.delete(f);
			const rewritten = rewriteRecord(lattice, store, context, f, others, hash);
			if (!rewritten.ok) return `record of fold ${f}: ${rewritten.reason}`;
			written++;
			return undefined;
		}
	};
	const why = visit(id);
	return why ? { ok: false, reason: why } : { ok: true, records: written };
}

/**
 * Before a new parent names them: each fold of `ids` whose record the store holds no verifying
 * copy of is written again from the session's own bytes (healRecords). What could not be is
 * returned with why, and nothing may be built over it.
 */
export function unreadableRecords(
	input: HealInput & { records: RecordIndex },
	ids: readonly FoldId[],
): { healed: FoldId[]; unreadable: { id: FoldId; reason: string }[] } {
	const out: ReturnType<typeof unreadableRecords> = { healed: [], unreadable: [] };
	for (const id of ids) {
		const hash = input.records.get(id);
		if (hash === undefined) continue; // made by this commit: written with it
		let found: ReturnType<FoldStore["records"]["readAsFound"]>;
		try {
			found = input.store.records.readAsFound(hash);
		} catch {
			found = undefined;
		}
		if (found?.verified) continue;
		const why = `record ${hash} of fold ${id} is ${found ? "damaged" : "missing"} in the store`;
		const healed = healRecords(input, id);
		if (healed.ok && healed.records > 0) out.healed.push(id);
		else out.unreadable.push({ id, reason: `${why}; not repaired: ${healed.ok ? "nothing to write" : healed.reason}` });
	}
	return out;
}
