// Writing folds to the store before anything shows them: leaf objects first, then the records in
// waves (a fold's nested child folds in an earlier wave than the fold), so a record never names
// missing bytes. All of it goes into one store batch (one pack file), durable before `written`
// learns any of it. One plan serves both writers; the async one runs the fsyncs off the main thread.
import type { FoldId, FoldRecord, HexHash, RecordChild } from "../fold-types.ts";
import type { FoldLattice } from "../lattice/index.ts";
import type { FoldStore, StoreBatch } from "../store/index.ts";
import { errorMessage } from "../vocabulary.ts";
import { type ContextEntries, textAt } from "./canonical.ts";
import type { CommittedFold } from "./journal.ts";

/** Fold id -> the hash of its record in the store; grows as folds are written. */
export type RecordIndex = Map<FoldId, HexHash>;

/** What to write: every leaf text of the new folds, and the new folds by wave (children first). */
interface WritePlan {
	leaves: string[];
	/** The content hash of each leaf, same order. */
	leafHashes: HexHash[];
	waves: FoldId[][];
	/** The record of a fold, once `recordHash` knows every child fold of it. */
	recordOf(id: FoldId, recordHash: (id: FoldId) => HexHash | undefined): FoldRecord;
}

/** The records known durable (or staged in the same batch), by fold id. */
type KnownRecords = Pick<RecordIndex, "has" | "get">;

function planWrites(
	lattice: FoldLattice,
	context: ContextEntries,
	ids: readonly FoldId[],
	written: KnownRecords,
): WritePlan {
	// Positions from the lattice's own index (a map of the whole context per write would cost the session).
	const position = { get: (entryId: string) => lattice.position(entryId) };
	const get = (id: FoldId) => {
		const fold = lattice.get(id);
		if (!fold) throw new Error(`fold ${id} is not in the lattice`);
		return fold;
	};
	const leaves: string[] = [];
	const leafHashes: HexHash[] = [];
	const waves: FoldId[][] = [];
	// Wave of each new fold: 0 without new child folds, else one past its deepest new child.
	const waveOf = new Map<FoldId, number>();
	const visit = (id: FoldId): number => {
		if (written.has(id)) return -1;
		const known = waveOf.get(id);
		if (known !== undefined) return known;
		let wave = 0;
		for (const child of get(id).children) {
			if (child.type === "fold") wave = Math.max(wave, visit(child.id) + 1);
			else {
				const at = position.get(child.entryId);
				if (at === undefined) throw new Error(`entry ${child.entryId} of fold ${id} is not in the context`);
				leaves.push(textAt(context, at));
				leafHashes.push(context.entries[at].hash);
			}
		}
		waveOf.set(id, wave);
		if (waves[wave]) waves[wave].push(id);
		else waves[wave] = [id];
		return wave;
	};
	for (const id of ids) visit(id);

	const recordOf = (id: FoldId, recordHash: (id: FoldId) => HexHash | undefined): FoldRecord => {
		const fold = get(id);
		const children: RecordChild[] = fold.children.map((child) => {
			if (child.type === "fold") {
				const record = recordHash(child.id);
				if (!record) throw new Error(`fold ${child.id} (in ${id}) was not written first`);
				return { type: "fold", id: child.id, identity: get(child.id).identity, record };
			}
			const entry = context.entries[position.get(child.entryId) as number];
			return { type: "leaf", entryId: entry.id, hash: entry.hash, bytes: entry.bytes };
		});
		return {
			format: "pi-fold.fold",
			v: 1,
			id: fold.id,
			identity: fold.identity,
			kind: fold.kind,
			brief: fold.brief,
			provenance: fold.provenance,
			children,
		};
	};
	return { leaves, leafHashes, waves, recordOf };
}

/** What a commit record names for each of `ids` (written): its record hash and the brief it shows. */
export function committedFolds(lattice: FoldLattice, ids: readonly FoldId[], written: RecordIndex): CommittedFold[] {
	return ids.map((id) => {
		const fold = lattice.get(id);
		return {
			id,
			record: written.get(id) as HexHash,
			brief: fold?.brief ?? "",
			provenance: fold?.provenance ?? "deterministic",
		};
	});
}

/**
 * Stage a plan's leaves (all of them, or `leaves` when given) and records, wave by wave, in one
 * batch; returns the record hash of each fold staged, for `written` once the batch is durable.
 */
function stagePlan(
	batch: StoreBatch,
	plan: WritePlan,
	written: KnownRecords,
	leaves = plan.leaves,
): Map<FoldId, HexHash> {
	if (leaves.length > 0) batch.putLeaves(leaves);
	const staged = new Map<FoldId, HexHash>();
	const recordHash = (id: FoldId) => staged.get(id) ?? written.get(id);
	for (const wave of plan.waves) {
		const hashes = batch.putRecords(wave.map((id) => plan.recordOf(id, recordHash)));
		for (let i = 0; i < wave.length; i++) staged.set(wave[i], hashes[i]);
	}
	return staged;
}

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
	const plan = planWrites(lattice, context, ids, written);
	const batch = store.batch();
	const staged = stagePlan(batch, plan, written);
	batch.commitSync();
	for (const [id, hash] of staged) written.set(id, hash);
	return committedFolds(lattice, ids, written);
}

