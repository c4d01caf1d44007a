// The runtime benchmark's length sections: the sweep (the workload at several lengths, 200k window,
// pi-fold at Pi's defaults) and the synthetic long session (thousands of folds, opened in Pi, a few
// more stages run on it). Each is measured with pi-fold between the handler probes and with the
// probes alone (Pi's own floor), in one process, side by side.
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { PiFoldCore } from "../../bindings/index.ts";
import { tempDir } from "../../harness/pi-harness.ts";
import { generateLongSession, type LongSession } from "./long-session.ts";
import { runSweep, type SweepConfig, type SweepRun } from "./runtime-sweep.ts";
import { mean, quantile, round, spread } from "./stats.ts";

/** The summary of one arm's run (per-request wall time as Pi sees it, commits, memory, session shape). */
export function summarize(run: SweepRun) {
	const ms = run.perRequest.map((r) => r.ms);
	const event = (name: "boundary" | "context" | "context_with_system") =>
		run.perRequest.flatMap((r) => (r.byEvent[name] === undefined ? [] : [r.byEvent[name] as number]));
	const commitMs = run.commits.map((c) => c.ms);
	const own = spread(run.ownMs);
	return {
		requests: run.requests,
		...spread(ms),
		meanMs: round(mean(ms)),
		/** pi-fold's handlers' own time per request (its newest 256; the max is its slowest commit among them). */
		own: { ...own, requests: run.ownMs.length },
		byEvent: {
			boundary: { medianMs: round(quantile(event("boundary"), 0.5)), meanMs: round(mean(event("boundary"))) },
			context: { medianMs: round(quantile(event("context"), 0.5)) },
			contextWithSystem: { medianMs: round(quantile(event("context_with_system"), 0.5)) },
		},
		commits: run.commits.map((c) => ({ ...c, ms: round(c.ms) })),
		slowestCommitMs: commitMs.length === 0 ? null : round(Math.max(...commitMs)),
		setupMs: round(run.setupMs, 1),
		wallMs: round(run.wallMs, 1),
		memory: { heapUsedMb: round(run.memory.heapUsedMb, 1), rssMb: round(run.memory.rssMb, 1) },
		shape: { ...run.shape, editsPerMessage: round(run.shape.editsPerMessage) },
		health: run.health,
		perRequestMs: ms.map((x) => round(x)),
	};
}

type ArmSummary = ReturnType<typeof summarize>;

/**
 * What pi-fold adds over Pi's own floor between the probes (Pi alone still rebuilds a boundary's
 * context once after the first probe): the difference of the two arms' medians and p95s.
 */
export function added(piFold: ArmSummary, piAlone: ArmSummary) {
	return {
		medianMs: round(piFold.medianMs - piAlone.medianMs),
		p95Ms: round(piFold.p95Ms - piAlone.p95Ms),
	};
}

interface SweepLength {
	stages: number;
	/** pi-fold's median and p95 less Pi's own floor (see `added`). */
	added: ReturnType<typeof added>;
	piFold: ArmSummary;
	piAlone: ArmSummary;
	/** Heap after GC with pi-fold minus without (MB): what the extension holds. */
	extensionHeapMb: number;
}

export interface SweepSection {
	config: { lengths: number[]; seed: number; contextWindow: number; warmupStages: number };
	lengths: SweepLength[];
}

export async function sweepSection(cfg: SweepSection["config"]): Promise<SweepSection> {
	const base = { seed: cfg.seed, contextWindow: cfg.contextWindow };
	// Warm-up (not reported): module loading, the core's first instantiation, V8's baseline tiers.
	await runSweep({ ...base, stages: cfg.warmupStages, fold: true });
	await runSweep({ ...base, stages: cfg.warmupStages, fold: false });
	const lengths: SweepLength[] = [];
	for (const stages of cfg.lengths) {
		const piAlone = summarize(await runSweep({ ...base, stages, fold: false }));
		const piFold = summarize(await runSweep({ ...base, stages, fold: true }));
		lengths.push({
			stages,
			added: added(piFold, piAlone),
			piFold,
			piAlone,
			extensionHeapMb: round(piFold.memory.heapUsedMb - piAlone.memory.heapUsedMb, 1),
		});
		console.error(`sweep: ${stages} stages done (pi-fold median ${piFold.medianMs} ms, p95 ${piFold.p95Ms} ms)`);
	}
	return { config: cfg, lengths };
}

