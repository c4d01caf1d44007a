// registerPiFold's options, checked whole: an unknown or deleted option is refused by
// name, thresholds are validated as one policy, nothing is clamped.
import { validateThresholds } from "../policy/thresholds.ts";
import type { RuntimeSettings, Thresholds } from "../vocabulary.ts";

export interface PiFoldOptions {
	thresholds?: Partial<Thresholds>;
	/** The serving budget in tokens; default: the model's context window minus an output reservation. */
	providerInputBudget?: number;
	/** Tools whose results never fold automatically. */
	blacklistAutoFoldTools?: Iterable<string>;
	/** Milliseconds now (default Date.now): the clock the prompt cache's lifetime is kept by, for simulations. */
	clock?: () => number;
}

const KNOWN = new Set(["thresholds", "providerInputBudget", "blacklistAutoFoldTools", "clock"]);
/**
 * Options earlier pi-fold versions took, each with why it is gone. Refused by name (a host still
 * passing one learns what replaced it); the settings file drops them when it migrates.
 */
export const DELETED_OPTIONS: ReadonlyMap<string, string> = new Map([
	["summarizer", "briefs are deterministic or agent-supplied; pi-fold makes no model call"],
	["summarizeContextSpan", "briefs are deterministic or agent-supplied; pi-fold makes no model call"],
	["freshTail", "the frontier decides what stays raw: a commit stops at minTarget, so the newest work stays raw"],
	[
		"guidance",
		"advisories ahead of a commit would rewrite the cached window; the only window text is the bounded receipt a commit appends",
	],
	[
		"surfacing",
		"a suggestion slate shown in one request and replaced in the next breaks the prompt cache; briefs, status and peek index the folds",
	],
	[
		"toolActions",
		"pi_fold_context has one fixed, validated action set; tools whose results stay raw are blacklistAutoFoldTools",
	],
]);

type SettingsResult = { ok: true; settings: RuntimeSettings } | { ok: false; problems: string[] };

/** Options that name maxTarget or minTarget fix the band, whatever the values. */
function bandGiven(thresholds: unknown): boolean {
	if (typeof thresholds !== "object" || thresholds === null) return false;
	const t = thresholds as Record<string, unknown>;
	return t.maxTarget !== undefined || t.minTarget !== undefined;
}

export function parseOptions(input: unknown): SettingsResult {
	if (input === undefined) input = {};
	if (typeof input !== "object" || input === null || Array.isArray(input)) {
		return { ok: false, problems: ["pi-fold options must be an object"] };
	}
	const given = input as Record<string, unknown>;
	const problems: string[] = [];
	for (const key of Object.keys(given)) {
		const deleted = DELETED_OPTIONS.get(key);
		if (deleted !== undefined) problems.push(`option ${key} was deleted: ${deleted}`);
		else if (!KNOWN.has(key)) problems.push(`unknown option ${key} (known: ${[...KNOWN].join(", ")})`);
	}
	const thresholds = validateThresholds(given.thresholds);
	if (!thresholds.ok) problems.push(...thresholds.problems);
	const budget = given.providerInputBudget;
	if (budget !== undefined && (typeof budget !== "number" || !Number.isSafeInteger(budget) || budget < 1)) {
		problems.push(`providerInputBudget must be a positive integer, got ${String(budget)}`);
	}
	const blacklist = given.blacklistAutoFoldTools ?? [];
	let tools: string[] = [];
	if (typeof blacklist === "string" || typeof (blacklist as Iterable<unknown>)[Symbol.iterator] !== "function") {
		problems.push("blacklistAutoFoldTools must be a list of tool names");
	} else {
		tools = [...(blacklist as Iterable<unknown>)].filter((t): t is string => typeof t === "string");
	}
	const clock = given.clock;
	if (clock !== undefined && typeof clock !== "function") {
		problems.push(`clock must be a function returning milliseconds, got ${typeof clock}`);
	}
	if (problems.length > 0 || !thresholds.ok) return { ok: false, problems };
	return {
		ok: true,
		settings: {
			thresholds: thresholds.thresholds,
			bandFixed: bandGiven(given.thresholds),
			...(budget === undefined ? {} : { providerInputBudget: budget as number }),
			blacklistAutoFoldTools: new Set(tools),
			...(typeof clock === "function" ? { clock: clock as () => number } : {}),
		},
	};
}
