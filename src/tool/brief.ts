// action "brief": the agent's own brief on a pending mark, kept verbatim when it commits.
import type { ToolCall, ToolEnv } from "./env.ts";
import { done, type FoldToolResult, operations, refuse } from "./result.ts";
import type { FoldToolArgs } from "./schema.ts";

export function briefAction(args: FoldToolArgs, env: ToolEnv, call: ToolCall): FoldToolResult {
	const ops = operations("brief", env, call);
	if (!ops.ok) return ops.refusal;
	const r = ops.actions.brief(args.id, args.text);
	if (!r.ok) return refuse("brief", r.reason);
	return done(
		"brief",
		[`Brief set on pending mark ${r.fold.id} (${r.fold.kind}); it will show verbatim when the mark commits.`],
		{ id: r.fold.id, provenance: r.fold.provenance },
		ops.actions,
		ops.ctx,
	);
}