export interface LongSection {
	config: {
		folds: number;
		stagesPerCommit: number;
		resultChars: { min: number; max: number };
		stagesAfter: number;
		contextWindow: number;
		seed: number;
	};
	generated: Omit<LongSession, "file" | "sessionId">;
	/** pi-fold's open of the whole session again (the lattice rebuilt, every record checked), ms. */
	reopenMs: number;
	added: ReturnType<typeof added>;
	piFold: ArmSummary;
	piAlone: ArmSummary;
	extensionHeapMb: number;
}

export async function longSection(core: PiFoldCore, cfg: LongSection["config"]): Promise<LongSection> {
	const dir = tempDir("long-session");
	const generated = await generateLongSession(core, {
		dir,
		folds: cfg.folds,
		stagesPerCommit: cfg.stagesPerCommit,
		resultChars: cfg.resultChars,
		seed: cfg.seed,
	});
	console.error(`long session: ${generated.folds} folds, ${(generated.fileBytes / 1e6).toFixed(1)} MB generated`);
	const { file, sessionId: _id, ...shape } = generated;
	// Pi alone gets its own copy (it appends to the file; pi-fold's run must start from the original).
	const aloneDir = join(dir, "alone");
	mkdirSync(aloneDir);
	const alone = join(aloneDir, "session.jsonl");
	copyFileSync(file, alone);
	const run = (open: string, sessionDir: string, fold: boolean, before?: SweepConfig["before"]) =>
		runSweep({
			stages: cfg.stagesAfter,
			seed: cfg.seed,
			contextWindow: cfg.contextWindow,
			fold,
			open,
			sessionDir,
			idPrefix: "L",
			before,
		});
	const piAlone = summarize(await run(alone, aloneDir, false));
	let reopenMs = Number.NaN;
	const piFold = summarize(
		await run(file, dir, true, (h, fold) => {
			const rt = fold?.runtime.get();
			if (!rt) throw new Error("no runtime");
			const t0 = performance.now();
			rt.open(h.session.sessionManager);
			reopenMs = performance.now() - t0;
			if (!rt.view) throw new Error(`the long session did not open: ${rt.status().problems.join("; ")}`);
		}),
	);
	return {
		config: cfg,
		generated: shape,
		reopenMs: round(reopenMs, 1),
		added: added(piFold, piAlone),
		piFold,
		piAlone,
		extensionHeapMb: round(piFold.memory.heapUsedMb - piAlone.memory.heapUsedMb, 1),
	};
}

/** Markdown rows for one arm per length. */
export function printLengths(title: string, rows: { label: string; s: ArmSummary }[]): void {
	console.log(`\n## ${title}`);
	console.log(
		"| run | requests | median ms | p95 ms | max ms | pi-fold's own median / p95 ms | mean boundary ms | slowest commit ms | commits | heap MB | context_edit / message | fold depth |",
	);
	console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
	for (const { label, s } of rows) {
		const own = s.own.requests > 0 ? `${s.own.medianMs} / ${s.own.p95Ms}` : "-";
		console.log(
			`| ${label} | ${s.requests} | ${s.medianMs} | ${s.p95Ms} | ${s.maxMs} | ${own} | ${s.byEvent.boundary.meanMs} | ${s.slowestCommitMs ?? "-"} | ${s.commits.length} | ${s.memory.heapUsedMb} | ${s.shape.editsPerMessage} | ${s.shape.maxDepth + 1} |`,
		);
	}
}
