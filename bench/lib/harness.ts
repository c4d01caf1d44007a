// Side-by-side micro-benchmark groups on tinybench: every contender of a group runs in the
// same process, on the same inputs, and ratios are taken from medians measured in that run.

import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { Bench } from "tinybench";

interface Contender {
	name: string;
	fn: () => unknown;
}

export interface GroupResult {
	group: string;
	/** bytes processed per call, for MB/s; 0 when not a throughput group */
	bytesPerCall: number;
	rows: { name: string; medianMs: number; meanMs: number; spreadPercent: number; samples: number; mbPerS?: number }[];
}

/**
 * Run a group in `rounds` short tinybench passes, contenders shuffled in each pass, and keep
 * each contender's median over the passes. On a shared machine the load drifts over seconds;
 * interleaving makes every contender see the same drift, so ratios stay meaningful.
 */
export async function runGroup(
	group: string,
	bytesPerCall: number,
	contenders: Contender[],
	timeMs = 1500,
	rounds = 5,
): Promise<GroupResult> {
	const perRound = new Map<string, { median: number; mean: number; samples: number }[]>();
	for (const c of contenders) perRound.set(c.name, []);
	for (let round = 0; round < rounds; round++) {
		const order = [...contenders].sort(() => Math.random() - 0.5);
		const bench = new Bench({
			name: group,
			time: timeMs / rounds,
			iterations: 8,
			warmupTime: round === 0 ? 300 : 50,
			warmupIterations: 2,
		});
		for (const c of order) bench.add(c.name, c.fn);
		await bench.run();
		for (const t of bench.tasks) {
			const r = t.result;
			if (r.state !== "completed")
				throw new Error(`${group} / ${t.name}: ${r.state}${"error" in r ? `: ${String(r.error)}` : ""}`);
			perRound
				.get(t.name)
				?.push({ median: r.latency.p50 ?? r.latency.mean, mean: r.latency.mean, samples: r.latency.samplesCount });
		}
	}
	const rows = contenders.map(({ name }) => {
		const rs = perRound.get(name) ?? [];
		const medians = rs.map((r) => r.median).sort((a, b) => a - b);
		const medianMs = medians[Math.floor(medians.length / 2)];
		// spread of the per-round medians, as a percentage of their median
		const spread = (100 * (medians[medians.length - 1] - medians[0])) / 2 / medianMs;
		return {
			name,
			medianMs,
			meanMs: rs.reduce((a, r) => a + r.mean, 0) / rs.length,
			spreadPercent: spread,
			samples: rs.reduce((a, r) => a + r.samples, 0),
			...(bytesPerCall ? { mbPerS: bytesPerCall / 1e6 / (medianMs / 1e3) } : {}),
		};
	});
	return { group, bytesPerCall, rows };
}

/** How many times faster `a` is than `b` in a group (median latency of b / median latency of a). */
export function ratio(g: GroupResult, a: string, b: string): number {
	const find = (n: string) => {
		const row = g.rows.find((r) => r.name === n);
		if (!row) throw new Error(`no contender ${n} in ${g.group}`);
		return row.medianMs;
	};
	return find(b) / find(a);
}

export function printGroup(g: GroupResult): void {
	console.log(`\n## ${g.group}`);
	const fastest = Math.min(...g.rows.map((r) => r.medianMs));
	console.log(`| contender | median ms | ±spread % | samples |${g.bytesPerCall ? " MB/s |" : ""} vs fastest |`);
	console.log(`|---|---:|---:|---:|${g.bytesPerCall ? "---:|" : ""}---:|`);
	for (const r of g.rows) {
		const mb = g.bytesPerCall ? ` ${r.mbPerS?.toFixed(0)} |` : "";
		console.log(
			`| ${r.name} | ${r.medianMs.toFixed(3)} | ${r.spreadPercent.toFixed(1)} | ${r.samples} |${mb} ${(r.medianMs / fastest).toFixed(2)}x slower |`,
		);
	}
}

export interface Target {
	what: string;
	measured: number;
	target: number;
	met: boolean;
}

export function target(what: string, measured: number, min: number): Target {
	return { what, measured: Number(measured.toFixed(3)), target: min, met: measured >= min };
}

export function printTargets(targets: Target[]): void {
	console.log("\n## Targets (ratios from this run)");
	console.log("| target | measured | needed | |");
	console.log("|---|---:|---:|---|");
	for (const t of targets)
		console.log(`| ${t.what} | ${t.measured.toFixed(2)}x | >= ${t.target}x | ${t.met ? "met" : "MISSED"} |`);
}

/** Dated machine notes, as @chainsafe/as-sha256 keeps with its benchmarks. */
export function machineNotes() {
	const flags = (() => {
		try {
			const info = readFileSync("/proc/cpuinfo", "utf8");
			return ["sha_ni", "avx2", "avx512f"].filter((f) => new RegExp(`\\b${f}\\b`).test(info));
		} catch {
			return [];
		}
	})();
	return {
		date: new Date().toISOString(),
		cpu: cpus()[0]?.model ?? "unknown",
		cores: cpus().length,
		cpuFlags: flags,
		node: process.version,
		v8: process.versions.v8,
		platform: `${process.platform}-${process.arch}`,
	};
}
