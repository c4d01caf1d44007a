// A fold before the next request: a person's /fold while Pi is idle, a model switch to a smaller
// budget the window already reaches, or a prompt whose first request already reaches the commit
// threshold (no turn boundary comes before a prompt's first request: after commits failed on a
// full disk, say, it would go out past the budget and the fence would stop it). The commit is
// planned now (its folds durable in the store at once) and shown on that request through the /fold
// bridge; the same marks commit at that prompt's first turn_end, where they project to exactly the
// messages shown.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { EarlyWindow } from "../edits/early-window.ts";
import type { Meter, Model } from "../meter/meter.ts";
import { commitNeed, modelKey, type Occupancy, occupancyOf } from "../meter/occupancy.ts";
import type { Open, SessionView } from "../session/open-session.ts";
import type { Staged } from "../session/staged.ts";
import type { Outcome, RuntimeSettings } from "../vocabulary.ts";
import { type CommitDeps, planBatch } from "./commit.ts";
import type { CommitTiming } from "./commit-timing.ts";

interface EarlyFoldDeps {
	meter: Meter;
	settings: RuntimeSettings;
	staged: Staged;
	/** The /fold bridge that shows the plan, and the window repair, which goes first. */
	bridge: EarlyWindow;
	repair: EarlyWindow;
	sync(sm: SessionView): Open | undefined;
	commitDeps(): CommitDeps;
	/** The commit policy, asked for a request no boundary preceded (a prompt's first), or by Pi's threshold. */
	timing: Pick<CommitTiming, "decide" | "pressed">;
	/** The last occupancy, and the same occupancy as a share of another budget. */
	occupancy(): Occupancy | null;
	remeasured(occupancy: Occupancy): void;
	problem(where: string, reason: string): void;
}

export class EarlyFold {
	readonly #deps: EarlyFoldDeps;
	/** A prompt started: its first request has no boundary before it. */
	#promptStarted = false;

	constructor(deps: EarlyFoldDeps) {
		this.#deps = deps;
	}

	/**
	 * Pi's `model_select`: the budget of the new model from now on. The last occupancy is kept as
	 * the best estimate of the next request until the next boundary measures it, as a share of the
	 * new budget. When Pi is idle and that already reaches maxTarget (a switch to a model with a
	 * lower price tier or a smaller window), the next prompt's first request would go out before any
	 * boundary could fold: at the surcharge, or stopped by the fence. So it folds now, as a /fold
	 * while idle does, only what lands the window at minTarget.
	 */
	async modelSelected(model: Model, ctx: ExtensionContext): Promise<void> {
		const { meter, staged, bridge, settings } = this.#deps;
		const budget = meter.budget(model);
		const last = this.#deps.occupancy();
		if (!budget.ok || !last) return;
		const occupancy = occupancyOf(last.tokens, budget.budget);
		this.#deps.remeasured(occupancy);
		const need = commitNeed(occupancy, settings.thresholds);
		if (need <= 0 || !ctx.isIdle() || staged.fold !== undefined || bridge.armed) return;
		staged.requestFold();
		const early = await this.prepare(ctx, need);
		if (early.ok) return;
		staged.takeFold();
		this.#deps.problem(
			"model_select",
			`nothing folded for ${modelKey(model)}'s budget before the next request: ${early.reason}`,
		);
	}

	/** Pi's `agent_start`: the next request is a prompt's first. */
	promptStarted(): void {
		this.#promptStarted = true;
	}

	/**
	 * The `context` event, before the request is recorded: a prompt's first request is measured as a
	 * boundary measures the next request, and when it reaches the commit threshold it is folded
	 * first (only what lands it at minTarget) and shown folded; the fence then stops only what
	 * folding could not fix. Other requests come after a boundary that already decided.
	 */
	async beforeRequest(messages: readonly unknown[], ctx: ExtensionContext): Promise<void> {
		if (!this.#promptStarted) return;
		this.#promptStarted = false;
		const budget = this.#deps.meter.budget(ctx.model);
		if (!budget.ok) return;
		const occupancy = this.#deps.meter.occupancy(messages, ctx.model, budget.budget);
		const early = await this.foldBefore(ctx, occupancy);
		if (early.ok || early.reason === undefined) return;
		// Nothing to fold and below the budget: the request goes out as it is, nothing went wrong.
		const pending = this.#deps.sync(ctx.sessionManager)?.lattice.pending().length ?? 0;
		if (occupancy.share <= 1 && pending === 0) return;
		this.#deps.problem(
			"context",
			`a prompt's first request at ${Math.round(occupancy.share * 100)}% of the budget could not be folded before it was sent: ${early.reason}`,
		);
	}

	/**
	 * A request no boundary decided on (a prompt's first; one Pi's compaction threshold asks about,
	 * `pressed`: then every mark outside the working set folds even when the policy would wait):
	 * when the window at `occupancy` must fold, plan it and show it on that request (the /fold
	 * bridge). `ok` false without a reason: nothing was due, or a fold is armed already.
	 */
	async foldBefore(
		ctx: ExtensionContext,
		occupancy: Occupancy,
		pressed = false,
	): Promise<{ ok: true } | { ok: false; reason?: string }> {
		const { staged, bridge, repair, timing } = this.#deps;
		if (staged.fold !== undefined || bridge.armed || repair.armed) return { ok: false };
		const open = this.#deps.sync(ctx.sessionManager);
		if (!open) return { ok: false, reason: "no session is open" };
		const decided = pressed ? timing.pressed(open, occupancy, ctx.model) : timing.decide(open, occupancy, ctx.model);
		const { need, eligibleEnd } = decided;
		if (need <= 0) return { ok: false };
		this.#deps.remeasured(occupancy);
		staged.requestFold();
		const early = await this.prepare(ctx, need, eligibleEnd);
		if (early.ok) return { ok: true };
		staged.takeFold();
		return early;
	}

	/**
	 * Plan the /fold that waits and arm the bridge with it. `need`: fold only the stalest marks that
	 * free it (a model switch, a prompt's first request), not every mark; `eligibleEnd`: none that
	 * ends after it (the raw working set).
	 */
	async prepare(ctx: ExtensionContext, need?: number, eligibleEnd?: number): Promise<Outcome<object>> {
		const { staged, bridge, repair } = this.#deps;
		const fold = staged.fold;
		if (!fold) return { ok: false, reason: "no /fold is waiting" };
		if (repair.armed) return { ok: false, reason: "the window is being repaired first" };
		const open = this.#deps.sync(ctx.sessionManager);
		if (!open) return { ok: false, reason: "no session is open" };
		const planned = await planBatch(this.#deps.commitDeps(), open, {
			projection: ctx.sessionManager.buildSessionProjection().entries,
			// With `need` (a model switch): the stalest marks that free it; without (a /fold): all of them.
			need: need ?? 1,
			model: ctx.model,
			reason: "fold",
			...(need === undefined ? { all: true, ...(fold.only ? { only: fold.only } : {}) } : {}),
			...(eligibleEnd === undefined ? {} : { eligibleEnd }),
		});
		if (!planned.ok) return planned;
		// The turn_end commit plans exactly these marks again (deterministic: same briefs, same drafts).
		staged.requestFold(new Set(planned.plan.committed));
		bridge.arm(planned.plan.drafts);
		return { ok: true };
	}
}