/**
 * Of the given leaf hashes, those already durable in the store (written ahead, e.g. in the
 * background when their mark was staged); the writer writes every other leaf itself.
 */
export type PrewrittenLeaves = (hashes: readonly HexHash[]) => Promise<ReadonlySet<HexHash>>;

/**
 * The folds of several steps written in one store batch (a commit's marks, then the parents
 * consolidation lays over them: a parent's record names records staged before it in the same
 * batch), with its fsyncs off the main thread. Nothing of it is durable, nor in `written`, until
 * commit() resolves; then all of it is. With `prewritten`, leaves it vouches for are not written again.
 */
class FoldWrites {
	readonly #context: ContextEntries;
	readonly #written: RecordIndex;
	readonly #prewritten: PrewrittenLeaves | undefined;
	readonly #batch: StoreBatch;
	readonly #staged = new Map<FoldId, HexHash>();
	/** Durable or staged here: what a later step's records may name. */
	readonly #known: KnownRecords;

	constructor(store: FoldStore, context: ContextEntries, written: RecordIndex, prewritten?: PrewrittenLeaves) {
		this.#context = context;
		this.#written = written;
		this.#prewritten = prewritten;
		this.#batch = store.batch();
		this.#known = {
			has: (id) => this.#staged.has(id) || written.has(id),
			get: (id) => this.#staged.get(id) ?? written.get(id),
		};
	}

	/** Stage the folds `ids` of `lattice` (and any nested fold neither written nor staged yet). */
	async stage(lattice: FoldLattice, ids: readonly FoldId[]): Promise<void> {
		const plan = planWrites(lattice, this.#context, ids, this.#known);
		const prewritten = this.#prewritten;
		const durable = prewritten && plan.leaves.length > 0 ? await prewritten(plan.leafHashes) : new Set<HexHash>();
		const leaves = plan.leaves.filter((_, i) => !durable.has(plan.leafHashes[i]));
		for (const [id, hash] of stagePlan(this.#batch, plan, this.#known, leaves)) this.#staged.set(id, hash);
	}

	/** Write the batch; every staged record is in `written` once it resolves. */
	async commit(): Promise<void> {
		await this.#batch.commit();
		for (const [id, hash] of this.#staged) this.#written.set(id, hash);
	}
}

/**
 * persistFolds with each batch's fsyncs run concurrently off the main thread. Resolves only once
 * every leaf and record is durable; `written` grows only with records that are. With `prewritten`,
 * leaves it vouches for are not written again.
 */
async function persistFoldsAsync(
	lattice: FoldLattice,
	store: FoldStore,
	context: ContextEntries,
	ids: readonly FoldId[],
	written: RecordIndex,
	prewritten?: PrewrittenLeaves,
): Promise<CommittedFold[]> {
	const writes = new FoldWrites(store, context, written, prewritten);
	await writes.stage(lattice, ids);
	await writes.commit();
	return committedFolds(lattice, ids, written);
}

/** What persistEach stored, and the folds it could not store with the reason. */
interface PersistedEach {
	stored: CommittedFold[];
	skipped: { id: FoldId; reason: string }[];
}

/**
 * persistFoldsAsync for `ids` together; if that fails, each fold on its own, so one fold that
 * cannot be stored (a damaged or unwritable file under it) is named and the others still are.
 */
export async function persistEach(
	lattice: FoldLattice,
	store: FoldStore,
	context: ContextEntries,
	ids: readonly FoldId[],
	written: RecordIndex,
	prewritten?: PrewrittenLeaves,
): Promise<PersistedEach> {
	try {
		return { stored: await persistFoldsAsync(lattice, store, context, ids, written, prewritten), skipped: [] };
	} catch (err) {
		if (ids.length === 1) return { stored: [], skipped: [{ id: ids[0], reason: errorMessage(err) }] };
	}
	const out: PersistedEach = { stored: [], skipped: [] };
	for (const id of ids) {
		try {
			out.stored.push(...(await persistFoldsAsync(lattice, store, context, [id], written, prewritten)));
		} catch (err) {
			out.skipped.push({ id, reason: errorMessage(err) });
		}
	}
	return out;
}

/**
 * Write a committed fold's record again from the session's own bytes (its damaged copy in the
 * store is set aside by the store): only if the record the session's entries make is exactly the
 * one the session names (`expected`, its hash), so a changed session never overwrites the truth.
 * The fold's child folds must already be in `written`.
 */
export function rewriteRecord(
	lattice: FoldLattice,
	store: FoldStore,
	context: ContextEntries,
	id: FoldId,
	written: RecordIndex,
	expected: HexHash,
): { ok: true } | { ok: false; reason: string } {
	try {
		const plan = planWrites(lattice, context, [id], written);
		if (plan.waves.length !== 1 || plan.waves[0].length !== 1) {
			return { ok: false, reason: "a fold nested in it has no record either" };
		}
		const record = plan.recordOf(id, (child) => written.get(child));
		const hash = store.recordHash(record);
		if (hash !== expected) {
			return { ok: false, reason: `the session's copy of its entries makes record ${hash}, not ${expected}` };
		}
		const batch = store.batch();
		if (plan.leaves.length > 0) batch.putLeaves(plan.leaves);
		batch.putRecords([record]);
		batch.commitSync();
		return { ok: true };
	} catch (err) {
		return { ok: false, reason: errorMessage(err) };
	}
}
