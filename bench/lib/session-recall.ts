// The session benchmark's part on finding what was folded: the index coverage (the share of folded
// tool calls whose name and principal argument a brief in the window still names) on the bench
// workload and on the real fixture session, and the recall of the planted values by the honest
// agent (recall-agent.ts), with search and without it (the index and peek only).

import { nodeCore } from "../../bindings/node.ts";
import { FIXTURE_SESSION, hasFixture } from "../../harness/fixture.ts";
import { replayFile } from "../../src/replay/replay.ts";
import type { IndexCoverage } from "../../src/report/index-coverage.ts";
import { RECALL_CAVEAT, type ValueReport } from "./recall-agent.ts";
import type { ArmRun } from "./session-arms.ts";
import type { TargetResult } from "./session-targets.ts";

const RECALL_TARGETS = {
	indexShare: 0.95,
	/** with search: every value, in at most this many calls per value found by calls, on average */
	callsPerValue: 2,
	/** without search: every value, within this many calls in all */
	callsWithoutSearch: 20,
};

interface RecallSummary {
	values: number;
	visible: number;
	recovered: number;
	lost: number;
	/** pi_fold_context calls in all, and per value found by calls */
	calls: number;
	callsPerRecovered: number;
	/** tokens the calls' answers added to the window */
	tokens: number;
}

export function recallSummary(run: ArmRun): RecallSummary {
	const count = (o: ValueReport["outcome"]) => run.values.filter((v) => v.outcome === o).length;
	const recovered = count("recovered");
	const calls = run.recallCalls.search + run.recallCalls.peek;
	return {
		values: run.values.length,
		visible: count("visible"),
		recovered,
		lost: count("lost"),
		calls,
		callsPerRecovered: recovered === 0 ? 0 : Number((calls / recovered).toFixed(2)),
		tokens: run.recallCalls.tokens,
	};
}

/** The fixture replayed by pi-fold's runtime: its window's index coverage (undefined without the fixture). */
export async function fixtureIndex(): Promise<IndexCoverage | undefined> {
	if (!hasFixture) return undefined;
	return (await replayFile(FIXTURE_SESSION, nodeCore())).index;
}

const pct = (x: number) => `${(100 * x).toFixed(1)}%`;

export function recallTargets(
	withSearch: ArmRun,
	withoutSearch: ArmRun,
	index: { workload?: IndexCoverage; fixture?: IndexCoverage },
): TargetResult[] {
	const out: TargetResult[] = [];
	const t = RECALL_TARGETS;
	for (const [where, cov] of Object.entries(index)) {
		if (!cov) continue;
		const met = cov.share >= t.indexShare;
		out.push({
			what: `index coverage, ${where}`,
			measured: Number(cov.share.toFixed(3)),
			needed: `>= ${t.indexShare}`,
			met,
			...(met
				? {}
				: {
						note: `${cov.visible} of ${cov.calls} folded calls named in ${cov.briefs} briefs (${cov.briefChars} characters); per brief: ${cov.perBrief.map((b) => `${b.visible}/${b.calls} in ${b.chars}`).join(", ")}`,
					}),
		});
	}
	const s = recallSummary(withSearch);
	const found = s.visible + s.recovered;
	const searchMet = found === s.values && s.callsPerRecovered <= t.callsPerValue;
	out.push({
		what: "values found with search (calls per value found by calls)",
		measured: found,
		needed: `= ${s.values}, <= ${t.callsPerValue} calls each`,
		met: searchMet,
		note: `${s.visible} visible, ${s.recovered} recovered in ${s.calls} calls (${s.callsPerRecovered} per value, ${s.tokens} tokens added), ${s.lost} lost`,
	});
	const n = recallSummary(withoutSearch);
	const nFound = n.visible + n.recovered;
	out.push({
		what: "values found without search (index and peek only)",
		measured: nFound,
		needed: `= ${n.values} within ${t.callsWithoutSearch} calls`,
		met: nFound === n.values && n.calls <= t.callsWithoutSearch,
		note: `${n.visible} visible, ${n.recovered} recovered in ${n.calls} calls (${n.tokens} tokens added), ${n.lost} lost`,
	});
	return out;
}

/** The workload's stages the same window names (its "Stage k" notes, in a brief or raw). */
function stagesLine(run: ArmRun): string {
	const s = run.fold?.stages;
	if (!s) return "Stages named in the window: not measured.";
	const missing = s.missing.length === 0 ? "" : ` (not named: ${s.missing.join(", ")})`;
	return `Stages named in the window: ${s.named}/${s.stages}${missing}.`;
}

/** The Markdown section: index coverage and recall with and without search. */
export function recallText(
	withSearch: ArmRun,
	withoutSearch: ArmRun,
	index: { workload?: IndexCoverage; fixture?: IndexCoverage },
): string {
	const cell = (n: number, of: number) => `${n}/${of} (${pct(n / Math.max(1, of))})`;
	const row = (what: string, now?: IndexCoverage) =>
		`| ${what} | ${now ? cell(now.visible, now.calls) : "not run"} | ${now ? cell(now.anyDepth, now.calls) : ""} |`;
	const lines = [
		"## Finding what was folded",
		"Index coverage: folded tool calls whose name and principal argument a brief in the window names (when the recall question is asked; the fixture after its last request).",
		"| | named in the window | named by a brief of a fold holding the call at any depth |",
		"|---|---:|---:|",
		row("bench workload", index.workload),
		row("real fixture (replayed)", index.fixture),
		"",
		stagesLine(withSearch),
		"",
		"Recall by the agent that reads only what a model would (the window, its own calls' answers):",
		RECALL_CAVEAT,
		"",
		"| | visible | recovered | lost | calls | tokens added |",
		"|---|---:|---:|---:|---:|---:|",
	];
	for (const [name, run] of [
		["with search", withSearch],
		["without search (index and peek)", withoutSearch],
	] as const) {
		const s = recallSummary(run);
		lines.push(`| ${name} | ${s.visible} | ${s.recovered} | ${s.lost} | ${s.calls} | ${s.tokens} |`);
	}
	return lines.join("\n");
}
