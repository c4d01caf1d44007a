// The recorded model's limits, from Pi's own built-in model catalog (offline: in-memory credential
// and catalog stores, no refresh, nothing read from or written to ~/.pi). Unknown models (a custom
// provider, a dated id the catalog does not list) give undefined: the caller asks for --window.
import { InMemoryCredentialStore, InMemoryModelsStore } from "@earendil-works/pi-ai";
import { ModelRuntime } from "@earendil-works/pi-coding-agent";
import type { ModelRef } from "./transcript.ts";

export interface CatalogLimits {
	contextWindow: number;
	maxTokens?: number;
}

export async function catalogLimits(model: ModelRef): Promise<CatalogLimits | undefined> {
	try {
		const runtime = await ModelRuntime.create({
			credentials: new InMemoryCredentialStore(),
			modelsStore: new InMemoryModelsStore(),
			modelsPath: null,
			refreshOnCreate: false,
			allowModelNetwork: false,
		});
		const found = runtime.getModel(model.provider, model.id);
		if (!found || !Number.isSafeInteger(found.contextWindow) || found.contextWindow < 1) return undefined;
		const max = found.maxTokens;
		return { contextWindow: found.contextWindow, ...(Number.isSafeInteger(max) && max > 0 ? { maxTokens: max } : {}) };
	} catch {
		return undefined;
	}
}
