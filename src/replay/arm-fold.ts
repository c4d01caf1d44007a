// pi-fold, replayed by the real runtime: a FoldRuntime over a replayed branch (entry-log.ts, the
// read side of Pi's SessionManager) grown entry by entry from the recording, called exactly as its
// hooks (host/hooks.ts) call it inside Pi: `session_start` (open), `context` (recordRequest)
// and `context_with_system` (observeRequest) as each request goes out, `turn_end` (turnEnd) after
// each answer and its tool results, with the drafts it returns appended as Pi appends a boundary
// batch. Frontier, marks, commits, briefs, receipts, notices, calibration and the rewrite counters
// are all the runtime's own. The fold store and evidence files go in a temp directory the policy
// owns (removed by dispose), beside the session file the branch says it has (never written).
// Not replayed: what the agent did with the pi_fold_context tool (briefs, expands, pins; its calls
// and results stay in the conversation as recorded), threshold compaction (pi-fold cancels it, so
// it changes nothing), overflow recovery (a replayed request is never refused).
import { rmSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { ExtensionContext, SessionEntry, TurnEndEvent } from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import type { ModelLimits } from "../meter/budget.ts";
import type { RequestRecord } from "../report/arm-report.ts";
import { FoldRuntime } from "../runtime/runtime.ts";
import { errorMessage, type RuntimeSettings } from "../vocabulary.ts";
import type { Policy, PolicyEvent } from "./arm.ts";
import { EntryLog, type LogHeader } from "./entry-log.ts";
import type { Turn } from "./transcript.ts";

const outcomeOf = (m: AssistantMessage): TurnEndEvent["outcome"] =>
	m.stopReason === "error" ? "error" : m.stopReason === "aborted" ? "aborted" : "completed";

export class FoldPolicy implements Policy {
	readonly name = "pi-fold" as const;
	readonly runtime: FoldRuntime;
	readonly log: EntryLog;
	readonly #limits: ModelLimits;
	readonly #dir: string;
	readonly #events: PolicyEvent[] = [];
	readonly #problems: string[] = [];
	/** Requests the fence would have stopped (sent anyway here: the replay cannot change the answer). */
	fenced = 0;
	/** Time spent in the runtime per request (its hooks between two requests), ms. */
	readonly handlerMs: number[] = [];
	#pendingMs = 0;

	/** `dir`: an empty temp directory the policy owns from now on. */
	constructor(core: PiFoldCore, settings: RuntimeSettings, limits: ModelLimits, header: LogHeader, dir: string) {
		this.runtime = new FoldRuntime(core, settings);
		this.#limits = limits;
		this.#dir = dir;
		this.log = new EntryLog(header, join(dir, "session.jsonl"));
		// session_start (hooks.ts catches what it throws: so does the replay).
		this.#guarded("session_start", () => this.#timed(() => this.runtime.open(this.log)));
	}

	#guarded(where: string, body: () => void): void {
		try {
			body();
		} catch (err) {
			this.#problems.push(`${where}: ${errorMessage(err)}`);
		}
	}

	#ctx(turn: Turn): ExtensionContext {
		const model = { provider: turn.model.provider, id: turn.model.id, ...this.#limits };
		return { sessionManager: this.log, model } as unknown as ExtensionContext;
	}

	#timed<T>(body: () => T): T {
		const t0 = performance.now();
		try {
			return body();
		} finally {
			this.#pendingMs += performance.now() - t0;
		}
	}

	append(entry: SessionEntry): void {
		this.log.append(entry);
	}

	window(_turn: Turn): AgentMessage[] {
		return this.log.projection().messages;
	}

	sent(turn: Turn, messages: AgentMessage[]): void {
		this.#guarded("context", () =>
			this.#timed(() => {
				// `context` sees the window without system messages; `context_with_system` sees all of it.
				this.runtime.recordRequest(
					messages.filter((m) => m.role !== "system"),
					this.log,
				);
				if (this.runtime.observeRequest(messages, this.#ctx(turn))) this.fenced++;
			}),
		);
		this.handlerMs.push(this.#pendingMs);
		this.#pendingMs = 0;
	}

	async answered(turn: Turn, answer: AssistantMessage): Promise<RequestRecord[]> {
		const log = this.log;
		const messageEntryId = log.appendMessage(turn.entry, answer).id;
		const toolResultEntryIds = turn.resultEntries.map((e) => log.append(e).id);
		const projection = log.projection();
		const event: TurnEndEvent = {
			type: "turn_end",
			turnIndex: turn.turnIndex,
			message: answer,
			toolResults: turn.results,
			messageEntryId,
			toolResultEntryIds,
			entries: [],
			continue: false,
			outcome: outcomeOf(answer),
			context: {
				contextEntries: projection.entries,
				contextMessages: projection.messages,
				llmMessages: [],
				pendingMessages: [],
				canContinue: true,
			},
		};
		const commits = this.runtime.commits.length;
		const t0 = performance.now();
		try {
			const drafts = await this.runtime.turnEnd(event, this.#ctx(turn));
			log.appendBatch(drafts, turn.entry.timestamp);
			// As Pi's next event does: the batch read back, the commit it holds taken.
			this.runtime.readBack(log);
		} catch (err) {
			this.#problems.push(`turn_end after request ${turn.request}: ${errorMessage(err)}`);
		} finally {
			this.#pendingMs += performance.now() - t0;
		}
		for (const c of this.runtime.commits.slice(commits)) {
			const folds = c.committed.length + c.consolidated.length;
			this.#events.push({
				request: turn.request + 1,
				what: `commit of ${folds} fold${folds === 1 ? "" : "s"}${c.consolidated.length > 0 ? " (with consolidation)" : ""}`,
				before: c.before,
				after: c.after,
			});
		}
		return [];
	}

	events(): readonly PolicyEvent[] {
		return this.#events;
	}

	problems(): readonly string[] {
		return [...this.#problems, ...this.runtime.status().problems];
	}

	async dispose(): Promise<void> {
		// Leaf objects of marks are written in the background: removing the directory under them
		// would only see it made again.
		await this.runtime.prewriter.idle();
		rmSync(this.#dir, { recursive: true, force: true });
	}
}
