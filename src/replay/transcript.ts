// The conversation of a recorded session, as the three policies replay it. What the session's own
// context management wrote (compactions, context edits, pi-fold's records, receipts and notices)
// is dropped: each policy makes its own. Everything else that shapes the window is kept in order,
// and every assistant message becomes a turn: one request over the context before it, then the
// message and its tool results appended, then a turn boundary.
import type { AgentMessage } from "@earendil-works/pi-agent-core";
import type { AssistantMessage, ToolResultMessage } from "@earendil-works/pi-ai";
import { buildSessionProjection, type SessionEntry, type SessionMessageEntry } from "@earendil-works/pi-coding-agent";
import { RECEIPT_TYPE } from "../vocabulary.ts";
import type { LoadedSession } from "./session-file.ts";

export interface ModelRef {
	provider: string;
	id: string;
}

export interface Turn {
	/** 0-based number of the request among the session's assistant messages. */
	request: number;
	/** The turn's number within its prompt run (restarts at each user message), as Pi's turn_end counts. */
	turnIndex: number;
	assistant: AssistantMessage;
	results: ToolResultMessage[];
	/** The recorded entries of the message and of its results. */
	entry: SessionMessageEntry;
	resultEntries: SessionMessageEntry[];
	model: ModelRef;
	/** What the recorded session sent for it, its own compactions and edits applied (for calibration). */
	recorded: AgentMessage[];
}

export type Step = { kind: "entry"; entry: SessionEntry } | { kind: "turn"; turn: Turn };

export interface Transcript {
	steps: Step[];
	turns: number;
	/** Assistant messages per "provider/id". */
	models: Map<string, number>;
	/** Lengths (characters) of the summaries of the session's own compactions. */
	summaryChars: number[];
	/** Entries left out because the session's context management wrote them. */
	dropped: { compactions: number; contextEdits: number; piFold: number };
	/** The serving budget the branch's last pi-fold commit receipt records (pi-fold ran with it). */
	receiptBudget?: number;
}

/** Custom types pi-fold writes (records, receipts, notices) all start with this. */
const PI_FOLD_TYPE_PREFIX = "pi-fold";

/** Entry kinds that never shape the window (labels, names, usage notes, other extensions' state). */
const STATE_ONLY = new Set(["custom", "label", "session_info", "usage"]);

export function modelKeyOf(model: ModelRef): string {
	return `${model.provider}/${model.id}`;
}

function isPiFold(entry: SessionEntry): boolean {
	return (
		(entry.type === "custom" || entry.type === "custom_message") && entry.customType.startsWith(PI_FOLD_TYPE_PREFIX)
	);
}

/** The replayable steps of the session's active branch. */
export function transcriptOf(session: LoadedSession): Transcript {
	const all = session.manager.getEntries();
	const byId = new Map(all.map((e) => [e.id, e]));
	const branch = session.manager.getBranch();
	const dropped = { compactions: 0, contextEdits: 0, piFold: 0 };
	const summaryChars: number[] = [];
	const kept: SessionEntry[] = [];
	let receiptBudget: number | undefined;
	for (const entry of branch) {
		const budget =
			entry.type === "custom_message" && entry.customType === RECEIPT_TYPE && receiptBudgetOf(entry.details);
		if (budget) receiptBudget = budget;
		if (entry.type === "compaction") {
			dropped.compactions++;
			if (typeof entry.summary === "string") summaryChars.push(entry.summary.length);
		} else if (entry.type === "context_edit") dropped.contextEdits++;
		else if (isPiFold(entry)) dropped.piFold++;
		else if (!STATE_ONLY.has(entry.type)) kept.push(entry);
	}

	// A legacy (v1) file has no entry ids: Pi's migration draws random ones on every load. The replay
	// names them by position instead, so the same file replays the same (ids are hashed into folds).
	if (session.version < 2) {
		const position = new Map(all.map((e, i) => [e, i + 1]));
		for (let i = 0; i < kept.length; i++) kept[i] = { ...kept[i], id: `v1-${position.get(kept[i])}` } as SessionEntry;
	}

	const steps: Step[] = [];
	const models = new Map<string, number>();
	let request = 0;
	let turnIndex = 0;
	for (let i = 0; i < kept.length; i++) {
		const entry = kept[i];
		if (entry.type !== "message" || entry.message.role !== "assistant") {
			if (entry.type === "message" && entry.message.role === "user") turnIndex = 0;
			steps.push({ kind: "entry", entry });
			continue;
		}
		const assistant = entry.message as AssistantMessage;
		const resultEntries: SessionMessageEntry[] = [];
		while (i + 1 < kept.length) {
			const next = kept[i + 1];
			if (next.type !== "message" || next.message.role !== "toolResult") break;
			resultEntries.push(next);
			i++;
		}
		const results = resultEntries.map((e) => e.message as ToolResultMessage);
		const model = { provider: String(assistant.provider ?? "unknown"), id: String(assistant.model ?? "unknown") };
		models.set(modelKeyOf(model), (models.get(modelKeyOf(model)) ?? 0) + 1);
		const recorded = buildSessionProjection(all, entry.parentId, byId).messages;
		steps.push({
			kind: "turn",
			turn: { request, turnIndex, assistant, results, entry, resultEntries, model, recorded },
		});
		request++;
		turnIndex++;
	}
	return { steps, turns: request, models, summaryChars, dropped, ...(receiptBudget ? { receiptBudget } : {}) };
}

/** A receipt's budget, when it records a usable one. */
function receiptBudgetOf(details: unknown): number | undefined {
	const budget = (details as { budget?: unknown } | undefined)?.budget;
	return typeof budget === "number" && Number.isSafeInteger(budget) && budget > 0 ? budget : undefined;
}

/** The session's main model: the one that answered most requests (the latest of equals). */
export function mainModel(transcript: Transcript): ModelRef | undefined {
	let best: string | undefined;
	let count = 0;
	for (const [key, n] of transcript.models) {
		if (n >= count) {
			best = key;
			count = n;
		}
	}
	return best === undefined ? undefined : modelRefOf(best);
}

/** "provider/id" back to its parts (the id may hold slashes: openrouter's do). */
export function modelRefOf(key: string): ModelRef {
	const slash = key.indexOf("/");
	return { provider: key.slice(0, slash), id: key.slice(slash + 1) };
}
