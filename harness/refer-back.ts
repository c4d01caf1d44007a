// Work that refers back: a later stage must quote a value an earlier stage's output printed (its
// "check value" line). The scripted agent knows only what a model would: if the request shows the
// line, it quotes it; otherwise it gets it back once, by searching its folds when it has pi-fold's
// tool (one search call), or else by doing the earlier stage's work again (the same command), and
// quotes what that answer shows. Both ways cost requests and tokens, which the benchmark counts.
import {
	type AssistantMessage,
	fauxAssistantMessage,
	fauxToolCall,
	type TranscriptContext,
} from "@earendil-works/pi-ai";
import { FOLD_TOOL_NAME } from "../src/vocabulary.ts";

/** A later stage that must quote the value stage `from` printed. */
export interface ReferBack {
	stage: number;
	from: number;
	/** The command that printed it (done again when the value is gone from the window). */
	command: string;
}

/** How a stage got the value it quotes. */
export interface ReferOutcome {
	stage: number;
	from: number;
	/** "visible": in the window; "search": pi-fold's search; "redone": the earlier work run again; "missing": none of these. */
	via: "visible" | "search" | "redone" | "missing";
	quoted?: string;
}

const lineOf = (from: number) => new RegExp(`\\[stage ${from}\\] check value: (chk-[0-9a-f]+)`);

function textsOf(context: TranscriptContext, only?: (m: unknown) => boolean): string[] {
	return context.messages
		.filter((m) => only?.(m) ?? true)
		.map((m) => {
			const c = (m as { content?: unknown }).content;
			if (typeof c === "string") return c;
			return Array.isArray(c) ? c.map((b) => (b as { text?: string }).text ?? "").join("\n") : "";
		});
}

/** Whether the request offers tool `name` (tools are declared by the transcript's system messages). */
function declares(context: TranscriptContext, name: string): boolean {
	let offered = false;
	for (const m of context.messages as { role: string; toolsAdded?: { name: string }[]; toolsRemoved?: unknown[] }[]) {
		if (m.role !== "system") continue;
		if (m.toolsAdded?.some((t) => t.name === name)) offered = true;
		if (m.toolsRemoved?.some((t) => (typeof t === "string" ? t : (t as { name?: string }).name) === name))
			offered = false;
	}
	return offered;
}

/** Drives the lookups of the stages in `refs`; `log` gets one outcome per stage, in order. */
export class ReferBacks {
	readonly log: ReferOutcome[] = [];
	readonly #refs: Map<number, ReferBack>;
	/** The stage whose lookup is in flight, and how. */
	#asked: { stage: number; via: "search" | "redone" } | undefined;

	constructor(refs: readonly ReferBack[]) {
		this.#refs = new Map(refs.map((r) => [r.stage, r]));
	}

	/**
	 * Before stage `stage` answers: a lookup call to make first, or undefined to go on, with the value
	 * it quotes (from the window or from the lookup's answer) recorded.
	 */
	before(stage: number, context: TranscriptContext, idPrefix: string): AssistantMessage | undefined {
		const ref = this.#refs.get(stage);
		if (!ref) return undefined;
		const asked = this.#asked?.stage === stage ? this.#asked : undefined;
		// Only the lookup's answer (its tool result, wherever a notice landed after it) counts for a
		// lookup; the whole window otherwise.
		const lookup = `${idPrefix}s${stage}lookup`;
		const where = textsOf(context, asked ? (m) => (m as { toolCallId?: string }).toolCallId === lookup : undefined);
		const found = where.map((t) => lineOf(ref.from).exec(t)?.[1]).find((v) => v !== undefined);
		if (found || asked) {
			this.#asked = undefined;
			this.#refs.delete(stage);
			this.log.push({
				stage,
				from: ref.from,
				via: found ? (asked?.via ?? "visible") : "missing",
				...(found ? { quoted: found } : {}),
			});
			return undefined;
		}
		const hasFoldTool = declares(context, FOLD_TOOL_NAME);
		const via = hasFoldTool ? "search" : "redone";
		this.#asked = { stage, via };
		const id = lookup;
		const call = hasFoldTool
			? fauxToolCall(FOLD_TOOL_NAME, { action: "search", query: `[stage ${ref.from}] check value` }, { id })
			: fauxToolCall("bash", { command: ref.command }, { id });
		return fauxAssistantMessage([call], { stopReason: "toolUse" });
	}
}
