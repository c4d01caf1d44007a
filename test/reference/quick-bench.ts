// Quick benchmark: the Wasm core (through its bindings) against both plain references at
// 10k items. Not a test, no assertions: `node test/reference/quick-bench.ts`.
// Targets: Wasm >= 1x the typed-array reference and >= 3x the object reference.
import { readFileSync } from "node:fs";
import { Bench } from "tinybench";
import { loadCore } from "../../bindings/index.ts";
import { randomLattice, randomMarks, randomRoots, rng } from "./gen.ts";
import { toFolds, validateLatticeObjects, validateLatticeTyped } from "./lattice-ref.ts";
import {
	selectCommitObjects,
	selectCommitTyped,
	selectConsolidationObjects,
	selectConsolidationTyped,
	toMarks,
	toRoots,
} from "./select-ref.ts";

const N = Number(process.argv[2] ?? 10_000);
const core = loadCore(readFileSync(new URL("../../wasm/pi-fold-core.wasm", import.meta.url)));
const results: string[] = [];

async function compare(name: string, wasm: () => unknown, typed: () => unknown, objects: () => unknown) {
	const bench = new Bench({ time: 400, warmup: true, warmupTime: 200 });
	bench.add("wasm", wasm).add("typed", typed).add("objects", objects);
	await bench.run();
	// Mean latency (ms), not mean throughput: the mean of per-sample rates overweights fast outliers.
	const ms = Object.fromEntries(
		bench.tasks.map((t) => [t.name, t.result && "latency" in t.result ? t.result.latency.mean : Number.NaN]),
	);
	const hz = Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, 1000 / v]));
	const us = (n: string) => (ms[n] * 1000).toFixed(1).padStart(8);
	results.push(
		`${name.padEnd(34)} wasm ${us("wasm")} us  typed ${us("typed")} us  objects ${us("objects")} us  ` +
			`wasm/typed ${(hz.wasm / hz.typed).toFixed(2)}x  wasm/objects ${(hz.wasm / hz.objects).toFixed(2)}x`,
	);
}

// Lattice: a valid, nested lattice of N folds (validation runs to the end).
{
	const l = randomLattice(rng(1), N * 8, N, { nestChance: 0.7, maxLength: 400 });
	const t = {
		start: Int32Array.from(l.start),
		end: Int32Array.from(l.end),
		parent: Int32Array.from(l.parent),
		depth: Int32Array.from(l.depth),
	};
	const folds = toFolds(l.start, l.end, l.parent, l.depth);
	const input = { ...t, leafCount: l.leafCount };
	if (!core.validateLattice(input).ok) throw new Error("bench lattice is invalid");
	await compare(
		`validateLattice (${l.start.length} folds)`,
		() => core.validateLattice(input),
		() => validateLatticeTyped(t.start, t.end, t.parent, t.depth, l.leafCount),
		() => validateLatticeObjects(folds, l.leafCount),
	);
	await compare(
		`validateLattice number[] input`,
		() => core.validateLattice(l),
		() => validateLatticeTyped(t.start, t.end, t.parent, t.depth, l.leafCount),
		() => validateLatticeObjects(folds, l.leafCount),
	);
}

// Commit selection: N marks, positions unsorted with ties; need = half the candidates' tokens.
for (const sorted of [false, true]) {
	const m = randomMarks(rng(2), N, N * 4);
	if (sorted) m.position.sort((a, b) => a - b);
	const t = {
		position: Int32Array.from(m.position),
		tokensFreed: Uint32Array.from(m.tokensFreed),
		flags: Uint8Array.from(m.flags),
	};
	const marks = toMarks(m.position, m.tokensFreed, m.flags);
	const need = m.tokensFreed.reduce((s, v, i) => ((m.flags[i] & 3) === 1 ? s + v : s), 0) / 2;
	await compare(
		`selectCommit (${N} marks, ${sorted ? "sorted" : "unsorted"})`,
		() => core.selectCommit(t, need),
		() => selectCommitTyped(t.position, t.tokensFreed, t.flags, need),
		() => selectCommitObjects(marks, need),
	);
}

// Consolidation: N roots, a few pinned, gaps up to 2, k = 10, maxGap 1 (many runs taken).
{
	const r = randomRoots(rng(3), N, 2, 0.05);
	const t = { start: Int32Array.from(r.start), end: Int32Array.from(r.end), flags: Uint8Array.from(r.flags) };
	const roots = toRoots(r.start, r.end, r.flags);
	await compare(
		`selectConsolidation (${N} roots)`,
		() => core.selectConsolidation(t, 10, 1),
		() => selectConsolidationTyped(t.start, t.end, t.flags, 10, 1),
		() => selectConsolidationObjects(roots, 10, 1),
	);
}

console.log(`node ${process.version}, N = ${N}`);
for (const line of results) console.log(line);
