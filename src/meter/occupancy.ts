// Occupancy: the calibrated estimate of the next request against the serving budget, the one
// figure a commit, the fence and every display use; and how much a commit must free.
import type { PiFoldCore } from "../../bindings/index.ts";
import type { Thresholds } from "../vocabulary.ts";
import { Calibration, type CalibrationOutcome } from "./calibration.ts";
import { type RequestEstimate, RequestMemo } from "./estimate.ts";

export interface Occupancy {
	/** Calibrated estimate of the next request. */
	tokens: number;
	budget: number;
	/** tokens / budget. */
	share: number;
}

export function occupancyOf(tokens: number, budget: number): Occupancy {
	return { tokens, budget, share: budget > 0 ? tokens / budget : Number.POSITIVE_INFINITY };
}

/**
 * Tokens a commit must free: when the next request would reach maxTarget of the budget, enough to
 * bring it down to minTarget; otherwise 0 (no commit fires).
 */
export function commitNeed(occupancy: Occupancy, thresholds: Pick<Thresholds, "maxTarget" | "minTarget">): number {
	const { tokens, budget } = occupancy;
	if (tokens < thresholds.maxTarget * budget) return 0;
	return Math.max(0, Math.ceil(tokens - Math.floor(thresholds.minTarget * budget)));
}

/** "provider/id", the key calibration is kept under. */
export function modelKey(model: { provider: string; id: string } | undefined): string {
	return model ? `${model.provider}/${model.id}` : "(no model)";
}

/** Everything one runtime needs: the core and the calibration, together. */
export class OccupancyMeter {
	readonly calibration = new Calibration();
	readonly #core: PiFoldCore;
	/** One memo per stream of requests: as sent (system prompt first), and as turn_end sees the next one. */
	readonly #sentMemo = new RequestMemo();
	readonly #nextMemo = new RequestMemo();

	constructor(core: PiFoldCore) {
		this.#core = core;
	}

	/** The uncalibrated estimate of a request carrying `messages` (system messages included). */
	estimateRequest(messages: readonly unknown[]): RequestEstimate {
		return this.#nextMemo.estimate(this.#core, messages, this.#sentMemo);
	}

	/**
	 * Call for each request as it is sent (all its messages); returns its uncalibrated estimate.
	 * `sameAs`: the rewrite recorder's proof for the same request (RequestMemo).
	 */
	observeRequest(messages: readonly unknown[], model: string, sameAs?: (message: unknown) => unknown): RequestEstimate {
		const estimate = this.#sentMemo.estimate(this.#core, messages, this.#nextMemo, sameAs);
		this.calibration.observeRequest(estimate, model);
		return estimate;
	}

	/** Call with the usage of each assistant message (Pi's `message_end`/`turn_end`). */
	calibrate(usage: unknown, model: string): CalibrationOutcome {
		return this.calibration.calibrate(usage, model);
	}

	/** Occupancy of a request carrying `messages`, calibrated, against `budget`. */
	occupancy(messages: readonly unknown[], model: string, budget: number): Occupancy {
		return occupancyOf(this.calibration.apply(this.estimateRequest(messages), model), budget);
	}
}
