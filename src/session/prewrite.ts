// Leaf prewrites: the leaf objects of a mark are written to the store in the background as soon as
// the mark is staged (turn_end), so a commit finds them durable and writes only its records on the
// critical path. A background write is never awaited where it starts and never throws: a failure is
// a problem, and the commit writes whatever leaf was not durably prewritten itself (persistFoldsAsync),
// so a fold is still durable before the window shows it.
import type { FoldId, HexHash } from "../fold-types.ts";
import type { FoldLattice } from "../lattice/index.ts";
import type { FoldStore } from "../store/index.ts";
import { errorMessage, type ProblemState } from "../vocabulary.ts";
import { type ContextEntries, textAt } from "./context-entries.ts";

/** A leaf to write: its content hash (the store's name for it) and its canonical text. */
export interface Leaf {
	hash: HexHash;
	/** Its canonical bytes, derived only when the background write runs (not in the handler that starts it). */
	text: () => string;
}

/** Resolves to the leaves a background write made durable (empty when it failed). Never rejects. */
type Write = Promise<ReadonlySet<HexHash>>;

/** Yield to the event loop: the write's synchronous part (hashing, opening, writing) runs after the handler. */
const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The leaves of the folds `ids` (through nested folds not yet in `written`), in order, each once.
 * Folds or entries missing from `lattice` or `context` are skipped: a prewrite is only a head start.
 * A leaf's position comes from its fold's span (children cover it in order), not from an index of
 * the whole context: this runs on every marking turn, and a mark is small beside the context.
 */
export function leavesOf(
	lattice: FoldLattice,
	context: ContextEntries,
	ids: readonly FoldId[],
	written: ReadonlyMap<FoldId, HexHash>,
): Leaf[] {
	const out: Leaf[] = [];
	const seen = new Set<HexHash>();
	const visited = new Set<FoldId>();
	const visit = (id: FoldId, fold = lattice.get(id)) => {
		if (!fold || visited.has(id) || written.has(id)) return;
		visited.add(id);
		let at = fold.start;
		for (const child of fold.children) {
			if (child.type === "fold") {
				const inner = lattice.get(child.id);
				visit(child.id, inner);
				at = inner ? inner.end : at;
				continue;
			}
			const p = at++;
			const entry = context.entries[p];
			// A context out of step with the lattice: skip the leaf rather than write the wrong text.
			if (entry?.id !== child.entryId) continue;
			if (seen.has(entry.hash)) continue;
			seen.add(entry.hash);
			out.push({ hash: entry.hash, text: () => textAt(context, p) });
		}
	};
	for (const id of ids) visit(id);
	return out;
}

export class LeafPrewriter {
	/** Background writes by leaf hash, with the store each went to. */
	readonly #writes = new Map<HexHash, { store: FoldStore; write: Write }>();
	readonly #problem: (where: string, reason: string, state?: ProblemState) => void;
	/** Leaves handed to a background write, leaves it made durable, and commits that found them there. */
	readonly stats = { started: 0, durable: 0, failed: 0, reused: 0 };

	constructor(problem: (where: string, reason: string, state?: ProblemState) => void) {
		this.#problem = problem;
	}

	/**
	 * Start writing `leaves` to `store` in the background (those not already written or in flight
	 * there). Returns at once, having done no I/O; the write never rejects.
	 */
	start(store: FoldStore, leaves: readonly Leaf[]): void {
		const fresh = leaves.filter((l) => this.#writes.get(l.hash)?.store !== store);
		if (fresh.length === 0) return;
		this.stats.started += fresh.length;
		const write: Write = (async () => {
			await nextTick();
			const hashes = await store.putLeavesAsync(fresh.map((l) => l.text()));
			this.stats.durable += hashes.length;
			return new Set(hashes);
		})().catch((err: unknown) => {
			this.stats.failed += fresh.length;
			// Forget them, so a later mark (or the commit) writes them again.
			for (const l of fresh) if (this.#writes.get(l.hash)?.write === write) this.#writes.delete(l.hash);
			this.#problem("prewrite", `background leaf write failed (the commit writes them): ${errorMessage(err)}`);
			return new Set<HexHash>();
		});
		for (const l of fresh) this.#writes.set(l.hash, { store, write });
	}

	/** Resolves once every background write started so far has finished (succeeded or failed). */
	async idle(): Promise<void> {
		await Promise.all(new Set([...this.#writes.values()].map((w) => w.write)));
	}

	/**
	 * Of `hashes`, those a background write made durable in `store` and that are still there: waits
	 * for the writes in flight. Every other leaf must be written by the caller. Never rejects.
	 */
	async durable(store: FoldStore, hashes: readonly HexHash[]): Promise<Set<HexHash>> {
		const mine = [...new Set(hashes)].flatMap((hash) => {
			const w = this.#writes.get(hash);
			return w && w.store === store ? [{ hash, write: w.write }] : [];
		});
		const done = await Promise.all(mine.map((m) => m.write));
		const out = new Set<HexHash>();
		mine.forEach(({ hash }, i) => {
			if (!done[i].has(hash)) return;
			if (store.objects.has(hash)) {
				out.add(hash);
				return;
			}
			this.#writes.delete(hash);
			this.#problem(
				"prewrite",
				`leaf ${hash} was written in the background but is gone at the commit: rewritten`,
				"repaired",
			);
		});
		this.stats.reused += out.size;
		return out;
	}
}
