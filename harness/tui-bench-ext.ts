// The Pi extension `npm run bench:tui` loads into Pi's interactive TUI (under a pty): an offline
// scripted model that runs the session benchmark's workload on a small window, with a provider that
// refuses a request past the window as a real one does, and pi-fold with its defaults (arm
// "pi-fold") or not at all (arm "native": Pi's own compaction). Settings come from the environment
// (PI_FOLD_TUI_*), since Pi loads an extension by path. When a run settles it writes a line to
// PI_FOLD_TUI_DONE, so the benchmark knows the session is idle without watching the clock.
import { appendFileSync } from "node:fs";
import { fauxProvider } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { registerPiFold } from "../src/index.ts";
import { workloadSteps } from "./workload.ts";

export const TUI_BENCH_PROVIDER = "pi-fold-faux-tui-bench";
export const TUI_BENCH_MODEL = "faux-tui-bench";

const num = (name: string, fallback: number) => {
	const v = Number(process.env[name]);
	return Number.isSafeInteger(v) && v > 0 ? v : fallback;
};

export default function tuiBench(pi: ExtensionAPI): void {
	const window = num("PI_FOLD_TUI_WINDOW", 20_000);
	const stages = num("PI_FOLD_TUI_STAGES", 64);
	if (process.env.PI_FOLD_TUI_ARM !== "native") registerPiFold(pi);
	const faux = fauxProvider({
		provider: TUI_BENCH_PROVIDER,
		api: TUI_BENCH_PROVIDER,
		models: [
			{
				id: TUI_BENCH_MODEL,
				contextWindow: window,
				maxTokens: num("PI_FOLD_TUI_MAX_TOKENS", 2_000),
				cost: { input: 5, output: 30, cacheRead: 0.5, cacheWrite: 0 },
			},
		],
		tokenSize: { min: 64, max: 64 },
	});
	faux.setResponses(
		workloadSteps(stages, {
			seed: num("PI_FOLD_TUI_SEED", 7),
			// Ordinary reads (60-300 lines): a 20,000 window cannot hold the 2,000-line reads of the
			// session benchmark's 200,000 one next to anything else, with pi-fold or without.
			windowLimit: window,
			summaryChars: 6000,
		}),
	);
	pi.registerProvider(faux.provider);
	const done = process.env.PI_FOLD_TUI_DONE;
	if (done) pi.on("agent_settled", () => appendFileSync(done, "settled\n"));
}
