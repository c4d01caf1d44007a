// Pins: entries held raw through every commit, named directly or by a pending mark (withdrawn in
// the same step). Pins may hold at most a share of what a commit lands at, so the rest stays
// foldable. Both operations leave the window as it is: recorded and applied at once.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { FoldLattice } from "../lattice/index.ts";
import type { JournalOp } from "../session/journal.ts";
import { type FoldId, isFoldId, type Outcome } from "../vocabulary.ts";
import { openOf, overviewOf, PINNED_SHARE_OF_MIN_TARGET } from "./overview.ts";
import type { RuntimePort } from "./view.ts";

/** Run an op that leaves the window as it is on a copy, record it and swap it in (FoldActions). */
export type Durable = <T extends object>(
	op: JournalOp | readonly JournalOp[],
	run: (work: FoldLattice) => Outcome<T>,
) => Outcome<T>;

function fail(reason: string): { ok: false; reason: string } {
	return { ok: false, reason };
}

/**
 * Entry ids named directly, or by a pending mark's id (its entries, and the mark to withdraw so
 * they can stay raw). A standing fold's entries are folded: pins hold raw entries only.
 */
function entryIdsOf(lattice: FoldLattice, ids: readonly string[]): Outcome<{ entryIds: string[]; marks: FoldId[] }> {
	const out: string[] = [];
	const marks: FoldId[] = [];
	const seen = new Set<string>();
	for (const id of ids) {
		if (seen.has(id)) return fail(`${JSON.stringify(id)} is listed twice`);
		seen.add(id);
		const fold = isFoldId(id) ? lattice.get(id) : undefined;
		if (fold) {
			if (fold.state !== "pending") {
				return fail(
					`fold ${fold.id} is ${fold.state}: its entries are folded, and only raw entries can be pinned (name a pending mark to withdraw it and pin its span)`,
				);
			}
			marks.push(fold.id);
			out.push(...(lattice.leavesOf(fold.id) ?? []).map((l) => l.entryId));
		} else if (lattice.entries.some((e) => e.id === id)) out.push(id);
		else return fail(`${JSON.stringify(id)} is neither a fold id nor an entry id of this session's context`);
	}
	return { ok: true, entryIds: [...new Set(out)], marks };
}

/** Hold entries raw through every commit. A pending mark named by id is withdrawn first, in the same step. */
export function pinEntries(
	rt: RuntimePort,
	durable: Durable,
	ids: readonly string[],
	ctx: ExtensionContext,
): Outcome<{ entryIds: string[]; pinnedTokens: number; cap: number; withdrawn: FoldId[] }> {
	const o = openOf(rt);
	if (!o.ok) return o;
	const named = entryIdsOf(o.open.lattice, ids);
	if (!named.ok) return named;
	// What the lattice refuses (a system entry, a folded one) is said before any arithmetic.
	const trial = o.open.lattice.clone();
	for (const id of named.marks) trial.unmark(id);
	const tried = trial.pin(named.entryIds);
	if (!tried.ok) return fail(tried.reason);
	const over = overviewOf(rt, ctx);
	if (!over.ok) return over;
	const positions = new Map(o.open.context.entries.map((e, p) => [e.id, p]));
	const adding = rt.entryTokens
		.of(named.entryIds.map((id) => o.open.context.sources[positions.get(id) as number]))
		.reduce((s, t) => s + t, 0);
	const after = over.overview.pins.tokens + Math.ceil(adding * rt.ratio(ctx.model));
	const cap = over.overview.pins.cap;
	if (after > cap) {
		return fail(
			`pinning ${named.entryIds.length} entries (~${after - over.overview.pins.tokens} tokens) would hold ~${after} tokens pinned, over the cap of ${cap} (${PINNED_SHARE_OF_MIN_TARGET} x minTarget of the budget): unpin something first`,
		);
	}
	const ops: JournalOp[] = [
		...named.marks.map((id): JournalOp => ({ v: 1, op: "unmark", id })),
		{ v: 1, op: "pin", entryIds: named.entryIds },
	];
	return durable<{ entryIds: string[]; pinnedTokens: number; cap: number; withdrawn: FoldId[] }>(ops, (work) => {
		for (const id of named.marks) {
			const u = work.unmark(id);
			if (!u.ok) return fail(u.reason);
		}
		const r = work.pin(named.entryIds);
		return r.ok ? { ok: true, entryIds: r.entryIds, pinnedTokens: after, cap, withdrawn: named.marks } : fail(r.reason);
	});
}

export function unpinEntries(
	rt: RuntimePort,
	durable: Durable,
	ids: readonly string[],
): Outcome<{ entryIds: string[] }> {
	const o = openOf(rt);
	if (!o.ok) return o;
	const folds = ids.filter((id) => isFoldId(id) && o.open.lattice.get(id));
	if (folds.length > 0) {
		return fail(
			`${folds.join(", ")} ${folds.length === 1 ? "is a fold id" : "are fold ids"}: a pinned entry is never inside a fold; unpin takes the entry ids status lists under pins`,
		);
	}
	const named = entryIdsOf(o.open.lattice, ids);
	if (!named.ok) return named;
	return durable<{ entryIds: string[] }>({ v: 1, op: "unpin", entryIds: named.entryIds }, (work) => {
		const r = work.unpin(named.entryIds);
		return r.ok ? { ok: true, entryIds: r.entryIds } : fail(r.reason);
	});
}
