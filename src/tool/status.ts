// action "status": which pi-fold, which Wasm core (with proof it answers), which Pi.
import type { FoldActions, Overview } from "../operations/actions.ts";
import { type CoreReport, coreReport } from "../operations/core-report.ts";
import { policyLines } from "../operations/policy-lines.ts";
import { problemLines, type RuntimeStatus } from "../operations/status.ts";
import type { FoldView, ReadonlyLattice } from "../operations/view.ts";
import { arithmeticText } from "./arithmetic-text.ts";
import type { ToolCall, ToolEnv } from "./env.ts";
import { answer, continuation, type FoldToolResult } from "./result.ts";
import type { FoldToolArgs } from "./schema.ts";

export interface StatusDetails {
	ok: boolean;
	action: "status";
	packageVersion: string;
	piVersion: string | null;
	core: CoreReport | { error: string; source: string; fix: string };
	/** The folding runtime's state; absent when no runtime runs. */
	runtime?: RuntimeStatus;
	/** Marks with what they would free, pins, and the arithmetic; absent without an open session. */
	overview?: Overview;
	/** detail "tree": one page of the folds in transcript order, each with its index line. */
	tree?: {
		id: string;
		kind: string;
		state: string;
		depth: number;
		parent: string | null;
		entries: number;
		line: string;
	}[];
	/** The tree page: where it starts, and how many folds there are in all. */
	treePage?: { offset: number; folds: number };
}

/** Folds per page of the status tree, and each line's index part at most. */
export const TREE_PAGE = 30;
const TREE_LINE_CHARS = 160;
/** Roots, marks and problems a compact status lists by name; past that it counts them. */
const STATUS_LIST = 12;

/** At most STATUS_LIST items, then how many more. */
function capped<T>(items: readonly T[], line: (x: T) => string, more: (n: number) => string): string[] {
	const shown = items.slice(0, STATUS_LIST).map(line);
	return items.length > STATUS_LIST ? [...shown, more(items.length - STATUS_LIST)] : shown;
}

const pct = (share: number) => `${(100 * share).toFixed(1)}%`;

/** The runtime's part of the status text: occupancy, thresholds, marks, roots, rewrites, problems. */
export function runtimeLines(rt: RuntimeStatus): string[] {
	const t = rt.thresholds;
	const budget =
		rt.budget === null
			? "not measured yet"
			: rt.budget.ok
				? `${rt.budget.tokens.toLocaleString("en-US")} tokens (${rt.budget.why}), model ${rt.budget.model}`
				: `unknown: ${rt.budget.reason}`;
	const occ = rt.occupancy
		? `${rt.occupancy.tokens} tokens = ${pct(rt.occupancy.share)} of the budget`
		: "not measured yet";
	const rw = rt.rewrites;
	const a = rw.attributed;
	const lines = [
		`budget: ${budget}`,
		`occupancy (next request, calibrated): ${occ}`,
		`thresholds: commit at ${pct(t.maxTarget)}, fold down to ${pct(t.minTarget)}, consolidate past ${t.consolidateAfter} roots, marks >= ${t.minFoldChars} chars`,
		...policyLines(rt.policy, t.rawBatches),
		`pending marks: ${rt.pendingMarks.length}${
			rt.pendingMarks.length > 0
				? ` (${rt.pendingMarks
						.slice(0, STATUS_LIST)
						.map((m) => m.id)
						.join(", ")}${rt.pendingMarks.length > STATUS_LIST ? ", ..." : ""})`
				: ""
		}`,
		`fold roots: ${rt.roots.length} visible, ${rt.folds} folds in all; commits: ${rt.commits.length}`,
		...capped(
			rt.roots,
			(r) => `  ${r.id} ${r.kind}: ${r.brief.split("\n", 1)[0].slice(0, 160)}`,
			(n) => `  ... ${n} more roots (detail "tree" lists every fold, a page at a time)`,
		),
		`rewrites: ${rw.requests} requests = ${rw.baselines} baseline + ${rw.pureAppends} pure appends + attributed (commit ${a.commit}, expand ${a.expand}, fold ${a.fold}, overflow ${a.overflow}, repair ${a.repair}) + ${rw.unattributed} unattributed`,
		`compaction: Pi's threshold ${rt.compaction.thresholdFolded} answered by folding, ${rt.compaction.thresholdCancelled} declined, ${rt.compaction.thresholdPassed} left to Pi; ${rt.compaction.manualPassed} manual passed through; ${rt.compaction.overflowSeen} overflow seen (${rt.compaction.overflowRecovered} recovered by folding, ${rt.compaction.overflowPassed} left to Pi)`,
		`receipts and notices in the last request: ${rt.noticesShown}${rt.policy.workingSet ? `; raw working set: ${rt.policy.workingSet.batches} tool batches, ~${rt.policy.workingSet.tokens} tokens` : ""}${rt.policy.held ? `; held: ${rt.policy.held}` : ""}`,
		...rt.overflowPassedOn.slice(-3).map((why) => `  overflow left to Pi: ${why}`),
		`fence: ${rt.fence.stopped} request${rt.fence.stopped === 1 ? "" : "s"} stopped before transmission${rt.fence.last ? ` (last: ${rt.fence.last.message})` : ""}`,
		evidenceLine(rt.evidence),
		...problemLines(rt, 5, (p) => (p.length > 300 ? `${p.slice(0, 299)}…` : p)),
	];
	return lines;
}

