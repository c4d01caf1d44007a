// What goes out: every request Pi is about to send, watched. The `context` event shows an armed
// bridge (a window repair, or a /fold planned while idle) on the request, records it against the
// previous one (an unannounced rewrite is a bug), checks its tool pairing and its alignment with
// the session; `context_with_system` estimates it as sent, for calibration, and fences it when it
// would pass the serving budget or a provider would refuse it.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { EarlyWindow } from "../edits/early-window.ts";
import { PairingWatch } from "../edits/pairing.ts";
import { ProjectionAligner } from "../meter/alignment.ts";
import { budgetText } from "../meter/budget.ts";
import { type FenceStatus, type FenceVerdict, fenceMessage, fenceVerdict } from "../meter/fence.ts";
import type { Meter } from "../meter/meter.ts";
import type { RewriteRecorder } from "../meter/recorder.ts";
import type { SessionView } from "../session/open-session.ts";
import { isPiFoldNoticeMessage, type ProblemState } from "../vocabulary.ts";
import { WINDOW_REPAIR } from "./boundary.ts";

interface RequestDeps {
	recorder: RewriteRecorder;
	meter: Meter;
	/** The window repair and the /fold bridge; a repair shows first. */
	repair: EarlyWindow;
	bridge: EarlyWindow;
	problem(where: string, reason: string, state?: ProblemState): void;
	/** Rebuild from the session (the window drifted from the folds); arms the repair. */
	reopen(sm: SessionView): void;
	/** Pending marks now (said when a request is stopped). */
	pendingMarks(): number;
}

export class RequestWatch {
	readonly #deps: RequestDeps;
	readonly #aligner = new ProjectionAligner();
	readonly #pairing = new PairingWatch();
	/** Tool results without their call in the last request recorded (the fence stops it). */
	#orphans: readonly string[] = [];
	#alignmentFailures = 0;
	#fence: FenceStatus = { stopped: 0 };
	/** The last request as it goes out (system messages included). */
	#last: readonly unknown[] | undefined;
	/** Whether the last request recorded was the one before plus new messages. */
	#appended = false;

	constructor(deps: RequestDeps) {
		this.#deps = deps;
	}

	get alignmentFailures(): number {
		return this.#alignmentFailures;
	}

	get fence(): FenceStatus {
		return { ...this.#fence };
	}

	get lastRequest(): readonly unknown[] | undefined {
		return this.#last;
	}

	/** pi-fold's receipts and notices the last request carried (each leaves with the next commit). */
	get noticesShown(): number {
		return this.#last?.filter(isPiFoldNoticeMessage).length ?? 0;
	}

	/** The `context` event; returns the messages to send instead, when a bridge shows on this request. */
	record(messages: readonly unknown[], sm: SessionView): unknown[] | undefined {
		const { recorder, repair, problem } = this.#deps;
		const bridge = repair.armed ? repair : this.#deps.bridge;
		const what = bridge === repair ? "repair" : "fold";
		const shown = bridge.show(messages, sm);
		if (shown && !shown.ok) problem(what, `not shown early: ${shown.reason}`);
		const bridged = shown?.ok ? shown.messages : undefined;
		if (shown?.ok && shown.first) recorder.announce(what);
		let r = recorder.record(bridged ?? messages);
		if (!r.ok) problem("context", r.reason);
		else if (r.kind === "unattributed") problem("context", `unattributed rewrite at message ${r.firstChanged}`);
		this.#appended = r.ok && r.kind === "append";
		this.#orphans = this.#pairing.check(bridged ?? messages, this.#appended);
		if (this.#orphans.length > 0 && !repair.armed) {
			// The window and the folds drifted apart (a boundary batch Pi appended only in part, say):
			// rebuild from the session, and show the repaired window on this very request.
			problem(
				"context",
				`the request holds tool results whose call is hidden (${this.#orphans.join(", ")}): rebuilt from the session`,
				{ until: WINDOW_REPAIR },
			);
			this.#deps.reopen(sm);
			const repaired = repair.show(messages, sm);
			if (repaired?.ok) {
				r = recorder.record(repaired.messages); // a new baseline: the rebuild rebased the recorder
				this.#orphans = this.#pairing.check(repaired.messages, false);
				this.#align(messages, sm, r.ok && r.kind === "append");
				return repaired.messages;
			}
		}
		this.#align(messages, sm, r.ok && r.kind === "append");
		return bridged;
	}

	/** Check the request aligns with the session's projection (a pure append only needs its new tail aligned). */
	#align(messages: readonly unknown[], sm: SessionView, pureAppend: boolean): void {
		const aligned = this.#aligner.align(messages as Parameters<ProjectionAligner["align"]>[0], sm, pureAppend);
		if (aligned.ok) return;
		this.#alignmentFailures++;
		this.#deps.problem("context", `alignment: ${aligned.reason}`);
	}

	/** The `context_with_system` event: the request as sent; a verdict when the fence stops it. */
	observe(messages: readonly unknown[], ctx: ExtensionContext): FenceVerdict | undefined {
		const { meter, recorder } = this.#deps;
		this.#last = messages;
		// The recorder walked this request's messages in the context event just before: not again.
		const estimate = meter.observeRequest(messages, ctx.model, (m) => recorder.sameAs(m));
		const budget = meter.budget(ctx.model);
		const tokens = meter.calibrated(estimate, ctx.model);
		meter.pace.sent(tokens, this.#appended);
		if (this.#orphans.length > 0) {
			// Whatever its size, a provider refuses it: stopped until the repair at the next boundary.
			const sendLimit = budget.ok ? budget.sendLimit : 0;
			return this.#stopped({ tokens, sendLimit, pendingMarks: 0, orphans: [...this.#orphans] });
		}
		if (!budget.ok) return undefined;
		const over = fenceVerdict(tokens, budget.sendLimit, 0);
		if (!over) return undefined;
		// The pending marks are counted only for a request that is stopped (pending() builds views).
		const pendingMarks = this.#deps.pendingMarks();
		const pi = budget.compaction;
		const compaction = !pi
			? "compaction is off in Pi's settings"
			: pi.threshold >= budget.sendLimit
				? `it acts only past ${pi.threshold.toLocaleString("en-US")} tokens (compaction.reserveTokens ${pi.reserveTokens.toLocaleString("en-US")})`
				: undefined;
		return this.#stopped({
			...over,
			pendingMarks,
			why: budgetText(budget),
			limit: budget.limit,
			...(budget.window === undefined ? {} : { window: budget.window }),
			...(compaction ? { compaction } : {}),
		});
	}

	#stopped(verdict: FenceVerdict): FenceVerdict {
		this.#fence.stopped++;
		this.#fence.last = { ...verdict, message: fenceMessage(verdict) };
		return verdict;
	}
}
