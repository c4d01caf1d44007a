// Pi's native compaction, replayed with Pi's own decisions wherever Pi exports them.
//
// When: after every turn (Pi checks between turns and when a run ends), `shouldCompact` on Pi's
// context estimate: the last valid assistant usage plus Pi's chars/4 `estimateTokens` of the
// messages after it, or the whole projection's estimate when a compaction is newer than that
// usage. That estimate (estimateProjectedContextTokens) is not exported; the few lines below do
// what it does, with Pi's exported `calculateContextTokens` and `estimateTokens`.
// Where: Pi's exported `findCutPoint` over the compaction-aware context entries, from just after
// the previous compaction, keeping `keepRecentTokens` (prepareCompaction is not exported; without
// context edits its projected cut is this one). Everything before the cut (and a split turn's
// prefix) is summarized; the compaction carries the current system message, as Pi 1.6's does.
// The summary: `summaryChars` characters (default: the mean of the session's own compaction
// summaries, else DEFAULT_SUMMARY_CHARS) taken from the head of what is summarized (the previous
// summary, then Pi's serialized conversation), so its token density is the session's own.
// The summarization is billed as one request, all fresh input (Pi sends it uncached): its prompt
// is Pi's serialized conversation (tool results cut to 2000 characters by serializeConversation),
// the previous summary and Pi's instructions (SUMMARY_PROMPT_TOKENS); its output is the summary.
// A split turn's prefix, which Pi summarizes in a second call, is counted in that one request
// (same tokens, one call fewer).
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { AssistantMessage, SystemMessage } from "@earendil-works/pi-ai";
import {
	calculateContextTokens,
	convertToLlm,
	estimateTokens,
	findCutPoint,
	type SessionEntry,
	serializeConversation,
	sessionEntryToContextMessages,
	shouldCompact,
} from "@earendil-works/pi-coding-agent";
import type { RequestRecord } from "../report/arm-report.ts";
import type { Policy, PolicyEvent } from "./arm.ts";
import { WholeLogPolicy } from "./arm-whole-log.ts";
import type { LogHeader } from "./entry-log.ts";
import type { RequestMeter } from "./measure.ts";
import type { ProviderTokens } from "./provider-tokens.ts";
import { modelKeyOf, type Turn } from "./transcript.ts";

/** Summary size when the session has no compaction of its own (the fixture's two real Pi summaries: 4291 and 3649 characters). */
export const DEFAULT_SUMMARY_CHARS = 4000;
/** Pi 1.6's summarization system prompt and instructions: about 1300 characters. */
const SUMMARY_PROMPT_TOKENS = 330;

/** Pi's compaction settings (its CompactionSettings, all fields set) and the model's window. */
export interface NativeSettings {
	enabled: boolean;
	reserveTokens: number;
	keepRecentTokens: number;
	contextWindow: number;
	summaryChars: number;
}

function validUsage(m: AgentMessage): number {
	if (m.role !== "assistant" || m.stopReason === "aborted" || m.stopReason === "error" || !m.usage) return 0;
	return calculateContextTokens(m.usage);
}

const withoutSystem = (entries: readonly SessionEntry[]) =>
	entries
		.flatMap((e) => (e.type === "compaction" ? [] : sessionEntryToContextMessages(e)))
		.filter((m) => m.role !== "system");

export class NativePolicy extends WholeLogPolicy implements Policy {
	readonly name = "native" as const;
	readonly #meter: RequestMeter;
	readonly #tokens: ProviderTokens;
	readonly #settings: NativeSettings;
	readonly #events: PolicyEvent[] = [];
	/** The newest answer with valid usage, and whether a compaction came after it. */
	#usage: { message: AgentMessage; stale: boolean } | undefined;
	#previousSummary: string | undefined;

	constructor(header: LogHeader, meter: RequestMeter, tokens: ProviderTokens, settings: NativeSettings) {
		super(header);
		this.#meter = meter;
		this.#tokens = tokens;
		this.#settings = settings;
	}

	async answered(turn: Turn, answer: AssistantMessage): Promise<RequestRecord[]> {
		this.appendAnswer(turn, answer);
		if (validUsage(answer) > 0) this.#usage = { message: answer, stale: false };
		return this.#compactIfDue(turn);
	}

	/** Pi's context estimate for the threshold check (estimateProjectedContextTokens). */
	contextTokens(messages: readonly AgentMessage[]): number {
		const u = this.#usage;
		const at = u && !u.stale ? messages.lastIndexOf(u.message) : -1;
		if (u && at >= 0) {
			let tokens = validUsage(u.message);
			for (let i = at + 1; i < messages.length; i++) tokens += estimateTokens(messages[i]);
			return tokens;
		}
		const system = messages.findLast((m) => m.role === "system");
		let tokens = system ? estimateTokens(system) : 0;
		for (const m of messages) if (m.role !== "system") tokens += estimateTokens(m);
		return tokens;
	}

	#compactIfDue(turn: Turn): RequestRecord[] {
		const log = this.log;
		if (log.entries.at(-1)?.type === "compaction") return [];
		const projection = log.projection();
		const tokensBefore = this.contextTokens(projection.messages);
		if (!shouldCompact(tokensBefore, this.#settings.contextWindow, this.#settings)) return [];
		const entries = log.buildContextEntries();
		const start = entries[0]?.type === "compaction" ? 1 : 0;
		const cut = findCutPoint(entries, start, entries.length, this.#settings.keepRecentTokens);
		const firstKept = entries[cut.firstKeptEntryIndex];
		if (!firstKept) return [];
		const historyEnd = cut.isSplitTurn ? cut.turnStartIndex : cut.firstKeptEntryIndex;
		const summarized = [
			...withoutSystem(entries.slice(start, historyEnd)),
			...(cut.isSplitTurn ? withoutSystem(entries.slice(cut.turnStartIndex, cut.firstKeptEntryIndex)) : []),
		];
		if (summarized.length === 0) return [];

		const model = modelKeyOf(turn.model);
		const conversation = serializeConversation(convertToLlm(summarized));
		const previous = this.#previousSummary;
		const prompt =
			`<conversation>\n${conversation}\n</conversation>\n\n` +
			(previous ? `<previous-summary>\n${previous}\n</previous-summary>\n\n` : "");
		const summary = `${previous ? `${previous}\n\n` : ""}${conversation}`.slice(0, this.#settings.summaryChars);
		const before = this.#size(projection.messages, model);
		const systemMessage = projection.messages.findLast((m) => m.role === "system") as SystemMessage | undefined;
		log.appendCompaction(
			{ summary, firstKeptEntryId: firstKept.id, tokensBefore, systemMessage },
			turn.entry.timestamp,
		);
		this.#previousSummary = summary;
		if (this.#usage) this.#usage.stale = true;
		const after = this.#size(log.projection().messages, model);
		this.#events.push({ request: turn.request + 1, what: "compaction", before, after });

		const promptTokens = this.#tokens.text("user", prompt, model) + SUMMARY_PROMPT_TOKENS;
		const output = this.#tokens.text("assistant", summary, model);
		return [{ input: promptTokens, cacheRead: 0, cacheWrite: 0, output, promptTokens, kind: "summary", model }];
	}

	/** Provider tokens of a window. */
	#size(messages: readonly AgentMessage[], model: string): number {
		const estimate = this.#meter.estimate(messages);
		return this.#tokens.request(estimate, this.#tokens.perMessage(estimate, model), model);
	}

	events(): readonly PolicyEvent[] {
		return this.#events;
	}

	problems(): readonly string[] {
		return [];
	}

	async dispose(): Promise<void> {}
}
