// Plain, detached descriptions of the lattice for callers and tests.
import type { ContextIndex } from "./entries.ts";
import { type FoldChild, type FoldLeaf, type FoldNode, type FoldView, kidFold } from "./fold.ts";
import { depthOf, preorderOf, type Structure } from "./structure.ts";

export function viewOf(f: FoldNode, structure: Structure, ctx: ContextIndex): FoldView {
	return {
		id: f.id,
		identity: f.identity,
		kind: f.kind,
		state: f.state,
		brief: f.brief,
		provenance: f.provenance,
		start: f.start,
		end: f.end,
		parent: f.parent === -1 ? null : structure.nodes[f.parent].id,
		depth: depthOf(structure, f),
		children: f.kids.map(
			(k): FoldChild =>
				k >= 0 ? { type: "leaf", entryId: ctx.at(k).id } : { type: "fold", id: structure.nodes[kidFold(k)].id },
		),
	};
}

/** Every entry of a fold's span, in order. */
export function leavesOf(f: FoldNode, ctx: ContextIndex): FoldLeaf[] {
	const out: FoldLeaf[] = [];
	for (let p = f.start; p < f.end; p++) {
		const e = ctx.at(p);
		out.push({ entryId: e.id, hash: e.hash });
	}
	return out;
}

/** The whole state as plain data: deep-equal snapshots mean equal lattices. */
export interface LatticeSnapshot {
	leafCount: number;
	/** Pre-order. */
	folds: FoldView[];
	/** Pinned entry ids, in transcript order. */
	pins: string[];
}

export function pinnedIds(pins: ReadonlySet<number>, ctx: ContextIndex): string[] {
	return [...pins].sort((a, b) => a - b).map((p) => ctx.at(p).id);
}

export function snapshotOf(structure: Structure, pins: ReadonlySet<number>, ctx: ContextIndex): LatticeSnapshot {
	return {
		leafCount: ctx.size,
		folds: preorderOf(structure).map((f) => viewOf(f, structure, ctx)),
		pins: pinnedIds(pins, ctx),
	};
}
