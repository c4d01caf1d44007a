// The folding policy: when a commit fires, how far it folds, when roots consolidate and
// how big a mark must be. Validated as a whole: an impossible policy is refused with every
// offending field named, and nothing is clamped into range behind the user's back.

import { THRESHOLD_KEYS, type Thresholds } from "../vocabulary.ts";

export const DEFAULT_THRESHOLDS: Readonly<Thresholds> = Object.freeze({
	maxTarget: 0.8,
	minTarget: 0.4,
	consolidateAfter: 10,
	minFoldChars: 8000,
	rawBatches: 3,
});

/** The fewest tool batches the working set keeps raw: the model's grip on what it is doing. */
const MIN_RAW_BATCHES = 3;

/** Whether these thresholds fix the band: maxTarget or minTarget other than the defaults. */
export function bandDiffers(t: Pick<Thresholds, "maxTarget" | "minTarget">): boolean {
	return t.maxTarget !== DEFAULT_THRESHOLDS.maxTarget || t.minTarget !== DEFAULT_THRESHOLDS.minTarget;
}

type ThresholdsResult = { ok: true; thresholds: Thresholds } | { ok: false; problems: string[] };

/** A value as the person wrote it (a settings file, /fold-settings): strings quoted, numbers as they are. */
const asWritten = (v: unknown): string => (typeof v === "string" ? JSON.stringify(v) : String(v));

/**
 * Check a (partial) thresholds object, merged over `base` (the defaults unless given). Returns the
 * complete policy, or every problem found, each naming its field; the input is never modified.
 */
export function validateThresholds(input: unknown, base: Readonly<Thresholds> = DEFAULT_THRESHOLDS): ThresholdsResult {
	if (input === undefined) return { ok: true, thresholds: { ...base } };
	if (typeof input !== "object" || input === null || Array.isArray(input)) {
		return {
			ok: false,
			problems: [`thresholds must be an object, got ${Array.isArray(input) ? "an array" : asWritten(input)}`],
		};
	}
	const given = input as Record<string, unknown>;
	const problems: string[] = [];
	for (const key of Object.keys(given)) {
		if (!(THRESHOLD_KEYS as readonly string[]).includes(key)) {
			problems.push(`thresholds.${key} is not a threshold (known: ${THRESHOLD_KEYS.join(", ")})`);
		}
	}
	const merged: Record<string, unknown> = { ...base };
	for (const key of THRESHOLD_KEYS) if (given[key] !== undefined) merged[key] = given[key];

	const share = (key: "maxTarget" | "minTarget"): void => {
		const v = merged[key];
		if (typeof v !== "number" || !Number.isFinite(v) || v <= 0 || v > 1) {
			problems.push(`thresholds.${key} must be a number in (0, 1], got ${asWritten(v)}`);
		}
	};
	const count = (key: "consolidateAfter" | "minFoldChars" | "rawBatches", least = 1): void => {
		const v = merged[key];
		if (typeof v !== "number" || !Number.isSafeInteger(v) || v < least) {
			problems.push(`thresholds.${key} must be an integer >= ${least}, got ${asWritten(v)}`);
		}
	};
	share("maxTarget");
	share("minTarget");
	count("consolidateAfter");
	count("minFoldChars");
	count("rawBatches", MIN_RAW_BATCHES);
	const { maxTarget, minTarget } = merged;
	if (typeof maxTarget === "number" && typeof minTarget === "number" && minTarget >= maxTarget) {
		problems.push(
			`thresholds.minTarget (${minTarget}) must be below thresholds.maxTarget (${maxTarget}): a commit must land below where it fires`,
		);
	}
	if (problems.length > 0) return { ok: false, problems };
	return { ok: true, thresholds: merged as unknown as Thresholds };
}
