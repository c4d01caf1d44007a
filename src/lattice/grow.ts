// Growing a structure in place, at the cost of what changes: new root folds laid over spans of
// roots and raw leaves (a mark, a consolidation), and new positions at the end (an append). Each
// new fold is checked whole before anything changes (its span, its children, its id, against the
// core's validateLattice over the new folds and their direct children), then `apply` links it in:
// one node appended per fold, its children relinked, its leaves' innermost set, the roots list
// merged. Nothing else is touched, so a mark over the newest entries costs its span, not the session.
import { toHex } from "../../bindings/hex.ts";
import type { ContextIndex } from "./entries.ts";
import { describeFold, type FoldNode, type FoldSpec, foldIdOf, kidFold, nodeOf } from "./fold.ts";
import { refuse } from "./outcome.ts";
import { heightOf, type LatticeCore, refuseTwin, rootOf, type Structure, spanText } from "./structure.ts";

interface PlannedRoots {
	/** The new folds, in transcript order (not linked yet). */
	made: FoldNode[];
	/** Link them into the structure. */
	apply(): void;
}

/**
 * Plan new root folds over the given spans (disjoint, none inside an existing fold, each taking the
 * roots it covers whole). Refuses (throws `Refused`) what buildStructure would refuse for them.
 */
export function planRoots(
	core: LatticeCore,
	ctx: ContextIndex,
	structure: Structure,
	pins: ReadonlySet<number>,
	specs: readonly FoldSpec[],
): PlannedRoots {
	const order = [...specs].sort((a, b) => a.start - b.start);
	const { nodes, innermost } = structure;
	const made: FoldNode[] = [];
	const fresh = new Map<string, FoldNode>();
	for (const [j, s] of order.entries()) {
		if (
			!(Number.isInteger(s.start) && Number.isInteger(s.end) && s.start >= 0 && s.start < s.end && s.end <= ctx.size)
		) {
			refuse(`${spanText(ctx, s)} is empty or reaches outside the context's ${ctx.size} entries`);
		}
		if (j > 0 && s.start < order[j - 1].end) {
			refuse(`${spanText(ctx, s)} partially overlaps ${spanText(ctx, order[j - 1])}`);
		}
		const kids: number[] = [];
		for (let p = s.start; p < s.end; ) {
			const i = innermost[p];
			if (i === -1) {
				kids.push(p++);
				continue;
			}
			const root = rootOf(structure, nodes[i]);
			if (root.start < s.start || root.end > s.end) {
				refuse(
					root.start <= s.start && root.end >= s.end
						? `a new root, ${spanText(ctx, s)}, would lie inside ${describeFold(root)}`
						: `${spanText(ctx, s)} partially overlaps ${spanText(ctx, root)}`,
				);
			}
			if (root.state === "pending") {
				refuse(
					`a pending mark, ${spanText(ctx, root)}, would lie inside a new fold ${spanText(ctx, s)}: marks are roots`,
				);
			}
			kids.push(-(root.slot + 1));
			p = root.end;
		}
		const identityBytes = core.foldIdentity(
			kids.map((k) => (k >= 0 ? ctx.digest(k) : nodes[kidFold(k)].identityBytes)),
		);
		const identity = toHex(identityBytes);
		const id = foldIdOf(identity);
		const twin = structure.byId.get(id) ?? fresh.get(id);
		if (twin) refuseTwin(ctx, s, id, identity, twin);
		const height = heightOf(kids, (slot) => nodes[slot].height);
		const node = nodeOf(s, identityBytes, identity, { slot: nodes.length + j, parent: -1, kids, height });
		for (const k of kids) {
			if (k >= 0 && pins.has(k)) {
				refuse(`pinned ${ctx.label(k)} would lie inside ${describeFold(node)}: pinned entries never fold`);
			}
		}
		fresh.set(id, node);
		made.push(node);
	}
	validateNew(core, ctx, structure, made);
	return {
		made,
		apply: () => {
			for (const node of made) {
				nodes.push(node);
				structure.byId.set(node.id, node);
				for (const k of node.kids) {
					if (k >= 0) innermost[k] = node.slot;
					else nodes[kidFold(k)].parent = node.slot;
				}
			}
			structure.roots = mergeRoots(structure, made);
			structure.preorder = undefined;
		},
	};
}

/** The core's check of what changed: each new fold with its direct child folds, in pre-order. */
function validateNew(core: LatticeCore, ctx: ContextIndex, structure: Structure, made: readonly FoldNode[]): void {
	const rows: { start: number; end: number; parent: number; depth: number }[] = [];
	for (const node of made) {
		const at = rows.length;
		rows.push({ start: node.start, end: node.end, parent: -1, depth: 0 });
		for (const k of node.kids) {
			if (k >= 0) continue;
			const child = structure.nodes[kidFold(k)];
			rows.push({ start: child.start, end: child.end, parent: at, depth: 1 });
		}
	}
	const verdict = core.validateLattice({
		start: Int32Array.from(rows, (r) => r.start),
		end: Int32Array.from(rows, (r) => r.end),
		parent: Int32Array.from(rows, (r) => r.parent),
		depth: Int32Array.from(rows, (r) => r.depth),
		leafCount: ctx.size,
	});
	if (!verdict.ok) refuse(`the core rejects the lattice (${verdict.code}): ${verdict.message}`);
}

/** The roots after `made` are laid over the roots they cover, in transcript order. */
function mergeRoots(structure: Structure, made: readonly FoldNode[]): number[] {
	const out: number[] = [];
	let j = 0;
	for (const slot of structure.roots) {
		const r = structure.nodes[slot];
		if (r.parent !== -1) continue; // now under a new fold
		while (j < made.length && made[j].start < r.start) out.push(made[j++].slot);
		out.push(slot);
	}
	while (j < made.length) out.push(made[j++].slot);
	return out;
}

/** Make room for positions up to `size` (new positions are raw): amortized O(new). */
export function growPositions(structure: Structure, from: number, size: number): void {
	if (structure.innermost.length < size) {
		const grown = new Int32Array(Math.max(size, 2 * structure.innermost.length, 16));
		grown.set(structure.innermost.subarray(0, from));
		structure.innermost = grown;
	}
	structure.innermost.fill(-1, from, size);
}
