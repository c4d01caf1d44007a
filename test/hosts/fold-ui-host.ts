// Test-only Pi extension (never shipped) for the UI tests that run the real `pi` CLI (RPC mode, and
// the interactive TUI under a pty): an offline scripted model playing the workload over Pi's own
// dist/ (run the CLI with that directory as its cwd), and pi-fold with a serving budget small enough
// that the run commits folds. With PI_FOLD_UI_SHUTDOWN=1 it ends the TUI once the run has settled.
import { fauxProvider } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { workloadSteps } from "../../harness/workload.ts";
import { registerPiFold } from "../../src/index.ts";

export const UI_HOST_PROVIDER = "pi-fold-faux-ui";
export const UI_HOST_MODEL = "faux-ui";
/** The budget and stages of runtime.test.ts: several commits and a consolidation in one run. */
export const UI_HOST_BUDGET = 14_000;
export const UI_HOST_STAGES = 16;
/** How long the TUI stays up after the run settles (frames to draw the last state). */
const SHUTDOWN_DELAY_MS = 800;

export default function foldUiHost(pi: ExtensionAPI): void {
	const faux = fauxProvider({
		provider: UI_HOST_PROVIDER,
		api: UI_HOST_PROVIDER,
		models: [{ id: UI_HOST_MODEL, contextWindow: 128_000, maxTokens: 4096 }],
		tokenSize: { min: 64, max: 64 },
	});
	faux.setResponses(workloadSteps(UI_HOST_STAGES, { seed: 11 }));
	pi.registerProvider(faux.provider);
	registerPiFold(pi, { providerInputBudget: UI_HOST_BUDGET, thresholds: { consolidateAfter: 3 } });
	if (process.env.PI_FOLD_UI_SHUTDOWN === "1") {
		pi.on("agent_settled", (_e, ctx) => void setTimeout(() => ctx.shutdown(), SHUTDOWN_DELAY_MS));
	}
}
