// /fold-status: where the window stands and what is in it, for a person, in every mode
// (say.ts): the one occupancy figure (window-figure.ts) and what its terms mean, the folds the window
// shows, the pending marks with what they would free, the pins, what is staged, what pi-fold did so
// far and anything that went wrong. Each term gets its word of explanation where it first appears;
// the agent's `pi_fold_context status` keeps every internal counter.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { CompositionCache, windowComposition } from "../operations/composition.ts";
import { policyLines } from "../operations/policy-lines.ts";
import { problemLines, type RuntimeStatus } from "../operations/status.ts";
import type { FoldHandle } from "../operations/view.ts";
import { barFigures } from "../ui/fold-bar.ts";
import { formatTokens, percentOf, stagedNote, windowFigure, windowText } from "../ui/window-figure.ts";
import type { CommandAnswer } from "./fold.ts";

export const FOLD_STATUS_COMMAND = "fold-status";
/** Folds listed by name; the rest are counted (/fold-editor shows them all). */
const LISTED = 8;

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/** Which limit sets the budget and why: "set by price tier: 2x above 272,000; window 400,000". */
function budgetWhy(status: RuntimeStatus): string {
	const b = status.budget;
	if (!b?.ok) return "the model's context window less room for its answer";
	return `set by ${b.why}`;
}

/** When pi-fold commits: the band's two levels, or the cost model's reckoning. */
function whenItCommits(status: RuntimeStatus, a: { commitAt: number; landAt: number; budget: number }): string[] {
	if (status.policy.policy === "cost") {
		return policyLines(status.policy, status.thresholds.rawBatches).map((l) => `  ${l}`);
	}
	return [
		`  at ${percentOf(a.commitAt, a.budget)} pi-fold commits: it folds pending marks until the window is back near ${percentOf(a.landAt, a.budget)}`,
	];
}

/** What pi-fold did so far: its commits (and why the last one left the window full, when it did), and Pi's compaction. */
function historyLines(status: RuntimeStatus): string[] {
	const c = status.compaction;
	const out = [`so far: ${plural(status.commits.length, "commit")}`];
	const last = status.commits.at(-1);
	// A commit that left the window above where commits fire: say what kept it full, and when that changes.
	if (last && last.after >= status.thresholds.maxTarget * last.budget) {
		const ws = status.policy.workingSet;
		const kept = ws
			? `the newest ${plural(ws.batches, "tool batch", "tool batches")} (~${formatTokens(ws.tokens)}), kept in full while the model works on them`
			: "what the model is working on now";
		out.push(
			`  the last commit left the window at ${percentOf(last.after, last.budget)} of the budget: most of the rest is ${kept}; ` +
				"they fold at a later commit, once newer work has come (pins and a very large tool output also stay in full)",
		);
	}
	if (status.policy.held) out.push(`  a commit waits: ${status.policy.held} (it comes with the next request)`);
	const asked = c.thresholdCancelled + c.thresholdFolded + c.thresholdPassed;
	if (asked > 0) {
		const parts = [
			...(c.thresholdFolded > 0 ? [`folded instead ${plural(c.thresholdFolded, "time")}`] : []),
			...(c.thresholdCancelled > 0
				? [`declined ${plural(c.thresholdCancelled, "time")} (the next request still fit)`]
				: []),
			...(c.thresholdPassed > 0
				? [
						`let Pi compact ${plural(c.thresholdPassed, "time")} (nothing was left to fold and the next request would not fit the window; the originals stay on disk)`,
					]
				: []),
		];
		out.push(`  Pi asked to compact ${plural(asked, "time")}: pi-fold ${parts.join(", ")}`);
	}
	if (status.noticesShown > 0) {
		out.push(`  receipts and notices in the window: ${status.noticesShown} (each leaves with the next commit)`);
	}
	return out;
}

