// No context management: every request is the whole conversation so far.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { RequestRecord } from "../report/arm-report.ts";
import { EntryLog, type LogHeader } from "./entry-log.ts";
import type { Policy, PolicyEvent } from "./policy.ts";
import type { Turn } from "./transcript.ts";

export class NonePolicy implements Policy {
	readonly name = "none" as const;
	readonly #log: EntryLog;

	constructor(header: LogHeader) {
		this.#log = new EntryLog(header);
	}

	append(entry: SessionEntry): void {
		this.#log.append(entry);
	}

	window(_turn: Turn): AgentMessage[] {
		return this.#log.projection().messages;
	}

	sent(): void {}

	async answered(turn: Turn, answer: AssistantMessage): Promise<RequestRecord[]> {
		this.#log.appendMessage(turn.entry, answer);
		for (const e of turn.resultEntries) this.#log.append(e);
		return [];
	}

	events(): readonly PolicyEvent[] {
		return [];
	}

	problems(): readonly string[] {
		return [];
	}

	async dispose(): Promise<void> {}
}
