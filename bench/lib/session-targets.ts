// The session benchmark's targets: what each run is checked against, and why a missed one missed
// (from the run's own numbers). Also the cost by token class and the fresh-input floor analysis.
//
// The fresh-input floor: every message appended to the conversation is written to the provider's cache
// once, whatever the policy. "none" pays exactly that (it never rewrites anything), so its fresh input is
// the least any policy pays on this workload, and a fresh-input target below it is out of reach.
import type { PriceTierLimit } from "../../src/meter/budget.ts";
import type { ArmReport, RequestRecord } from "../../src/report/arm-report.ts";
import { costOf, type PriceCard } from "../../src/report/price-card.ts";
import { ARMS, type ArmName, type ArmRun } from "./session-arms.ts";
import { SCENARIOS, type ScenarioTargets } from "./session-scenarios.ts";
import { round } from "./stats.ts";

/** One target of the session benchmark, and whether the run met it. */
export interface TargetResult {
	what: string;
	measured: number;
	needed: string;
	met: boolean;
	/** for a missed target: by how much, and why (from this run's numbers) */
	note?: string;
}

/** One policy run of the pi-fold arm, and what it cost. */
export interface PolicyVariant {
	name: string;
	why: string;
	report: ArmReport;
	values: { recoverable: number; of: number };
}

/** Dollars by token class (each request priced at its own tier). */
export interface CostParts {
	/** input + cache writes: prompt tokens not served from the cache */
	freshInput: number;
	cacheRead: number;
	output: number;
}

export function costParts(records: readonly RequestRecord[], card: PriceCard): CostParts {
	const parts = { freshInput: 0, cacheRead: 0, output: 0 };
	const none = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0 };
	for (const r of records) {
		const p = r.promptTokens;
		parts.freshInput += costOf({ ...none, input: r.input, cacheWrite: r.cacheWrite, promptTokens: p }, card);
		parts.cacheRead += costOf({ ...none, cacheRead: r.cacheRead, promptTokens: p }, card);
		parts.output += costOf({ ...none, output: r.output, promptTokens: p }, card);
	}
	return parts;
}

export interface FloorAnalysis {
	/** fresh input of the "none" arm: what every policy pays at least on this workload */
	floor: number;
	piFoldAbove: number;
	nativeAbove: number;
	/** native's fresh input above the floor, as a share of native's fresh input */
	nativeOverheadShare: number;
	/** the fresh-input target in tokens: freshInputRatio x native */
	target: number;
	/** false when the target is below the floor: no policy can meet it on this workload */
	reachable: boolean;
	verdict: string;
}

const int = (n: number) => Math.round(n).toLocaleString("en-US");
const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
const usd = (x: number) => `$${x.toFixed(4)}`;
const signedUsd = (x: number) => (x < 0 ? `-${usd(-x)}` : `+${usd(x)}`);

export function floorAnalysis(
	fold: ArmReport,
	native: ArmReport,
	none: ArmReport,
	r = SCENARIOS.equal.targets.freshInputRatio ?? 0.7,
): FloorAnalysis {
	const floor = none.freshInput;
	const target = r * native.freshInput;
	const reachable = target >= floor;
	const nativeAbove = native.freshInput - floor;
	const nativeOverheadShare = native.freshInput > 0 ? nativeAbove / native.freshInput : 0;
	const head = `pi-fold fresh input = floor ${int(floor)} + ${int(fold.freshInput - floor)}; native = floor + ${int(nativeAbove)}`;
	const verdict = reachable
		? `${head}; ${r} x native = ${int(target)} >= floor ${int(floor)}: reachable (a policy may pay up to ` +
			`${int(target - floor)} above the floor); pi-fold ${fold.freshInput <= target ? "meets it" : `is ${int(fold.freshInput - target)} over it`}`
		: `${head}; ${r} x native = ${int(target)} < floor ${int(floor)}: unreachable by any policy on this workload ` +
			`(native's overhead above the floor is ${pct(nativeOverheadShare)} of its fresh input; ` +
			`the target needs more than ${pct(1 - r)})`;
	return {
		floor,
		piFoldAbove: fold.freshInput - floor,
		nativeAbove,
		nativeOverheadShare,
		target,
		reachable,
		verdict,
	};
}