export function runFoldStatus(handle: FoldHandle, ctx: ExtensionContext): CommandAnswer {
	const rt = handle.get();
	const actions = handle.actions();
	if (!rt || !actions)
		return { text: `/fold-status: pi-fold is not running (${handle.reason() ?? "no runtime yet"})`, level: "error" };
	const status = rt.status();
	const figure = windowFigure(actions, ctx, rt.staged, rt.foldRequested);
	const over = actions.overview(ctx);
	const lattice = actions.lattice();
	if ("error" in figure || !over.ok || !lattice) {
		const why = "error" in figure ? figure.error : over.ok ? "no session is open yet" : over.reason;
		return { text: `pi-fold: the window cannot be measured yet (${why})`, level: "info" };
	}
	const a = over.overview.arithmetic;
	const lines = [
		`pi-fold: ${windowText(figure)}`,
		`  the window is what the next request sends the model; ${formatTokens(a.budget)} is pi-fold's budget for it (${budgetWhy(status)})`,
		...whenItCommits(status, a),
	];

	const shown = lattice.window().flatMap((item) => {
		if (item.type !== "fold") return [];
		const f = lattice.get(item.id);
		return f ? [f] : [];
	});
	const hidden = rt.view?.context.hidden;
	const raw = lattice.window().filter((item) => item.type === "raw" && !hidden?.has(item.entryId)).length;
	const deep = shown.filter((f) => f.children.some((c) => c.type === "fold")).length;
	const expanded = lattice.folds().filter((f) => f.state === "expanded").length;
	lines.push(
		`in the window: ${plural(shown.length, "fold")} shown as a short brief each${deep > 0 ? ` (${deep} holding other folds)` : ""}, ` +
			`${expanded} expanded, ${plural(raw, "message")} in full; every fold's original is on disk, read back with /fold-editor or by the agent`,
	);
	for (const f of shown.slice(0, LISTED)) {
		lines.push(
			`  ${f.id} ${f.kind}, ${plural(f.end - f.start, "message")}: ${f.brief.split("\n", 1)[0].slice(0, 120)}`,
		);
	}
	if (shown.length > LISTED) lines.push(`  and ${shown.length - LISTED} more (/fold-editor lists them all)`);

	const marks = over.overview.marks;
	const origin = new Map(status.pendingMarks.map((m) => [m.id, m]));
	// What the marked spans take in the window now: the fold bar's "pending", the same figure.
	const composition = windowComposition(rt, new CompositionCache(), ctx.model, lattice);
	const inWindow = composition ? barFigures(composition, true, figure).parts.pending : undefined;
	lines.push(
		marks.length === 0
			? "pending marks: none (a mark is a finished span chosen to fold at the next commit; it costs nothing until then)"
			: `pending marks: ${marks.length}${inWindow === undefined ? "" : `, ~${formatTokens(inWindow)} of the window (the fold bar's "pending")`}; ` +
					`folding them at the next commit would free ~${formatTokens(a.marksFree)}, their briefs staying (until then they change nothing)`,
	);
	for (const m of marks.slice(0, LISTED)) {
		const o = origin.get(m.id);
		lines.push(`  ${m.id}${o ? ` ${o.kind}` : ""}: frees ~${formatTokens(m.freed)}`);
	}
	if (marks.length > LISTED) lines.push(`  and ${marks.length - LISTED} more`);
	const pins = over.overview.pins;
	lines.push(
		`pins: ${plural(pins.entryIds.length, "message")} held in full through every commit (~${formatTokens(pins.tokens)} of at most ${formatTokens(pins.cap)})`,
	);
	const note = stagedNote(figure);
	if (note) lines.push(note);

	lines.push(...historyLines(status));
	const unattributed = status.rewrites.unattributed;
	lines.push(
		unattributed === 0
			? "prompt cache: between commits every request only appended to the one before, so the provider's cache held"
			: `prompt cache: ${plural(unattributed, "request")} changed the window outside a commit (a pi-fold bug: please report it)`,
	);
	if (status.fence.stopped > 0) {
		lines.push(
			`stopped: ${plural(status.fence.stopped, "request")} that could not be sent${status.fence.last ? `; the last: ${status.fence.last.message}` : ""}`,
		);
	}
	lines.push(...problemLines(status));
	const level = status.problemsOpen > 0 || status.damaged.length > 0 || unattributed > 0 ? "warning" : "info";
	return { text: lines.join("\n"), level };
}
