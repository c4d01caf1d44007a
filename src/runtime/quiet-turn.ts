// A turn that needs no boundary of pi-fold's. Pi rebuilds a turn boundary's context from its whole
// branch before and after every turn_end handler, and again once they are done, whether or not a
// handler appends anything: on a long session that is most of what a turn costs. pi-fold listens to
// turn_end only while it has something to append there (a commit coming near, staged edits, a
// repair, a /fold); every other turn ends quietly: its calibration, evidence and new frontier marks
// are taken when the next turn starts (or the run ends), the marks appended as the same record
// entries a boundary would have appended, at the same place in the session, and applied when the
// sync right after reads them back (proposed first, like a boundary's batch).
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import type { EarlyWindow } from "../edits/early-window.ts";
import type { CalibrationOutcome } from "../meter/calibration.ts";
import { estimateMessages } from "../meter/estimate.ts";
import type { Meter, Model } from "../meter/meter.ts";
import { commitNeed, type Occupancy, occupancyOf } from "../meter/occupancy.ts";
import type { Open, OpenSession, SessionView } from "../session/open-session.ts";
import type { Proposals } from "../session/proposals.ts";
import type { Staged } from "../session/staged.ts";
import { RECORD_TYPE, type RuntimeSettings } from "../vocabulary.ts";
import type { Boundary } from "./boundary.ts";
import type { ProposalEffects } from "./commit.ts";
import type { CommitTiming } from "./commit-timing.ts";
import type { Compaction } from "./compaction.ts";
import type { RequestWatch } from "./requests.ts";

/** What a turn left: its assistant message and the tool results that answered it. */
interface TurnMessages {
	message: { role: "assistant"; stopReason?: string; usage?: unknown };
	toolResults: unknown[];
	/**
	 * The boundary's request so far as the meter counts a request that extends the calibrated one:
	 * the provider's count of the last request (its usage) plus the estimate of the turn's messages
	 * at the calibrated ratio. Undefined when the usage did not calibrate.
	 */
	extended: { real: number; ratio: number; appended: number } | undefined;
}

interface QuietTurnDeps {
	core: PiFoldCore;
	settings: RuntimeSettings;
	meter: Meter;
	staged: Staged;
	bridge: EarlyWindow;
	repair: EarlyWindow;
	boundary: Boundary;
	problem(where: string, reason: string): void;
	sync(sm: SessionView): Open | undefined;
	/** The last request as it went out. */
	requests: Pick<RequestWatch, "lastRequest">;
	/** A turn that did not fail answered what Pi's compaction asked. */
	compaction: Pick<Compaction, "answered">;
	/** Whether the cost model expects the next boundary to commit, asked again at each quiet end. */
	timing: Pick<CommitTiming, "prospect" | "due" | "coldNow">;
	/** The measurement the quiet end takes replaces what earlier edits left unmeasured. */
	session: Pick<OpenSession, "unmeasured" | "workingCopy" | "version" | "syncedLeaf">;
	proposals: Pick<Proposals<ProposalEffects>, "propose">;
	/** Append a custom entry now (Pi's appendEntry): a frontier mark's record. None: no turn ends quietly. */
	append: ((customType: string, data: unknown) => void) | undefined;
	remeasured(occupancy: Occupancy): void;
}

/**
 * How near maxTarget the estimate of the boundary's occupancy must come for pi-fold to listen at
 * turn_end. The estimate is the boundary's own arithmetic (the usage of the request plus the turn's
 * messages at the calibrated ratio), so the boundary decides the same way; the margin covers only
 * what the estimate cannot see (another extension's messages, queued ones). Every turn it listens
 * at without committing costs a rebuild of the branch.
 */
const LISTEN_SHARE_OF_MAX_TARGET = 0.97;

export class QuietTurns {
	readonly #deps: QuietTurnDeps;
	/** The turn in progress (from its assistant message's end), until a boundary or a quiet end takes it. */
	#turn: TurnMessages | undefined;
	#calibrated: unknown;

	constructor(deps: QuietTurnDeps) {
		this.#deps = deps;
	}

