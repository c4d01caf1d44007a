// A turn boundary (Pi's turn_end), start to end: the turn taken from the quiet-turn tracker, the
// evidence written, the lattice brought in step, the boundary's edits before any commit (repair,
// staged edits, peeks, marks), the next request measured, and, when the commit policy says so (or
// a /fold waits), the one commit planned, made durable and returned in the same batch. What the
// boundary proposes is remembered, so the next sync can tell whether Pi appended it.
import type { ExtensionContext, SessionBoundaryDraft, TurnEndEvent } from "@earendil-works/pi-coding-agent";
import type { EarlyWindow } from "../edits/early-window.ts";
import type { Budget } from "../meter/budget.ts";
import type { Meter, Model } from "../meter/meter.ts";
import type { Occupancy } from "../meter/occupancy.ts";
import { callsOpenedBy } from "../session/context-entries.ts";
import { recordDraft } from "../session/journal.ts";
import type { Open, OpenSession, SessionView } from "../session/open-session.ts";
import type { Staged } from "../session/staged.ts";
import type { Boundary } from "./boundary.ts";
import { type CommitBatch, type CommitDeps, commitBatch, commitWhere, planBatch } from "./commit.ts";
import type { CommitTiming } from "./commit-timing.ts";
import type { Proposals } from "./proposals.ts";
import type { QuietTurns } from "./quiet-turn.ts";

interface TurnBoundaryDeps {
	meter: Meter;
	staged: Staged;
	bridge: EarlyWindow;
	boundary: Boundary;
	quiet: Pick<QuietTurns, "atBoundary">;
	timing: Pick<CommitTiming, "request">;
	session: Pick<OpenSession, "unmeasured">;
	proposals: Pick<Proposals, "propose">;
	budget(model: Model): Budget;
	sync(sm: SessionView): Open | undefined;
	commitDeps(): CommitDeps;
	/** Swap a commit in; `announce` false when a request already showed it (a /fold bridge). */
	apply(batch: CommitBatch, announce: boolean): void;
	remeasured(occupancy: Occupancy): void;
	/** The turn the commits of this boundary belong to. */
	turnStarted(turn: number): void;
	problem(where: string, reason: string): void;
}

export class TurnBoundary {
	readonly #deps: TurnBoundaryDeps;

	constructor(deps: TurnBoundaryDeps) {
		this.#deps = deps;
	}

	/** turn_end: calibrate, mark, and commit when the next request would reach maxTarget. */
	async turnEnd(e: TurnEndEvent, ctx: ExtensionContext): Promise<SessionBoundaryDraft[]> {
		const leaf = ctx.sessionManager.getLeafId();
		const drafts = await this.#drafts(e, ctx);
		this.#deps.proposals.propose(leaf, drafts);
		return drafts;
	}

	async #drafts(e: TurnEndEvent, ctx: ExtensionContext): Promise<SessionBoundaryDraft[]> {
		const { boundary, staged, bridge, meter } = this.#deps;
		this.#deps.quiet.atBoundary(e.message, ctx.model);
		this.#deps.turnStarted(e.turnIndex);
		// A failed or stopped request: no commit after it (its receipt would end the run: print mode
		// prints the run's last message, and would print nothing). The next prompt's first request
		// folds first when it must.
		const failed =
			e.message.role === "assistant" && (e.message.stopReason === "error" || e.message.stopReason === "aborted");
		boundary.ingestEvidence(e.toolResults, ctx.sessionManager);
		const open = this.#deps.sync(ctx.sessionManager);
		if (!open) return [];
		this.#deps.session.unmeasured(undefined); // measured again below, from this boundary's preview
		const foldRequested = staged.fold !== undefined;
		// A fold a request already showed (the bridge) commits here as it was planned: new marks wait
		// for the next boundary, since a mark cut now could cover roots the shown consolidation took.
		const before = boundary.edits(open, e, !(foldRequested && bridge.shown));
		const { repair, projection } = before;
		const out = before.drafts;
		// A failed request carries no usage to aim by; an overflow is recovered at session_before_compact.
		if (failed) return out;
		const budget = this.#deps.budget(ctx.model);
		if (!budget.ok) return out;
		const shown = repair.drafts.length > 0 ? projection.flatMap((pe) => pe.messages) : e.context.contextMessages;
		const occupancy = meter.occupancy([...shown, ...e.context.pendingMessages], ctx.model, budget.budget);
		this.#deps.remeasured(occupancy);
		// Past the budget, whatever the model has seen may fold, however small: cut it now (free).
		if (occupancy.tokens > budget.budget && !foldRequested)
			out.push(...boundary.markFrontier(open, e.messageEntryId, true).map(recordDraft));
		// One rewrite per boundary: staged edits (or a repair no request has shown yet) already
		// rewrite this one; a commit waits for the next.
		if (before.edited || (repair.drafts.length > 0 && !repair.shown)) return out;
		return [...out, ...(await this.#commit(e, ctx, open, occupancy, projection))];
	}

	/** The boundary's commit, when one is due (or a /fold waits): its drafts, or none. */
	async #commit(
		e: TurnEndEvent,
		ctx: ExtensionContext,
		open: Open,
		occupancy: Occupancy,
		projection: Parameters<CommitTiming["request"]>[4],
	): Promise<SessionBoundaryDraft[]> {
		const fold = this.#deps.staged.takeFold();
		const bridge = this.#deps.bridge.take();
		const request = this.#deps.timing.request(open, occupancy, ctx.model, e.turnIndex, projection, fold);
		if (!request) return [];
		const deps = this.#deps.commitDeps();
		const planned = await planBatch(deps, open, request);
		if (!planned.ok) {
			this.#deps.problem(commitWhere(request.reason, deps.turn), planned.reason);
			if (bridge?.shown) this.#deps.problem("fold", "a /fold shown through the context event could not be committed");
			return [];
		}
		const batch = commitBatch(deps, open, planned, {
			...request,
			occupancy,
			pending: e.context.pendingMessages,
			// A turn whose answer calls no tool ends the run: print mode prints the run's last message.
			quiet: callsOpenedBy(e.message).length === 0,
		});
		// A /fold already shown on the request (the bridge): that request was the attributed rewrite.
		if (bridge?.shown) {
			const same = bridge.matches(batch.drafts);
			if (!same.ok) this.#deps.problem("fold", `the committed /fold differs from the one shown: ${same.reason}`);
		}
		this.#deps.apply(batch, bridge?.shown !== true);
		return batch.drafts;
	}
}
