// The person's commands on folds: /fold, /fold-status, /fold-search, /fold-editor and /fold-leave.
// /fold-settings registers itself (fold-settings.ts). Every handler answers through say.ts (the UI,
// or the terminal in print mode), redraws the fold bar after a change, and never throws.

import type { ExtensionAPI, ExtensionCommandContext } from "@earendil-works/pi-coding-agent";
import type { FoldHandle } from "../operations/view.ts";
import type { FoldBar } from "../ui/fold-bar.ts";
import { openFoldEditor } from "../ui/fold-editor-command.ts";
import { errorMessage } from "../vocabulary.ts";
import { FOLD_COMMAND, FOLD_TIMING, FOLD_TIMING_IDLE, foldCompletions, runFold } from "./fold.ts";
import { FOLD_LEAVE_COMMAND, runFoldLeave } from "./fold-leave.ts";
import { FOLD_SEARCH_COMMAND, runFoldSearch } from "./fold-search.ts";
import { FOLD_STATUS_COMMAND, runFoldStatus } from "./fold-status.ts";
import { say } from "./say.ts";

const FOLD_EDITOR_COMMAND = "fold-editor";

/** Run a handler body; anything it throws becomes an error message, never an exception into Pi. */
async function guarded(name: string, ctx: ExtensionCommandContext, body: () => Promise<void> | void): Promise<void> {
	try {
		await body();
	} catch (err) {
		try {
			say(ctx, `/${name} failed inside pi-fold, nothing changed: ${errorMessage(err)}`, "error");
		} catch {
			// No UI to tell: nothing more to do.
		}
	}
}

/** `bar`: the fold bar, redrawn right after a command or the editor changed something. */
export function registerFoldCommands(pi: ExtensionAPI, runtime: FoldHandle, bar?: FoldBar): void {
	pi.registerCommand(FOLD_COMMAND, {
		description:
			"Fold every staged mark at the next turn, or the named marks as one span (an expanded fold: refold it)",
		getArgumentCompletions: foldCompletions(runtime),
		handler: (args, ctx) =>
			guarded(FOLD_COMMAND, ctx, async () => {
				const answer = runFold(runtime, args, ctx);
				// Idle: plan it now and show it on the next request already (the runtime's fold bridge).
				const actions = runtime.actions();
				if (answer.level === "info" && ctx.isIdle() && runtime.get()?.foldRequested && actions) {
					const early = await actions.foldWhileIdle(ctx);
					if (early.ok) answer.text = answer.text.replace(FOLD_TIMING, FOLD_TIMING_IDLE);
				}
				say(ctx, answer.text, answer.level);
				if (answer.level === "info") bar?.refresh(ctx);
			}),
	});
	// Commands that take no arguments and answer in one message.
	for (const [name, description, run] of [
		[
			FOLD_STATUS_COMMAND,
			"pi-fold: occupancy vs budget, fold roots, pending marks, pins, rewrite counters",
			runFoldStatus,
		],
		[
			FOLD_LEAVE_COMMAND,
			"How to leave pi-fold: the command that unfolds this session for a Pi without it, and what to delete",
			runFoldLeave,
		],
	] as const) {
		pi.registerCommand(name, {
			description,
			handler: (_args, ctx) =>
				guarded(name, ctx, () => {
					const answer = run(runtime, ctx);
					say(ctx, answer.text, answer.level);
				}),
		});
	}
	pi.registerCommand(FOLD_SEARCH_COMMAND, {
		description: "Find text in every fold (case-insensitive; /regex/ for a pattern) and open a match",
		handler: (args, ctx) => guarded(FOLD_SEARCH_COMMAND, ctx, () => runFoldSearch(runtime, args, ctx)),
	});
	pi.registerCommand(FOLD_EDITOR_COMMAND, {
		description:
			"Map of the window: Enter expands / previews, m marks a span, u unmarks, p pins (optional: a fold id to start on)",
		getArgumentCompletions: (prefix) => {
			const lattice = runtime.actions()?.lattice();
			const items = (lattice?.folds() ?? [])
				.filter((f) => f.id.startsWith(prefix.trim()))
				.map((f) => ({ value: f.id, label: f.id, description: `${f.state} ${f.kind}` }));
			return items.length > 0 ? items : null;
		},
		handler: (args, ctx) =>
			guarded(FOLD_EDITOR_COMMAND, ctx, () => openFoldEditor(runtime, args, ctx, () => bar?.refresh(ctx))),
	});
}
