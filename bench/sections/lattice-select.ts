// Lattice validation and commit/consolidation selection at 10k items: the core against a
// typed-array TypeScript reference (same algorithm) and a straightforward object-based one.
import type { PiFoldCore } from "../../bindings/index.ts";
import { randomLattice, randomMarks, randomRoots, rng } from "../../harness/reference/gen.ts";
import { toFolds, validateLatticeObjects, validateLatticeTyped } from "../../harness/reference/lattice-ref.ts";
import {
	selectCommitObjects,
	selectCommitTyped,
	selectConsolidationObjects,
	selectConsolidationTyped,
	toMarks,
	toRoots,
} from "../../harness/reference/select-ref.ts";
import { type GroupResult, ratio, runGroup, type Target, target } from "../lib/harness.ts";

const N = 10_000;
const WASM = "core wasm";
const TYPED = "TS typed-array reference";
const OBJECTS = "TS object-based reference";

async function compare(name: string, wasm: () => unknown, typed: () => unknown, objects: () => unknown) {
	const g = await runGroup(
		name,
		0,
		[
			{ name: WASM, fn: wasm },
			{ name: TYPED, fn: typed },
			{ name: OBJECTS, fn: objects },
		],
		800,
	);
	return {
		g,
		targets: [
			target(`${name}: wasm vs typed reference`, ratio(g, WASM, TYPED), 1),
			target(`${name}: wasm vs object reference`, ratio(g, WASM, OBJECTS), 3),
		],
	};
}

export async function benchLatticeSelect(core: PiFoldCore): Promise<{ groups: GroupResult[]; targets: Target[] }> {
	const results = [];

	// A valid nested lattice, so validation runs to the end.
	const l = randomLattice(rng(1), N * 8, N, { nestChance: 0.7, maxLength: 400 });
	const cols = {
		start: Int32Array.from(l.start),
		end: Int32Array.from(l.end),
		parent: Int32Array.from(l.parent),
		depth: Int32Array.from(l.depth),
	};
	const folds = toFolds(l.start, l.end, l.parent, l.depth);
	const input = { ...cols, leafCount: l.leafCount };
	if (!core.validateLattice(input).ok) throw new Error("bench lattice is invalid");
	results.push(
		await compare(
			`validateLattice (${l.start.length} folds)`,
			() => core.validateLattice(input),
			() => validateLatticeTyped(cols.start, cols.end, cols.parent, cols.depth, l.leafCount),
			() => validateLatticeObjects(folds, l.leafCount),
		),
	);

	// Commit selection: marks arrive unsorted with ties; the commit must free half of what is eligible.
	const m = randomMarks(rng(2), N, N * 4);
	const mt = {
		position: Int32Array.from(m.position),
		tokensFreed: Uint32Array.from(m.tokensFreed),
		flags: Uint8Array.from(m.flags),
	};
	const marks = toMarks(m.position, m.tokensFreed, m.flags);
	const need = m.tokensFreed.reduce((s, v, i) => ((m.flags[i] & 3) === 1 ? s + v : s), 0) / 2;
	results.push(
		await compare(
			`selectCommit (${N} unsorted marks)`,
			() => core.selectCommit(mt, need),
			() => selectCommitTyped(mt.position, mt.tokensFreed, mt.flags, need),
			() => selectCommitObjects(marks, need),
		),
	);

	// Consolidation: roots with a few pins and small gaps, consolidateAfter 10, maxGap 1.
	const r = randomRoots(rng(3), N, 2, 0.05);
	const rt = { start: Int32Array.from(r.start), end: Int32Array.from(r.end), flags: Uint8Array.from(r.flags) };
	const roots = toRoots(r.start, r.end, r.flags);
	results.push(
		await compare(
			`selectConsolidation (${N} roots)`,
			() => core.selectConsolidation(rt, 10, 1),
			() => selectConsolidationTyped(rt.start, rt.end, rt.flags, 10, 1),
			() => selectConsolidationObjects(roots, 10, 1),
		),
	);
	return { groups: results.map((x) => x.g), targets: results.flatMap((x) => x.targets) };
}
