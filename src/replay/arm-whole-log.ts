// What the policies that never edit the window share (none, and native between its compactions):
// the window is Pi's projection of the whole replayed log, and a turn appends its answer and its
// tool results to that log unchanged.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { EntryLog, type LogHeader } from "./entry-log.ts";
import type { Turn } from "./transcript.ts";

export class WholeLogPolicy {
	protected readonly log: EntryLog;

	constructor(header: LogHeader) {
		this.log = new EntryLog(header);
	}

	append(entry: SessionEntry): void {
		this.log.append(entry);
	}

	window(_turn: Turn): AgentMessage[] {
		return this.log.projection().messages;
	}

	sent(): void {}

	/** The replayed answer (carrying this policy's usage), then the turn's recorded tool results. */
	protected appendAnswer(turn: Turn, answer: AssistantMessage): void {
		this.log.appendMessage(turn.entry, answer);
		for (const e of turn.resultEntries) this.log.append(e);
	}
}
