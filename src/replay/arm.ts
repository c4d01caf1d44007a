// The replay's arms: what each replayed context policy (pi-fold, Pi's native compaction, none)
// answers to the driver (replay.ts), which feeds all three the same recorded steps in the same order.
// (Named arms, not policies, so that they are not taken for pi-fold's own commit policy in policy/.)
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { RequestRecord } from "../report/arm-report.ts";
import type { Turn } from "./transcript.ts";

const POLICY_NAMES = ["pi-fold", "native", "none"] as const;
export type PolicyName = (typeof POLICY_NAMES)[number];

/** A rewrite of the window the policy made (a commit, a compaction), and the request that first carries it. */
export interface PolicyEvent {
	request: number;
	/** What happened, in a few words ("commit of 3 folds", "compaction"). */
	what: string;
	/** Calibrated tokens of the next request before and after. */
	before: number;
	after: number;
}

export interface Policy {
	readonly name: PolicyName;
	/** A recorded entry that is not a turn (a user message, a steer, a model change...). */
	append(entry: SessionEntry): void;
	/** The messages of the turn's request (system messages included). */
	window(turn: Turn): AgentMessage[];
	/** The request went out with `messages` (pi-fold records it, as its context hooks would). */
	sent(turn: Turn, messages: AgentMessage[]): void;
	/**
	 * The answer arrived (the recorded message, carrying the usage this policy's request would have
	 * reported) with its tool results: append them and run the turn boundary. Returns the requests
	 * the policy made on its own meanwhile (a summarization).
	 */
	answered(turn: Turn, answer: AssistantMessage): Promise<RequestRecord[]>;
	/** The rewrites so far, in order. */
	events(): readonly PolicyEvent[];
	/** Problems met (never thrown): shown in the report. */
	problems(): readonly string[];
	/** Release what the policy holds (temp files, once background writes have settled). */
	dispose(): Promise<void>;
}
