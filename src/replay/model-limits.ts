// The recorded models' limits and prices, from Pi's own built-in model catalog (offline: in-memory
// credential and catalog stores, no refresh, nothing read from or written to ~/.pi). Unknown models
// (a custom provider, a dated id the catalog does not list) are left out: the caller asks for
// --window, and prices them with the price card.
import { InMemoryCredentialStore, InMemoryModelsStore } from "@earendil-works/pi-ai";
import { ModelRuntime } from "@earendil-works/pi-coding-agent";
import type { ModelLimits } from "../meter/budget.ts";
import { type ModelRef, modelKeyOf } from "./transcript.ts";

export interface CatalogLimits extends ModelLimits {
	contextWindow: number;
	maxTokens?: number;
}

/** Each model's catalog entry (window, maxTokens, cost with its tiers), by "provider/id"; unknown ones absent. */
export async function catalogModels(models: readonly ModelRef[]): Promise<Map<string, CatalogLimits>> {
	const out = new Map<string, CatalogLimits>();
	let runtime: ModelRuntime;
	try {
		runtime = await ModelRuntime.create({
			credentials: new InMemoryCredentialStore(),
			modelsStore: new InMemoryModelsStore(),
			modelsPath: null,
			refreshOnCreate: false,
			allowModelNetwork: false,
		});
	} catch {
		return out;
	}
	for (const model of models) {
		const found = runtime.getModel(model.provider, model.id);
		if (!found || !Number.isSafeInteger(found.contextWindow) || found.contextWindow < 1) continue;
		const max = found.maxTokens;
		out.set(modelKeyOf(model), {
			contextWindow: found.contextWindow,
			...(Number.isSafeInteger(max) && max > 0 ? { maxTokens: max } : {}),
			...(found.cost ? { cost: found.cost } : {}),
		});
	}
	return out;
}
