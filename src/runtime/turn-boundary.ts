// A turn boundary (Pi's turn_end), start to end: the turn taken from the quiet-turn tracker, the
// evidence written, the open session read up to date (sync), then everything planned on a working
// copy of it: the boundary's edits before any commit (repair, staged edits, peeks, marks), the next
// request measured, and, when the commit policy says so (or a /fold waits), the one commit planned,
// made durable and returned in the same batch. Nothing here changes the open session: the batch
// is proposed with the state it makes, and the next sync adopts that state once Pi has appended
// the batch (or drops it, and what it took waits for the next boundary).
import type { ExtensionContext, SessionBoundaryDraft, TurnEndEvent } from "@earendil-works/pi-coding-agent";
import type { EarlyWindow } from "../edits/early-window.ts";
import type { Budget } from "../meter/budget.ts";
import type { Meter, Model } from "../meter/meter.ts";
import type { Occupancy } from "../meter/occupancy.ts";
import { callsOpenedBy } from "../session/context-entries.ts";
import { recordDraft } from "../session/journal.ts";
import type { Open, OpenCopy, OpenSession, SessionView } from "../session/open-session.ts";
import type { Proposals, ProposedState } from "../session/proposals.ts";
import type { Staged } from "../session/staged.ts";
import type { Boundary } from "./boundary.ts";
import { type CommitDeps, commitBatch, commitState, commitWhere, type ProposalEffects, planBatch } from "./commit.ts";
import type { CommitTiming } from "./commit-timing.ts";
import type { QuietTurns } from "./quiet-turn.ts";

interface TurnBoundaryDeps {
	meter: Meter;
	staged: Staged;
	bridge: EarlyWindow;
	boundary: Boundary;
	quiet: Pick<QuietTurns, "atBoundary">;
	timing: Pick<CommitTiming, "request">;
	session: Pick<OpenSession, "unmeasured" | "workingCopy" | "version" | "syncedLeaf">;
	proposals: Pick<Proposals<ProposalEffects>, "propose">;
	budget(model: Model): Budget;
	sync(sm: SessionView): Open | undefined;
	commitDeps(): CommitDeps;
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

	/** turn_end: calibrate, mark, and commit when the next request would reach maxTarget; the drafts, proposed. */
	async turnEnd(e: TurnEndEvent, ctx: ExtensionContext): Promise<SessionBoundaryDraft[]> {
		const planned = await this.#plan(e, ctx);
		if (!planned) return [];
		const { drafts, state, effects } = planned;
		const { proposals, session, boundary } = this.#deps;
		const proposed = proposals.propose(session.syncedLeaf, session.version, drafts, state, effects);
		// Nothing that changes the folds: the open lattice goes on as it is, and the frontier's cursor with it.
		if (!proposed) boundary.workOn(state, planned.open);
		return drafts;
	}

	/** The boundary's batch, the state it leaves once appended, and what to do then. */
	async #plan(
		e: TurnEndEvent,
		ctx: ExtensionContext,
	): Promise<
		{ drafts: SessionBoundaryDraft[]; state: ProposedState; effects: ProposalEffects; open: Open } | undefined
	> {
		const { boundary, staged, bridge, meter, session } = this.#deps;
		this.#deps.quiet.atBoundary(e.message, ctx.model);
		this.#deps.turnStarted(e.turnIndex);
		// A failed or stopped request: no commit after it (its receipt would end the run: print mode
		// prints the run's last message, and would print nothing). The next prompt's first request
		// folds first when it must.
		const failed =
			e.message.role === "assistant" && (e.message.stopReason === "error" || e.message.stopReason === "aborted");
		boundary.ingestEvidence(e.toolResults, ctx.sessionManager);
		const open = this.#deps.sync(ctx.sessionManager);
		const copy = session.workingCopy();
		if (!open || !copy) return undefined;
		const work = boundary.workOn(open, copy);
		session.unmeasured(undefined); // measured again below, from this boundary's preview
		const foldRequested = staged.fold !== undefined;
		// A fold a request already showed (the bridge) commits here as it was planned: new marks wait
		// for the next boundary, since a mark cut now could cover roots the shown consolidation took.
		const before = boundary.edits(work, e, !(foldRequested && bridge.shown));
		const { repair, projection } = before;
		const out = before.drafts;
		const changesWindow = before.edited;
		const plain = () => ({
			open,
			drafts: out,
			state: { lattice: work.lattice, changesWindow, markBriefs: work.markBriefs },
			effects: { taken: before.taken },
		});
		// A failed request carries no usage to aim by; an overflow is recovered at session_before_compact.
		if (failed) return plain();
		const budget = this.#deps.budget(ctx.model);
		if (!budget.ok) return plain();
		const shown = repair.drafts.length > 0 ? projection.flatMap((pe) => pe.messages) : e.context.contextMessages;
		const occupancy = meter.occupancy([...shown, ...e.context.pendingMessages], ctx.model, budget.budget);
		this.#deps.remeasured(occupancy);
		// Past the budget, whatever the model has seen may fold, however small: cut it now (free).
		if (occupancy.tokens > budget.budget && !foldRequested)
			out.push(...boundary.markFrontier(work, e.messageEntryId, true).map(recordDraft));
		// One rewrite per boundary: staged edits (or a repair no request has shown yet) already
		// rewrite this one; a commit waits for the next.
		if (before.edited || (repair.drafts.length > 0 && !repair.shown)) return plain();
		const commit = await this.#commit(e, ctx, work, occupancy, projection);
		if (!commit) return plain();
		return {
			open,
			drafts: [...out, ...commit.drafts],
			state: commit.state,
			effects: { commit: commit.effect, taken: { ...before.taken, ...(commit.fold ? { fold: commit.fold } : {}) } },
		};
	}

	/** The boundary's commit over `work`, when one is due (or a /fold waits): its drafts and the state they make. */
	async #commit(
		e: TurnEndEvent,
		ctx: ExtensionContext,
		work: OpenCopy,
		occupancy: Occupancy,
		projection: Parameters<CommitTiming["request"]>[4],
	) {
		const fold = this.#deps.staged.takeFold();
		const bridge = this.#deps.bridge.take();
		const request = this.#deps.timing.request(work, occupancy, ctx.model, e.turnIndex, projection, fold);
		if (!request) return undefined;
		const deps = this.#deps.commitDeps();
		const planned = await planBatch(deps, work, request);
		if (!planned.ok) {
			this.#deps.problem(commitWhere(request.reason, deps.turn), planned.reason);
			if (bridge?.shown) this.#deps.problem("fold", "a /fold shown through the context event could not be committed");
			return undefined;
		}
		const batch = commitBatch(deps, work, planned, {
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
		return {
			drafts: batch.drafts,
			state: commitState(batch),
			effect: { log: batch.log, announce: bridge?.shown !== true },
			fold,
		};
	}
}
