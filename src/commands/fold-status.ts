// /fold-status (SPEC 7): where the window stands and what is in it, said through notify (every mode
// has it): occupancy against the budget, fold roots with their briefs' first lines, pending marks
// with what they free, pins, what is staged for the next turn, and the rewrite counters.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import { arithmeticText } from "../runtime/arithmetic.ts";
import type { RuntimeHandle } from "../runtime/hooks.ts";
import { overviewLines, runtimeLines } from "../tool/status.ts";
import type { CommandAnswer } from "./fold.ts";

export const FOLD_STATUS_COMMAND = "fold-status";

export function runFoldStatus(handle: RuntimeHandle, ctx: ExtensionContext): CommandAnswer {
	const rt = handle.get();
	if (!rt)
		return { text: `/fold-status: pi-fold is not running (${handle.reason() ?? "no runtime yet"})`, level: "error" };
	const status = rt.status();
	const lines = ["pi-fold status", ...runtimeLines(status)];
	const over = handle.actions()?.overview(ctx);
	if (over?.ok) lines.push(...overviewLines(over.overview, status));
	else if (over) lines.push(`marks and pins: unavailable (${over.reason})`);
	const staged = rt.staged.map((s) => `${s.op} ${s.id}`);
	lines.push(
		`staged for the next turn: ${staged.length > 0 ? staged.join(", ") : "nothing"}${rt.foldRequested ? "; a /fold commit" : ""}`,
	);
	if (over?.ok) lines.push(arithmeticText(over.overview.arithmetic));
	const level = status.problems.length > 0 || status.rewrites.unattributed > 0 ? "warning" : "info";
	return { text: lines.join("\n"), level };
}
