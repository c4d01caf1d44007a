// Tool runs that outlive the prompt cache, on a simulated clock: an extension that, when the first
// tool of chosen tool batches finishes, moves the clock on (as a long build or test run would have),
// and records, for each such run, whether pi-fold committed at the boundary that ended its turn.
// Every arm of a comparison loads it alike; it changes nothing Pi sends.
import type { ExtensionFactory } from "@earendil-works/pi-coding-agent";

export interface LongToolRun {
	/** 1-based tool batch (the assistant message opening tool calls) whose tool ran long. */
	batch: number;
	/** Commits counted when the tool ended, and when the next turn started (undefined until it does). */
	commitsBefore: number;
	commitsAfter?: number;
}

export interface LongToolRuns {
	extension: ExtensionFactory;
	runs: LongToolRun[];
	/** Runs whose turn ended with a commit. */
	used(): number;
}

/**
 * `batches`: the tool batches whose first tool runs `seconds` long by `skip` (the simulated clock's).
 * `commits`: how many commits there were so far (pi-fold's status; 0 for an arm without it).
 */
export function longToolRuns(
	batches: ReadonlySet<number>,
	seconds: number,
	skip: (ms: number) => void,
	commits: () => number,
): LongToolRuns {
	const runs: LongToolRun[] = [];
	const extension: ExtensionFactory = (pi) => {
		let batch = 0;
		let open: LongToolRun | undefined;
		pi.on("message_end", (e) => {
			const m = e.message as { role?: string; content?: unknown };
			const opens = m.role === "assistant" && Array.isArray(m.content) && m.content.some((b) => b?.type === "toolCall");
			if (opens) batch++;
		});
		pi.on("tool_execution_end", () => {
			if (!batches.has(batch) || runs.some((r) => r.batch === batch)) return;
			skip(seconds * 1000);
			open = { batch, commitsBefore: commits() };
			runs.push(open);
		});
		pi.on("turn_start", () => {
			if (open) open.commitsAfter = commits();
			open = undefined;
		});
		pi.on("agent_end", () => {
			if (open) open.commitsAfter = commits();
			open = undefined;
		});
	};
	return {
		extension,
		runs,
		used: () => runs.filter((r) => r.commitsAfter !== undefined && r.commitsAfter > r.commitsBefore).length,
	};
}
