// actions "expand" and "refold": a committed fold shows its direct children (outside-in, one level
// at a time), or an expanded one collapses again. Staged now, applied at this turn's end, so the
// next request shows it; refused when an expand would push the next request past the budget.
import type { ToolCall, ToolEnv } from "./env.ts";
import { done, type FoldToolResult, operations, refuse } from "./result.ts";
import type { FoldToolArgs } from "./schema.ts";

export function windowEditAction(op: "expand" | "refold") {
	return (args: FoldToolArgs, env: ToolEnv, call: ToolCall): FoldToolResult => {
		const ops = operations(op, env, call);
		if (!ops.ok) return ops.refusal;
		const r = ops.actions.stageWindowEdit(op, args.id, ops.ctx);
		if (!r.ok) return refuse(op, r.reason);
		const children = r.fold.children.map((c) => (c.type === "fold" ? c.id : c.entryId));
		const line =
			op === "expand"
				? `Expanding ${r.fold.id}: from the next request its ${children.length} direct children show in its place (nested folds stay folded: expand them by id). ~${r.delta} tokens added; next request ~${r.next} of ${r.budget}.`
				: `Refolding ${r.fold.id}: from the next request it shows as its brief again. ~${-r.delta} tokens freed; next request ~${r.next} of ${r.budget}.`;
		return done(op, [line], { id: r.fold.id, delta: r.delta, next: r.next, budget: r.budget }, ops.actions, ops.ctx);
	};
}