	/**
	 * Pi's message_end: an assistant message opens a turn, and its usage calibrates the meter at
	 * once (what the turn adds is then estimated as the boundary will measure it); tool results join it.
	 */
	messageEnded(message: unknown, model: Model): void {
		const role = (message as { role?: unknown } | null)?.role;
		const turn = this.#turn;
		if (role === "toolResult" && turn) {
			turn.toolResults.push(message);
			if (turn.extended) turn.extended.appended += this.#estimate(message);
		}
		if (role !== "assistant") return;
		const m = message as TurnMessages["message"];
		const c = this.#calibrate(m, model);
		const extended = c.ok ? { real: c.real, ratio: c.ratio, appended: this.#estimate(m) } : undefined;
		this.#turn = { message: m, toolResults: [], extended };
	}

	/** One message's estimate (uncalibrated): each of a turn's messages is estimated once, here. */
	#estimate(message: unknown): number {
		return estimateMessages(this.#deps.core, [message])[0] ?? 0;
	}

	/**
	 * The turn_end boundary takes the turn (it does all of it) and calibrates by its assistant message
	 * unless message_end did (a usage calibrates once: inside Pi message_end comes first; a replay
	 * calls only the boundary).
	 */
	atBoundary(message: { role: string; stopReason?: string; usage?: unknown }, model: Model): void {
		this.#turn = undefined;
		if (message.role !== "assistant") return;
		const m = message as TurnMessages["message"];
		if (m !== this.#calibrated) this.#calibrate(m, model);
		if (m.stopReason !== "error") this.#deps.compaction.answered();
	}

	#calibrate(m: TurnMessages["message"], model: Model): CalibrationOutcome {
		this.#calibrated = m;
		const c = this.#deps.meter.calibrate(m.usage, model);
		if (!c.ok && m.stopReason !== "error" && m.stopReason !== "aborted") this.#deps.problem("calibrate", c.reason);
		return c;
	}

	/**
	 * Whether the next turn_end must run pi-fold's boundary: something staged for it, or (asked
	 * during a turn) the request it would measure coming near the commit threshold, or the prompt
	 * cache expired since the last request (a tool ran longer than its lifetime: asked again as each
	 * tool result ends, so the boundary commits while the next request is written whole anyway).
	 * Between turns only the first counts: the next turn's messages decide on the rest before its turn_end.
	 */
	wanted(model: Model): boolean {
		const { staged, bridge, repair, meter, settings } = this.#deps;
		if (!this.#deps.append) return true;
		if (staged.edits.length > 0 || staged.peeks.length > 0 || staged.fold !== undefined) return true;
		if (bridge.armed || bridge.shown || repair.armed || this.#deps.timing.due) return true;
		const turn = this.#turn;
		if (!turn) return false;
		if (this.#deps.timing.coldNow(model)) return true;
		const budget = meter.budget(model);
		if (!budget.ok) return false;
		const tokens = this.#tokens(turn, model, budget.budget);
		if (tokens === undefined) return true;
		const near = occupancyOf(tokens / LISTEN_SHARE_OF_MAX_TARGET, budget.budget);
		return commitNeed(near, settings.thresholds) > 0;
	}

	/** The turn ended without pi-fold's boundary: what the boundary would have done but a commit. */
	end(ctx: ExtensionContext): boolean {
		const turn = this.#turn;
		const append = this.#deps.append;
		if (!turn || !append) return false;
		this.#turn = undefined;
		const { meter, boundary } = this.#deps;
		if (turn.message.stopReason !== "error") this.#deps.compaction.answered();
		boundary.ingestEvidence(turn.toolResults as Parameters<Boundary["ingestEvidence"]>[0], ctx.sessionManager);
		const sm = ctx.sessionManager;
		let open = this.#deps.sync(sm);
		const copy = this.#deps.session.workingCopy();
		if (!open || !copy) return true;
		const last = lastAssistantEntry(open);
		const work = boundary.workOn(open, copy);
		const ops = last ? boundary.markFrontier(work, last) : [];
		const drafts = ops.map((data) => ({ type: "custom", customType: RECORD_TYPE, data }));
		const { version, syncedLeaf } = this.#deps.session;
		if (this.#deps.proposals.propose(syncedLeaf, version, drafts, { lattice: work.lattice }, {})) {
			for (const op of ops) append(RECORD_TYPE, op);
			open = this.#deps.sync(sm) ?? open;
		} else boundary.workOn(work, open);
		const budget = meter.budget(ctx.model);
		const tokens = budget.ok ? this.#tokens(turn, ctx.model, budget.budget) : undefined;
		if (budget.ok && tokens !== undefined) {
			this.#deps.session.unmeasured(undefined);
			const occupancy = occupancyOf(tokens, budget.budget);
			this.#deps.remeasured(occupancy);
			this.#deps.timing.prospect(open, occupancy, ctx.model);
		}
		return true;
	}

	/** The boundary's request, calibrated; measured whole only when the turn's usage did not calibrate. */
	#tokens(turn: TurnMessages, model: Model, budget: number): number | undefined {
		const x = turn.extended;
		if (x) return Math.round(x.real + x.appended * x.ratio);
		const request = this.#deps.requests.lastRequest;
		return request && this.#deps.meter.occupancy(this.#conversation(request, turn), model, budget).tokens;
	}

	/** The last request's messages and what the turn added to it. */
	#conversation(request: readonly unknown[], turn: TurnMessages): unknown[] {
		return [...request, turn.message, ...turn.toolResults];
	}
}

/** The newest assistant entry of the open session's context: the turn the model has just seen through. */
function lastAssistantEntry(open: Open): string | undefined {
	const { sources } = open.context;
	for (let p = sources.length - 1; p >= 0; p--) {
		const s = sources[p] as { id: string; type: string; message?: { role?: string } };
		if (s.type === "message" && s.message?.role === "assistant") return s.id;
	}
	return undefined;
}
