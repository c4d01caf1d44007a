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
		[
			`Brief set on pending mark ${r.fold.id} (${r.fold.kind}); it will show verbatim when the mark commits.`,
			...(r.replaced > 0
				? [
						`Note: ${r.replaced} unpaired UTF-16 surrogate${r.replaced === 1 ? " was" : "s were"} replaced by U+FFFD (a brief is stored as UTF-8).`,
					]
				: []),
		],
		{ id: r.fold.id, provenance: r.fold.provenance, replaced: r.replaced },
		ops.actions,
		ops.ctx,
	);
}
