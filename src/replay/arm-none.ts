// No context management: every request is the whole conversation so far.
import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { RequestRecord } from "../report/arm-report.ts";
import type { Policy, PolicyEvent } from "./arm.ts";
import { WholeLogPolicy } from "./arm-whole-log.ts";
import type { Turn } from "./transcript.ts";

export class NonePolicy extends WholeLogPolicy implements Policy {
	readonly name = "none" as const;

	async answered(turn: Turn, answer: AssistantMessage): Promise<RequestRecord[]> {
		this.appendAnswer(turn, answer);
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
