// A persisted Pi session with pi-fold loaded first and other extensions behind it (they see what
// pi-fold did: their handlers run after its), at a small window where commits come often.
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { makeSession, type TestSession } from "../../harness/pi-harness.ts";
import { WORKLOAD_ROOT } from "../../harness/workload.ts";
import { type PiFold, registerPiFold } from "../../src/index.ts";

export /** A persisted session at a 32k window, pi-fold loaded first and `after(fold)` behind it. */
async function behindPiFold(
	after: (fold: () => PiFold | undefined) => ((api: ExtensionAPI) => void)[],
): Promise<{ h: TestSession; fold: () => PiFold | undefined }> {
	let fold: PiFold | undefined;
	const get = () => fold;
	const h = await makeSession({
		cwd: WORKLOAD_ROOT,
		persist: true,
		contextWindow: 32_000,
		cost: { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 0 },
		extensions: [
			(api) => {
				fold = registerPiFold(api);
			},
			...after(get),
		],
	});
	return { h, fold: get };
}
