// Calibration: the estimate anchored to the last usage the provider really reported, so the
// occupancy a commit aims by is in the provider's tokens, not the estimator's.
import type { RequestEstimate } from "./estimate.ts";

/** A calibration ratio outside [1/MAX_RATIO, MAX_RATIO] cannot describe the same request: refused. */
export const MAX_CALIBRATION_RATIO = 4;

/** input + cacheRead + cacheWrite, or undefined when the report is missing, malformed or empty. */
export function promptTokensOf(usage: unknown): number | undefined {
	if (typeof usage !== "object" || usage === null) return undefined;
	const u = usage as Record<string, unknown>;
	let total = 0;
	for (const key of ["input", "cacheRead", "cacheWrite"] as const) {
		const v = u[key] ?? 0;
		if (typeof v !== "number" || !Number.isFinite(v) || v < 0) return undefined;
		total += v;
	}
	return total > 0 ? total : undefined;
}

export type CalibrationOutcome =
	| { ok: true; ratio: number; real: number; estimated: number }
	| { ok: false; reason: string };

/**
 * Calibration of the estimator against the provider, from the request a usage report belongs to:
 * the last one observed (observeRequest, as the request is sent) before the assistant message
 * carrying that usage. Each observation is used once.
 *
 * The next request is estimated in one of two ways:
 * - it extends the calibrated request (same billed text for every message of it, then more: the
 *   normal case between commits): the reported usage, exact, plus the calibrated estimate of the
 *   appended messages only; an error can come only from what was appended since;
 * - anything else (a commit rewrote the window): the whole estimate times the ratio real/estimated.
 *
 * The ratio is kept across a commit on purpose: it measures how the provider's tokenizer and
 * framing differ from the estimator on billed text, which a commit does not change (it swaps raw
 * output for briefs, both billed text), and dropping it would fall back to the raw estimate just
 * when the fence and the next commit decision need the best number. The first request after the
 * commit re-measures it. It is dropped when it stops describing the same thing: another model
 * (another tokenizer), or a report so far from the estimate (beyond MAX_CALIBRATION_RATIO) that it
 * cannot be this request's usage; a refused report keeps the previous calibration.
 */
export class Calibration {
	#observed: { estimate: RequestEstimate; model: string } | undefined;
	#anchor: { estimate: RequestEstimate; real: number; ratio: number; model: string } | undefined;

	/** Record the estimate of a request being sent to `model` ("provider/id"). */
	observeRequest(estimate: RequestEstimate, model: string): void {
		this.#observed = estimate.total > 0 ? { estimate, model } : undefined;
	}

	/** Take the usage of the response to the last observed request. Refusals change nothing. */
	calibrate(usage: unknown, model: string): CalibrationOutcome {
		const real = promptTokensOf(usage);
		if (real === undefined) return { ok: false, reason: "the usage report has no prompt tokens" };
		const observed = this.#observed;
		if (!observed) return { ok: false, reason: "no observed request for this usage (already used, or none yet)" };
		if (observed.model !== model) {
			return { ok: false, reason: `the usage is from ${model}, the observed request went to ${observed.model}` };
		}
		const estimated = observed.estimate.total;
		const ratio = real / estimated;
		if (ratio > MAX_CALIBRATION_RATIO || ratio < 1 / MAX_CALIBRATION_RATIO) {
			return {
				ok: false,
				reason: `implausible calibration: ${real} real vs ${estimated} estimated tokens (ratio ${ratio.toFixed(3)})`,
			};
		}
		this.#observed = undefined;
		this.#anchor = { estimate: observed.estimate, real, ratio, model };
		return { ok: true, ratio, real, estimated };
	}

	/** The ratio that applies to requests to `model` (1 until that model has reported usage). */
	ratioFor(model: string): number {
		return this.#anchor && this.#anchor.model === model ? this.#anchor.ratio : 1;
	}

	/** The calibrated token count of a request to `model`. */
	apply(estimate: RequestEstimate, model: string): number {
		const a = this.#anchor;
		if (!a || a.model !== model) return estimate.total;
		const base = a.estimate.texts;
		if (extendsTexts(base, estimate.texts)) {
			let appended = 0;
			for (let i = base.length; i < estimate.tokens.length; i++) appended += estimate.tokens[i];
			return Math.round(a.real + appended * a.ratio);
		}
		return Math.round(estimate.total * a.ratio);
	}
}

function extendsTexts(base: readonly string[], next: readonly string[]): boolean {
	if (base.length > next.length) return false;
	for (let i = 0; i < base.length; i++) if (base[i] !== next[i]) return false;
	return true;
}