const ratioOf = (a: number, b: number) => (b === 0 ? Number.NaN : a / b);

function missedBy(measured: number, limit: number): string {
	return `missed by ${round(measured - limit)} (${pct(measured / limit - 1)} above ${limit})`;
}

/** Fresh input of the recall phase and of everything before it (workload requests and Pi's summaries). */
function freshByPhase(run: ArmRun): { work: number; recall: number } {
	const out = { work: 0, recall: 0 };
	for (const r of run.records) out[r.kind === "recall" ? "recall" : "work"] += r.input + r.cacheWrite;
	return out;
}

/** Mean prompt size of the requests that answer the conversation (Pi's summary requests left out). */
function meanContext(run: ArmRun): number {
	const xs = run.records.filter((r) => r.kind !== "summary").map((r) => r.promptTokens);
	return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

/** Requests (work, recall and summaries) whose prompt passed the tier: billed at its rates, whole. */
export function aboveTier(run: ArmRun, tier: PriceTierLimit | undefined): number {
	return tier ? run.records.filter((x) => x.promptTokens > tier.above).length : 0;
}

/** What the targets are checked against: the arms' runs, reports and costs, and the scenario's targets. */
interface TargetInputs {
	reports: Record<ArmName, ArmReport>;
	costs: Record<ArmName, CostParts>;
	floor: FloorAnalysis;
	runs: Record<ArmName, ArmRun>;
	budget: number;
	/** the model's context window */
	window: number;
	card: PriceCard;
	targets: ScenarioTargets;
	tier: PriceTierLimit | undefined;
	policies: readonly PolicyVariant[];
}

/** Every target of the run, in report order. */
export function sessionTargets(x: TargetInputs): TargetResult[] {
	return [
		...ratioTargets(x),
		...piFoldChecks(x),
		...setupTargets(x),
		...policyTargets(x.reports["pi-fold"], x.policies),
		...coldTargets(x.runs["pi-fold"], x.targets),
		...longRunTargets(x.runs["pi-fold"], x.targets),
		...referTargets(x.runs, x.targets),
	];
}

/** A ratio that must stay at or under its limit; a miss says by how much and why. */
function ratioTarget(what: string, measured: number, limit: number, why: () => string): TargetResult {
	const met = measured <= limit;
	return {
		what,
		measured: round(measured),
		needed: `<= ${limit}`,
		met,
		...(met ? {} : { note: `${missedBy(measured, limit)}: ${why()}` }),
	};
}

/** pi-fold against native: cost, fresh input (when the scenario sets it), total tokens; and the peak. */
function ratioTargets(x: TargetInputs): TargetResult[] {
	const f = x.reports["pi-fold"];
	const n = x.reports.native;
	const t = x.targets;
	const context = `mean request context ${int(meanContext(x.runs["pi-fold"]))} vs ${int(meanContext(x.runs.native))} tokens`;
	return [
		ratioTarget("cost, pi-fold / native", ratioOf(f.cost, n.cost), t.costRatio, () => costMiss(x, context)),
		...(t.freshInputRatio === undefined
			? []
			: [
					ratioTarget("fresh input, pi-fold / native", ratioOf(f.freshInput, n.freshInput), t.freshInputRatio, () =>
						freshMiss(x),
					),
				]),
		ratioTarget(
			"total tokens, pi-fold / native",
			ratioOf(f.totalTokens, n.totalTokens),
			t.totalTokensRatio,
			() =>
				`pi-fold ${int(f.totalTokens)} tokens (${pct(ratioOf(f.cacheRead, f.totalTokens))} cache reads), native ` +
				`${int(n.totalTokens)} (${pct(ratioOf(n.cacheRead, n.totalTokens))} cache reads); ${context}`,
		),
		t.peakShareOfBudget === undefined
			? ratioTarget(
					"pi-fold peak request context / window",
					ratioOf(f.peakPromptTokens, x.window),
					1,
					() =>
						`pi-fold's largest request carried ${int(f.peakPromptTokens)} tokens of a ${int(x.window)}-token window`,
				)
			: ratioTarget(
					"pi-fold peak request context / budget",
					ratioOf(f.peakPromptTokens, x.budget),
					t.peakShareOfBudget,
					() =>
						`pi-fold's largest request carried ${int(f.peakPromptTokens)} tokens of a ${int(x.budget)}-token budget`,
				),
	];
}

/** Why pi-fold missed the cost target: native minus pi-fold by token class. */
function costMiss(x: TargetInputs, context: string): string {
	const f = x.reports["pi-fold"];
	const n = x.reports.native;
	const fc = x.costs["pi-fold"];
	const nc = x.costs.native;
	const floorCost = x.floor.floor * x.card.base.cacheWrite * 1e-6;
	const saved = n.cost - f.cost;
	return (
		`the target needs pi-fold to cost ${usd((1 - x.targets.costRatio) * n.cost)} less than native; it costs ` +
		`${saved >= 0 ? `${usd(saved)} less` : `${usd(-saved)} more`}. Native minus pi-fold by token class: cache reads ` +
		`${signedUsd(nc.cacheRead - fc.cacheRead)} (${context}), output ${signedUsd(nc.output - fc.output)}, fresh input ` +
		`${signedUsd(nc.freshInput - fc.freshInput)} (both pay the floor, ${usd(floorCost)} at the base cache-write ` +
		`price, plus re-sent context: pi-fold ${usd(fc.freshInput - floorCost)}, native ${usd(nc.freshInput - floorCost)})`
	);
}

/** Why pi-fold missed the fresh-input target: each arm above the floor, split at the recall question. */
function freshMiss(x: TargetInputs): string {
	const floorPhases = freshByPhase(x.runs.none);
	const above = (arm: ArmName, events: number | undefined, what: string) => {
		const p = freshByPhase(x.runs[arm]);
		const work = p.work - floorPhases.work;
		const each = events ? `, ${int(work / events)} per ${what} over ${events} ${what}${events === 1 ? "" : "s"}` : "";
		return `${int(work)} in the workload${each}, ${int(p.recall - floorPhases.recall)} in the recall phase`;
	};
	return (
		`${x.floor.verdict}. Above the floor, pi-fold sends ${above("pi-fold", x.reports["pi-fold"].commits, "commit")}; ` +
		`native ${above("native", x.reports.native.compactions, "compaction")}`
	);
}

/** What pi-fold must never miss: no unexplained rewrite, every value recoverable, the tier when asked. */
function piFoldChecks(x: TargetInputs): TargetResult[] {
	const out: TargetResult[] = [];
	const unattributed = x.reports["pi-fold"].rewrites?.unattributed ?? Number.NaN;
	out.push({
		what: "unattributed rewrites",
		measured: unattributed,
		needed: "= 0",
		met: unattributed === 0,
		...(unattributed === 0 ? {} : { note: "a rewrite no commit explains is a bug: see arms.pi-fold.fold.rewrites" }),
	});
	const values = x.runs["pi-fold"].values;
	const recoverable = values.filter((v) => v.outcome === "visible" || v.outcome === "recovered").length;
	const lost = values.filter((v) => v.outcome.startsWith("lost"));
	out.push({
		what: "values recoverable by pi-fold",
		measured: recoverable,
		needed: `= ${values.length}`,
		met: recoverable === values.length,
		...(lost.length === 0 ? {} : { note: `lost: ${lost.map((v) => `stage ${v.stage} (${v.outcome})`).join(", ")}` }),
	});
	const run = x.runs["pi-fold"];
	out.push({
		what: "pi-fold ran the session to its end",
		measured: run.completed ? 1 : 0,
		needed: "= 1",
		met: run.completed,
		...(run.completed
			? {}
			: {
					note: `${run.stopped} request(s) stopped, ${run.refused} refused as too long: see arms.pi-fold.fold.problems`,
				}),
	});
	out.push({
		what: "pi-fold requests stopped before sending",
		measured: run.stopped,
		needed: "= 0",
		met: run.stopped === 0,
	});
	const perRequest = x.targets.rewritesPerRequest;
	if (perRequest !== undefined) {
		const rewrites = run.fold?.rewrites;
		const measured = rewrites && rewrites.requests > 0 ? rewrites.attributed / rewrites.requests : Number.NaN;
		out.push(
			ratioTarget(
				"pi-fold prefix rewrites per request",
				measured,
				round(perRequest),
				() => `${rewrites?.attributed} rewrites in ${rewrites?.requests} requests (${run.fold?.commits} commits)`,
			),
		);
	}
	const wanted = x.targets.piFoldAboveTier;
	if (x.tier && wanted !== undefined) {
		const over = aboveTier(x.runs["pi-fold"], x.tier);
		out.push({
			what: `pi-fold requests above the price tier (${int(x.tier.above)})`,
			measured: over,
			needed: `= ${wanted}`,
			met: over === wanted,
			...(over === wanted
				? {}
				: { note: `pi-fold's budget was ${int(x.budget)}: a request above the tier means it did not bind` }),
		});
	}
	return out;
}

/** A count that must reach `wanted`; a miss carries `note`. */
function atLeast(what: string, measured: number, wanted: number, note?: string): TargetResult {
	const met = measured >= wanted;
	return { what, measured, needed: `>= ${wanted}`, met, ...(met || note === undefined ? {} : { note }) };
}

/** The setup's own checks: native must show what the scenario is about (compactions, the tier). */
function setupTargets(x: TargetInputs): TargetResult[] {
	const out: TargetResult[] = [];
	const compactions = x.runs.native.compactions;
	const wanted = x.targets.nativeCompactions;
	if (wanted !== undefined) {
		const note =
			`native compacted ${compactions} time(s): the session is too short to show compaction's cost ` +
			"(more --stages or --read-lines, or a smaller --window)";
		out.push(atLeast("native compactions (setup)", compactions, wanted, note));
	}
	const above = x.targets.nativeAboveTier;
	if (x.tier && above !== undefined) {
		const over = aboveTier(x.runs.native, x.tier);
		const note = "native never passed the tier: the session is too short to show the surcharge (more --stages)";
		out.push(atLeast("native requests above the price tier (setup)", over, above, note));
	}
	return out;
}

/** pi-fold's default policy must never cost more than the seed's band on the same session. */
function policyTargets(fold: ArmReport, policies: readonly PolicyVariant[]): TargetResult[] {
	const band = policies.find((p) => p.name.startsWith("seed band"));
	if (!band) return [];
	const measured = round(ratioOf(fold.cost, band.report.cost));
	return [{ what: "cost, pi-fold / seed band", measured, needed: "<= 1", met: measured <= 1 }];
}

/** The idle scenario's point: commits made where a cold cache made the rewrite free. */
function coldTargets(run: ArmRun, t: ScenarioTargets): TargetResult[] {
	if (t.coldCommits === undefined) return [];
	const measured = run.fold?.coldCommits ?? 0;
	return [atLeast("pi-fold commits on a cold cache", measured, t.coldCommits)];
}

/** The long-run scenario's point: a cache that expired while a tool ran is used by a commit at that turn's end. */
function longRunTargets(run: ArmRun, t: ScenarioTargets): TargetResult[] {
	if (t.longRunsUsed === undefined) return [];
	const used = run.longRuns?.used ?? 0;
	const note = `${run.longRuns?.runs ?? 0} tool runs outlived the cache; pi-fold committed at the end of ${used} of their turns`;
	return [atLeast("tool runs past the cache's lifetime used by a commit", used, t.longRunsUsed, note)];
}

/** Work that refers back: every arm quotes the right value, however it got it. */
function referTargets(runs: Record<ArmName, ArmRun>, t: ScenarioTargets): TargetResult[] {
	if (!t.referBacksQuoted) return [];
	return ARMS.map((arm) => {
		const log = runs[arm].referBacks ?? [];
		const quoted = log.filter((x) => x.quoted !== undefined).length;
		return {
			what: `${arm}: stages that refer back quote the value`,
			measured: quoted,
			needed: `= ${log.length}`,
			met: log.length > 0 && quoted === log.length,
		};
	});
}
