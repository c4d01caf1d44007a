// Pi's compaction settings as Pi resolves them for a model: `compaction.modelOverrides["provider/id"]`,
// then the ordinary setting, then Pi's defaults. The serving budget stays at or below where Pi's
// compaction acts (meter/budget.ts), so pi-fold and Pi agree on when the window is too full.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import type { PiCompaction } from "../meter/budget.ts";

/** Pi's defaults (`DEFAULT_COMPACTION_SETTINGS`): what it uses when a setting is absent. */
const PI_DEFAULTS: PiCompaction = { reserveTokens: 16_384, keepRecentTokens: 20_000 };

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);
const whole = (x: unknown): x is number => typeof x === "number" && Number.isSafeInteger(x) && x >= 0;

/**
 * Pi's compaction settings for `model`, or undefined when Pi's compaction is off. A setting Pi
 * would refuse (not a whole number) counts as absent: Pi reports it itself.
 */
export function piCompactionOf(
	settings: unknown,
	model: { provider: string; id: string } | undefined,
): PiCompaction | undefined {
	const c = isObject(settings) ? settings.compaction : undefined;
	if (isObject(c) && c.enabled === false) return undefined;
	const overrides =
		isObject(c) && isObject(c.modelOverrides) && model ? c.modelOverrides[`${model.provider}/${model.id}`] : undefined;
	const field = (k: keyof PiCompaction): number => {
		const own = isObject(overrides) ? overrides[k] : undefined;
		if (whole(own)) return own;
		const ordinary = isObject(c) ? c[k] : undefined;
		return whole(ordinary) ? ordinary : PI_DEFAULTS[k];
	};
	return { reserveTokens: field("reserveTokens"), keepRecentTokens: field("keepRecentTokens") };
}

/** A reader of the running Pi's compaction settings (read afresh: /settings can change them); undefined before Pi can say. */
export function piCompactionReader(pi: ExtensionAPI) {
	return (model: { provider: string; id: string } | undefined): PiCompaction | undefined => {
		try {
			return piCompactionOf(pi.getSettings(), model);
		} catch {
			// Before Pi binds its runtime, getSettings throws: the budget goes without Pi's threshold until then.
			return undefined;
		}
	};
}
