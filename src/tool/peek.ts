// action "peek": one fold's exact, SHA-256-verified source appended as this tool result. The
// window is not edited; the result itself is marked for the next commit (ephemeral, the default)
// or pinned (ephemeral: false) once the model has read it.
import type { ToolCall, ToolEnv } from "./env.ts";
import { done, type FoldToolResult, operations, refuse } from "./result.ts";
import type { FoldToolArgs } from "./schema.ts";

export function peekAction(args: FoldToolArgs, env: ToolEnv, call: ToolCall): FoldToolResult {
	const ops = operations("peek", env, call);
	if (!ops.ok) return ops.refusal;
	const { actions, ctx } = ops;
	const ephemeral = args.ephemeral ?? true;
	const r = actions.peek(args.id, {
		...(args.offset === undefined ? {} : { offset: args.offset }),
		...(args.bytes === undefined ? {} : { bytes: args.bytes }),
		ephemeral,
		toolCallId: call.toolCallId,
		ctx,
	});
	if (!r.ok) return refuse("peek", r.reason);
	const { fold, slice } = r;
	const before = slice.start;
	const after = slice.total - slice.end;
	const omitted = [
		before > 0 ? `bytes 0-${before} omitted before` : "",
		after > 0 ? `bytes ${slice.end}-${slice.total} omitted after (peek with offset ${slice.end} to go on)` : "",
	].filter((s) => s !== "");
	const head = `[pi-fold peek ${fold.id}] ${fold.kind}, ${fold.state}, ${r.leaves} entries, ${r.sourceBytes} source bytes verified by SHA-256 (${r.verifiedBy === "store" ? "from the fold store" : "from the session, not yet folded"}). Text view bytes ${slice.start}-${slice.end} of ${slice.total}${omitted.length > 0 ? `; ${omitted.join("; ")}` : ""}. Thinking blocks and provider metadata are left out.`;
	const tail = ephemeral
		? "This peek result is marked to fold at the next commit (ephemeral: false would keep it raw)."
		: "This peek result will be pinned raw (unpin to release it).";
	return done(
		"peek",
		[head, "", slice.text, "", `[end of peek ${fold.id}] ${tail}`],
		{
			id: fold.id,
			state: fold.state,
			start: slice.start,
			end: slice.end,
			total: slice.total,
			verifiedBy: r.verifiedBy,
			ephemeral,
		},
		actions,
		ctx,
	);
}
