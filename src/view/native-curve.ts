// Pi's native compaction and pi-fold over the same session, as `pi-fold replay` computes them (each
// request's window and its cost): the replay runs in a child process (it loads Pi and takes seconds
// on a long session), so the view answers at once and draws the curves when they arrive. A machine
// without Pi gets the reason instead.
import { spawn } from "node:child_process";
import type { PolicyName } from "../replay/arm.ts";
import type { ReplayResult } from "../replay/replay.ts";
import type { NativeAnswer, ReplayedArm } from "./view-data.ts";

/** Past this the replay is given up on (a replay of a real session takes seconds). */
const REPLAY_TIMEOUT_MS = 300_000;

/** One arm of a replay's JSON report, as the page draws it. */
function armOf(r: ReplayResult, name: PolicyName): ReplayedArm {
	const p = r.policies.find((x) => x.name === name);
	const arm = r.arms.find((a) => a.name === name);
	return {
		prompts: p?.prompts ?? [],
		costs: p?.costs ?? [],
		cost: arm?.cost ?? 0,
		peak: arm?.peakPromptTokens ?? 0,
		rewrites: (p?.events ?? []).map(({ request, before, after }) => ({ request, before, after })),
		overWindow: p?.overWindow ?? 0,
	};
}

/** The curves from a replay's JSON report. */
export function curveOf(r: ReplayResult): NativeAnswer {
	const s = r.settings;
	const tier = s.priceTier;
	return {
		state: "ready",
		model: s.servedAs ?? r.model,
		window: s.window,
		budget: s.budget,
		budgetWhy: s.budgetWhy,
		threshold: s.window - s.reserveTokens,
		reserveTokens: s.reserveTokens,
		priceCard: s.priceCard,
		...(tier
			? {
					priceTier: {
						tokens: tier.above,
						label: `price tier above ${tier.above.toLocaleString("en-US")} tokens${tier.multiplier ? ` (${tier.multiplier}x)` : ""}`,
					},
				}
			: {}),
		native: armOf(r, "native"),
		fold: armOf(r, "pi-fold"),
		none: r.policies.find((p) => p.name === "none")?.prompts ?? [],
	};
}

export interface CurveRun {
	/** Never rejects. */
	answer: Promise<NativeAnswer>;
	/** Stop the replay (the view is closing before it is done). */
	cancel(): void;
}

/** Run `pi-fold replay --json` on `file` with the CLI at `cli` (and its `options`). */
export function replayCurve(file: string, cli: string, options: readonly string[] = []): CurveRun {
	let cancel = () => {};
	const answer = new Promise<NativeAnswer>((resolve) => {
		const child = spawn(process.execPath, [cli, "replay", file, ...options, "--json", "--quiet"], {
			stdio: ["ignore", "pipe", "pipe"],
			env: process.env,
		});
		let out = "";
		let err = "";
		child.stdout.setEncoding("utf8").on("data", (d: string) => {
			out += d;
		});
		child.stderr.setEncoding("utf8").on("data", (d: string) => {
			err += d;
		});
		cancel = () => child.kill("SIGKILL");
		const timer = setTimeout(cancel, REPLAY_TIMEOUT_MS);
		timer.unref();
		child.on("error", (e) => resolve({ state: "unavailable", reason: `the replay did not start: ${e.message}` }));
		child.on("close", (code) => {
			clearTimeout(timer);
			if (code !== 0) {
				const why = err.trim().split("\n").pop() ?? `exit ${code}`;
				resolve({ state: "unavailable", reason: why.replace(/^pi-fold replay: /, "") });
				return;
			}
			try {
				resolve(curveOf(JSON.parse(out) as ReplayResult));
			} catch (e) {
				resolve({ state: "unavailable", reason: `the replay's report could not be read: ${(e as Error).message}` });
			}
		});
	});
	return { answer, cancel: () => cancel() };
}
