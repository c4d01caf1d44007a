// actions "reboundary" and "unmark": re-cutting and withdrawing pending marks (never the window).
import type { ToolCall, ToolEnv } from "./env.ts";
import { done, type FoldToolResult, operations, refuse } from "./result.ts";
import type { FoldToolArgs } from "./schema.ts";

export function reboundaryAction(args: FoldToolArgs, env: ToolEnv, call: ToolCall): FoldToolResult {
	const ops = operations("reboundary", env, call);
	if (!ops.ok) return ops.refusal;
	const r = ops.actions.reboundary({
		...(args.ids ? { ids: args.ids } : {}),
		...(args.from ? { from: args.from } : {}),
		...(args.to ? { to: args.to } : {}),
	});
	if (!r.ok) return refuse("reboundary", r.reason);
	const line = r.fold
		? `The span is now exactly one pending mark, ${r.fold.id} (${r.fold.end - r.fold.start} entries).`
		: `Mark ${r.raw?.id} withdrawn: its span is raw again.`;
	return done("reboundary", [line], { id: r.fold?.id ?? null, raw: r.raw?.id ?? null }, ops.actions, ops.ctx);
}

export function unmarkAction(args: FoldToolArgs, env: ToolEnv, call: ToolCall): FoldToolResult {
	const ops = operations("unmark", env, call);
	if (!ops.ok) return ops.refusal;
	const r = ops.actions.unmark(args.id);
	if (!r.ok) return refuse("unmark", r.reason);
	return done(
		"unmark",
		[`Mark ${r.fold.id} withdrawn: its span stays raw until the frontier marks it again as stale work.`],
		{ id: r.fold.id },
		ops.actions,
		ops.ctx,
	);
}
