// A fold before the next request, while Pi is idle: a person's /fold, or a model switch to a
// smaller budget the window already reaches. The commit is planned now (its folds durable in the
// store at once) and shown on the next request through the /fold bridge, so the first request of
// the next prompt is already folded; the same marks commit at that prompt's first turn_end, where
// they project to exactly the messages shown.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { FoldBridge } from "../edits/fold-bridge.ts";
import type { Meter, Model } from "../meter/meter.ts";
import { commitNeed, modelKey, type Occupancy, occupancyOf } from "../meter/occupancy.ts";
import type { Open, SessionView } from "../session/open-session.ts";
import type { Staged } from "../session/staged.ts";
import type { Outcome, RuntimeSettings } from "../vocabulary.ts";
import { type CommitDeps, planBatch } from "./commit.ts";

export interface EarlyFoldDeps {
	meter: Meter;
	settings: RuntimeSettings;
	staged: Staged;
	/** The /fold bridge that shows the plan, and the window repair, which goes first. */
	bridge: FoldBridge;
	repair: FoldBridge;
	sync(sm: SessionView): Open | undefined;
	commitDeps(): CommitDeps;
	/** The last occupancy, and the same occupancy as a share of another budget. */
	occupancy(): Occupancy | null;
	remeasured(occupancy: Occupancy): void;
	problem(where: string, reason: string): void;
}

export class EarlyFold {
	readonly #deps: EarlyFoldDeps;

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

	/**
	 * Plan the /fold that waits and arm the bridge with it. `need`: fold only what lands the window
	 * at minTarget (a model switch), not every mark.
	 */
	async prepare(ctx: ExtensionContext, need?: number): Promise<Outcome<object>> {
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
		});
		if (!planned.ok) return planned;
		// The turn_end commit plans exactly these marks again (deterministic: same briefs, same drafts).
		staged.requestFold(new Set(planned.plan.committed));
		bridge.arm(planned.plan.drafts);
		return { ok: true };
	}
}
