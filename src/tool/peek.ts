// action "peek": one fold's exact, SHA-256-verified source appended as this tool result. The
// window is not edited; the result itself is marked for the next commit (ephemeral, the default)
// or pinned (ephemeral: false) once the model has read it. A peek from the start opens with the
// fold's contents (children or entries, with offsets into its text view); a slice that does not
// reach the end closes with the call for the next one.
import { contentsText } from "../operations/peek-contents.ts";
import { count } from "../values/text-fit.ts";
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
	const source = r.verifiedBy === "store" ? "from the fold store" : "from the session, not yet folded";
	const head = `[pi-fold peek ${fold.id}] ${fold.kind}, ${fold.state}, ${r.leaves} entries; its text view is ${count(slice.total)} bytes (~${count(r.tokens)} tokens) in all, from ${r.sourceBytes} source bytes verified by SHA-256 (${source}). Thinking blocks and provider metadata are left out.`;
	const contents = r.contents && r.contents.length > 0 ? contentsText(r.contents) : [];
	const tail = ephemeral
		? "This peek result is marked to fold at the next commit (ephemeral: false would keep it raw)."
		: "This peek result will be pinned raw (unpin to release it).";
	const range = `bytes ${slice.start}-${slice.end} of ${slice.total}`;
	const goesOn = slice.end < slice.total;
	return done(
		"peek",
		[
			head,
			...(contents.length > 0
				? ["Contents (@offset +bytes into this text view; peek with that offset to go there):", ...contents]
				: []),
			"",
			`[${range}${slice.start > 0 ? `; bytes 0-${slice.start} before` : ""}${goesOn ? `; ${slice.total - slice.end} bytes after` : ""}]`,
			slice.text,
			"",
			`[end of peek ${fold.id}, ${range}] ${tail}`,
		],
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
		goesOn
			? { action: "peek", id: fold.id, offset: slice.end, ...(args.bytes === undefined ? {} : { bytes: args.bytes }) }
			: undefined,
	);
}