function evidenceLine(ev: RuntimeStatus["evidence"]): string {
	if (!ev) return "evidence: none (no session file)";
	if (ev.disabled) return `evidence: off (${ev.disabled})`;
	const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
	const over = ev.skippedOverCap.count > 0 ? `; ${ev.skippedOverCap.count} results skipped past the cap` : "";
	return `evidence: ${ev.files} files, ${mb(ev.usedBytes)} of ${mb(ev.capBytes)} in ${ev.dir}${over}${ev.problems.count > 0 ? `; ${ev.problems.count} problems` : ""}`;
}

/** Marks (origin, share freed, prefix rewritten) and pins, from the runtime's overview. */
function overviewLines(o: Overview, rt: RuntimeStatus | undefined): string[] {
	const budget = o.arithmetic.budget;
	const origin = new Map(rt?.pendingMarks.map((m) => [m.id, m]) ?? []);
	const lines = capped(
		o.marks,
		(m) => {
			const mk = origin.get(m.id);
			const where = mk ? ` ${mk.kind} ${mk.from}..${mk.to}, brief ${mk.provenance}` : "";
			return `  mark ${m.id}:${where}; frees ~${m.freed} tokens (${pct(m.freed / budget)}), a commit re-sends ~${m.prefixRewritten} prefix tokens`;
		},
		(n) => `  ... ${n} more marks`,
	);
	lines.push(
		`pins: ${o.pins.entryIds.length} entries, ~${o.pins.tokens} of at most ${o.pins.cap} tokens${o.pins.entryIds.length > 0 ? ` (${o.pins.entryIds.slice(0, 20).join(", ")}${o.pins.entryIds.length > 20 ? ", ..." : ""})` : ""}`,
	);
	return lines;
}

/** One page of the fold tree: each fold with depth, state and parent, and its index line. */
function treePage(lattice: ReadonlyLattice, actions: FoldActions, offset: number): NonNullable<StatusDetails["tree"]> {
	const page: FoldView[] = lattice.folds().slice(offset, offset + TREE_PAGE);
	const lines = actions.indexLines(
		lattice,
		page.map((f) => f.id),
		TREE_LINE_CHARS,
	);
	return page.map((f, i) => ({
		id: f.id,
		kind: f.kind,
		state: f.state,
		depth: f.depth,
		parent: f.parent,
		entries: f.end - f.start,
		line: lines[i],
	}));
}

export function statusAction(args: FoldToolArgs, env: ToolEnv, call?: ToolCall): FoldToolResult {
	const packageVersion = env.packageVersion();
	const piVersion = env.piVersion() ?? null;
	const head = [
		`pi-fold ${packageVersion} status`,
		`host: Pi ${piVersion ?? "version unknown (this Pi exports no VERSION)"}`,
	];
	const state = env.core();
	if (!state.ok) {
		const text = [
			...head,
			`core: FAILED TO LOAD the pi-fold WebAssembly core from ${state.source}: ${state.reason}`,
			`fix: ${state.fix}; until then pi-fold is off and Pi compacts as it does without it`,
		];
		const details: StatusDetails = {
			ok: false,
			action: "status",
			packageVersion,
			piVersion,
			core: { error: state.reason, source: state.source, fix: state.fix },
		};
		return answer(text.join("\n"), details, true);
	}
	const report = coreReport(state);
	const { selfCheck, probe } = report;
	const text: string[] = [
		...head,
		`core: pi-fold-core ${report.version} (WebAssembly) from ${state.source}`,
		`self-check: ${selfCheck.ok ? "ok" : `FAILED (${selfCheck.failed.join(", ")})`}`,
		`probe: ${JSON.stringify(probe.text)}`,
		`probe sha256 (by the core): ${probe.sha256}`,
		`probe tokens (by the core): ${probe.tokens}`,
	];
	const runtime = env.runtime?.();
	if (runtime) text.push(...runtimeLines(runtime));
	const actions = env.actions?.();
	const over = actions && call?.ctx ? actions.overview(call.ctx) : undefined;
	const overview = over?.ok ? over.overview : undefined;
	if (overview) text.push(...overviewLines(overview, runtime));
	const lattice = args.detail === "tree" ? actions?.lattice() : undefined;
	const offset = args.offset ?? 0;
	const total = lattice?.folds().length ?? 0;
	const tree = lattice && actions ? treePage(lattice, actions, offset) : undefined;
	if (args.detail === "tree") {
		if (!tree) text.push("fold tree: no session open");
		else if (tree.length === 0) text.push(`fold tree: ${total} folds; offset ${offset} is past the last`);
		else {
			text.push(
				`fold tree: folds ${offset + 1}-${offset + tree.length} of ${total}, transcript order (id kind state, entries, parent: what it holds):`,
			);
		}
		for (const f of tree ?? []) {
			text.push(
				`${"  ".repeat(f.depth + 1)}${f.id} ${f.kind} ${f.state}, ${f.entries} entries${f.parent ? `, in ${f.parent}` : ""}${f.line ? `: ${f.line}` : ""}`,
			);
		}
	}
	if (overview) text.push(arithmeticText(overview.arithmetic));
	const more = tree && offset + tree.length < total;
	if (more) text.push(continuation({ action: "status", detail: "tree", offset: offset + tree.length }));
	const details: StatusDetails = {
		ok: selfCheck.ok,
		action: "status",
		packageVersion,
		piVersion,
		core: report,
		...(runtime ? { runtime } : {}),
		...(overview ? { overview } : {}),
		...(tree ? { tree, treePage: { offset, folds: total } } : {}),
	};
	// A core that fails its own known-answer checks must not be trusted: say so as an error.
	return answer(text.join("\n"), details, !selfCheck.ok);
}
