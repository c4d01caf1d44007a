// /fold: commit every staged mark now, or exactly the named span. Both go through
// FoldActions.foldNow, the runtime's validated path: the commit itself lands at the next turn
// boundary (a turn_end), as one attributed rewrite; when Pi is idle that is the first turn of the
// next prompt. `/fold <expanded fold>` refolds it instead (staged the same way).
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { AutocompleteItem } from "@earendil-works/pi-tui";
import type { FoldActions } from "../operations/actions.ts";
import type { FoldHandle } from "../operations/view.ts";
import type { FoldId } from "../vocabulary.ts";

export const FOLD_COMMAND = "fold";
const FOLD_USAGE =
	"usage: /fold (every staged mark) | /fold <fold id> ... (those marks as one span, or refold expanded folds)";
/** Where the commit happens, said with every accepted /fold. */
export const FOLD_TIMING = "folds at the next turn (when Pi is idle: the first turn of your next prompt)";
/** Said instead when Pi is idle and the fold is already planned: the next request shows it. */
export const FOLD_TIMING_IDLE = "is folded from your next prompt's first request (written to the store now)";

type Level = "info" | "warning" | "error";
export interface CommandAnswer {
	text: string;
	level: Level;
}

/** Fold ids as typed: separated by spaces or commas. */
export function foldArgs(args: string): string[] {
	return args
		.split(/[\s,]+/)
		.map((w) => w.trim())
		.filter(Boolean);
}

/** What the named marks free at a commit, when the overview can say. */
function freedText(actions: FoldActions, ctx: ExtensionContext, ids: readonly FoldId[]): string {
	const over = actions.overview(ctx);
	if (!over.ok) return "";
	const wanted = new Set(ids);
	const freed = over.overview.marks.filter((m) => wanted.has(m.id)).reduce((s, m) => s + m.freed, 0);
	return `; frees ~${freed} tokens of ${over.overview.arithmetic.budget}`;
}

/** Run one /fold; never throws (a refusal is an error answer and nothing changed). */
export function runFold(handle: FoldHandle, args: string, ctx: ExtensionContext): CommandAnswer {
	const actions = handle.actions();
	if (!actions)
		return { text: `/fold: pi-fold is not running (${handle.reason() ?? "no runtime yet"})`, level: "error" };
	const ids = foldArgs(args);
	const r = actions.foldNow(ids);
	if (!r.ok) return { text: `/fold refused, nothing changed: ${r.reason}\n${FOLD_USAGE}`, level: "error" };
	if (r.refolds.length > 0) {
		return {
			text: `/fold: ${r.refolds.join(", ")} ${r.refolds.length === 1 ? "refolds" : "refold"} at the next turn`,
			level: "info",
		};
	}
	const what =
		ids.length === 0
			? `${r.marks.length} staged mark${r.marks.length === 1 ? "" : "s"} (${r.marks.join(", ")})`
			: ids.length > 1
				? `${r.marks[0]} (${ids.join(" + ")} merged into one span)`
				: r.marks[0];
	return { text: `/fold: ${what} ${FOLD_TIMING}${freedText(actions, ctx, r.marks)}`, level: "info" };
}

/** Completes the last word with a pending mark or an expanded fold (what /fold accepts). */
export function foldCompletions(handle: FoldHandle): (prefix: string) => AutocompleteItem[] | null {
	return (prefix) => {
		const lattice = handle.actions()?.lattice();
		if (!lattice) return null;
		const last = prefix.split(/[\s,]+/).pop() ?? "";
		const head = prefix.slice(0, prefix.length - last.length);
		const typed = new Set(foldArgs(head));
		const items = lattice
			.folds()
			.filter((f) => (f.state === "pending" || f.state === "expanded") && f.id.startsWith(last) && !typed.has(f.id))
			.map((f) => ({
				value: `${head}${f.id}`,
				label: f.id,
				description: `${f.state === "pending" ? "mark" : "expanded"} ${f.kind}, ${f.end - f.start} entries`,
			}));
		return items.length > 0 ? items : null;
	};
}
