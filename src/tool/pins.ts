// actions "pin" and "unpin": entries held raw through every fold (fold ids name their entries).
import type { ToolCall, ToolEnv } from "./env.ts";
import { done, type FoldToolResult, operations, refuse } from "./result.ts";
import type { FoldToolArgs } from "./schema.ts";

export function pinAction(args: FoldToolArgs, env: ToolEnv, call: ToolCall): FoldToolResult {
	const ops = operations("pin", env, call);
	if (!ops.ok) return ops.refusal;
	const r = ops.actions.pin(args.ids ?? [], ops.ctx);
	if (!r.ok) return refuse("pin", r.reason);
	const withdrawn =
		r.withdrawn.length > 0 ? ` Pending mark ${r.withdrawn.join(", ")} withdrawn to keep its span raw.` : "";
	return done(
		"pin",
		[
			`Pinned ${r.entryIds.length} entries: they stay raw through every commit.${withdrawn} Pinned now ~${r.pinnedTokens} of at most ${r.cap} tokens.`,
		],
		{ entryIds: r.entryIds, pinnedTokens: r.pinnedTokens, cap: r.cap, withdrawn: r.withdrawn },
		ops.actions,
		ops.ctx,
	);
}

export function unpinAction(args: FoldToolArgs, env: ToolEnv, call: ToolCall): FoldToolResult {
	const ops = operations("unpin", env, call);
	if (!ops.ok) return ops.refusal;
	const r = ops.actions.unpin(args.ids ?? []);
	if (!r.ok) return refuse("unpin", r.reason);
	return done(
		"unpin",
		[`Unpinned ${r.entryIds.length} entries: they may fold again as work moves on.`],
		{ entryIds: r.entryIds },
		ops.actions,
		ops.ctx,
	);
}
