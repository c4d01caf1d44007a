// The session benchmark's planted values and the scripted agent that is asked for them at the end.
//
// Eight seeded values are printed by an extra bash call at stages spread over the run (the workload's
// `plant`). After the last stage one user message asks for all of them, naming the stages. The scripted
// agent (a faux response function) decides from what each request carries:
// - a value the first answering request contains (raw, or inside a brief) is "visible";
// - otherwise, with pi-fold, it asks `pi_fold_context` for `status` with `detail: "tree"` (falling back to
//   the fold ids the window shows if that is refused), skims the head of every committed fold that is
//   not an index of others (one turn of small `peek` slices: which stage each fold starts at), then
//   peeks, for each missing value, the fold holding its stage, slice after slice (`offset`), keeping
//   one turn's slices within a share of the budget `status` stated, until a request carries the value:
//   "recovered". It remembers what it learnt (which fold starts where) across turns, as a model would
//   from its own reading, even after a commit folds the skim away;
// - without the tool (native compaction), or when every route is exhausted: "lost". A refused `peek`
//   (a build without the action) ends the search: "lost (peek unavailable)".
// Summary requests (Pi's compaction) are answered wherever they occur, by the workload's own step.
import { createHash } from "node:crypto";
import {
	type AssistantMessage,
	type FauxResponseStep,
	fauxAssistantMessage,
	fauxText,
	fauxToolCall,
	type TranscriptContext,
} from "@earendil-works/pi-ai";
import { isSummaryRequest } from "../../test/helpers/workload.ts";

export const FOLD_TOOL = "pi_fold_context";

export interface PlantedValue {
	stage: number;
	value: string;
}

export type ValueOutcome = "visible" | "recovered" | "lost" | "lost (peek unavailable)";

export interface ValueReport extends PlantedValue {
	outcome: ValueOutcome;
	/** the fold whose peek carried it back (recovered only) */
	via?: string;
}

/** `count` values planted at stages spread evenly over the run, each a seeded 16-hex-digit tag. */
export function plantValues(stages: number, count: number, seed: number): PlantedValue[] {
	if (count > stages) throw new Error(`cannot plant ${count} values in ${stages} stages`);
	return Array.from({ length: count }, (_, i) => {
		const digest = createHash("sha256").update(`pi-fold session bench ${seed}/${i}`).digest("hex");
		return { stage: Math.floor(((i + 0.5) * stages) / count), value: `chk-${digest.slice(0, 16)}` };
	});
}

/** The workload `plant` option for these values. */
export function plantOption(values: readonly PlantedValue[]): (stage: number) => string | undefined {
	const byStage = new Map(values.map((v) => [v.stage, v.value]));
	return (stage) => byStage.get(stage);
}

export function recallQuestion(values: readonly PlantedValue[]): string {
	return (
		`During the survey a check value was printed by bash at each of stages ${values.map((v) => v.stage).join(", ")}. ` +
		"List all of them exactly, one per line as `stage: value`."
	);
}

// ---- reading a request ----

type Loose = Record<string, unknown>;

function blockText(b: unknown): string {
	const block = b as Loose;
	if (block?.type === "text" && typeof block.text === "string") return block.text;
	if (block?.type === "thinking" && typeof block.thinking === "string") return block.thinking;
	if (block?.type === "toolCall") return `${String(block.name)}:${JSON.stringify(block.arguments ?? {})}`;
	return "";
}

/** Everything a request shows the model, one string per message (system, user, assistant, tool results). */
export function messageTexts(context: TranscriptContext): string[] {
	return context.messages.map((m) => {
		const c = (m as Loose).content;
		return typeof c === "string" ? c : Array.isArray(c) ? c.map(blockText).join("\n") : "";
	});
}

interface ToolAnswer {
	id: string;
	isError: boolean;
	text: string;
}

/**
 * The tool results answering the previous assistant message: every tool result after the last
 * assistant message (a commit receipt or notice may follow them).
 */
function trailingToolResults(context: TranscriptContext): ToolAnswer[] {
	const out: ToolAnswer[] = [];
	for (let i = context.messages.length - 1; i >= 0; i--) {
		const m = context.messages[i] as Loose;
		if (m.role === "assistant") break;
		if (m.role !== "toolResult") continue;
		const c = m.content;
		const text = Array.isArray(c) ? c.map(blockText).join("\n") : typeof c === "string" ? c : "";
		out.unshift({ id: String(m.toolCallId), isError: m.isError === true, text });
	}
	return out;
}

const FOLD_ID = /\bf[0-9a-f]{10}\b/g;
const STAGE_OR_FOLD = /\bf[0-9a-f]{10}\b|\bStage (\d+):/g;
const PEEK_HEAD = /\[pi-fold peek (f[0-9a-f]{10})\]/;
const PEEK_GOES_ON = /^next: \{"action":"peek".*"offset":(\d+)/m;
const TREE_LINE = /^\s*(f[0-9a-f]{10}) (\S+) (\S+), \d+ entries/;
/** A refusal of "peek" itself: pi-fold's parser ("unknown action") or Pi's schema check ("expected one of"). */
const PEEK_UNKNOWN = /unknown action "peek"|action: expected one of/i;
const BUDGET_LINE = /^budget: (\d+) tokens/m;
/** pi-fold's default peek slice, in bytes. */
const PEEK_DEFAULT_BYTES = 8_000;

function idsIn(text: string): string[] {
	return [...new Set(text.match(FOLD_ID) ?? [])];
}

/**
 * Which stages the window ties to which fold: within one message, a "Stage k:" note belongs to the
 * nearest fold id before it (a brief's header precedes its notes; a peek's header, or its nested-fold
 * line, precedes the entries it shows).
 */
export function stagesByFold(texts: readonly string[]): Map<string, Set<number>> {
	const out = new Map<string, Set<number>>();
	for (const text of texts) {
		let fold: string | undefined;
		for (const m of text.matchAll(STAGE_OR_FOLD)) {
			if (m[1] === undefined) fold = m[0];
			else if (fold) (out.get(fold) ?? out.set(fold, new Set()).get(fold))?.add(Number(m[1]));
		}
	}
	return out;
}

interface TreeFold {
	id: string;
	kind: string;
	state: string;
}

/** The folds a `status` tree lists, in transcript order. */
function treeFolds(text: string): TreeFold[] {
	const out: TreeFold[] = [];
	for (const line of text.split("\n")) {
		const m = TREE_LINE.exec(line);
		if (m) out.push({ id: m[1], kind: m[2], state: m[3] });
	}
	return out;
}

// ---- the scripted agent ----

export interface RecallOptions {
	values: readonly PlantedValue[];
	/** true when the arm has pi-fold's tool; false: answer from the window only */
	foldTool: boolean;
	/** answers a compaction summary request (the workload's own step, so both phases answer alike) */
	summary: FauxResponseStep;
	/** bytes of each fold's head read to learn which stage it starts at */
	probeBytes?: number;
	/** at most this many full peeks in one assistant message */
	peeksPerTurn?: number;
	/**
	 * Share of the serving budget (as `status` states it) one turn's peeks may bring back, in all: a
	 * peek that pushes the window past pi-fold's commit threshold is folded again at that turn's end,
	 * before it is read. Default 0.2.
	 */
	peekShare?: number;
	/** give up after this many peek calls in all (probes included) */
	maxPeeks?: number;
}

export interface RecallAgent {
	steps(count: number): FauxResponseStep[];
	/** per value, once the agent has answered (before: every outcome still "lost") */
	report(): ValueReport[];
	/** summary requests answered by this agent */
	summaries(): number;
	/** pi_fold_context calls made: status, probes (head-only peeks) and peeks */
	calls(): { status: number; probes: number; peeks: number };
}

export function recallAgent(opts: RecallOptions): RecallAgent {
	const probeBytes = opts.probeBytes ?? 320;
	const peeksPerTurn = opts.peeksPerTurn ?? 4;
	const maxPeeks = opts.maxPeeks ?? 160;
	const peekShare = opts.peekShare ?? 0.2;
	/** What the agent has learnt so far: the stages each fold holds (it remembers what it read). */
	const known = new Map<string, Set<number>>();
	/** The serving budget in tokens, from the status answer. */
	let budget: number | undefined;
	const outcome = new Map<string, ValueReport>(opts.values.map((v) => [v.value, { ...v, outcome: "lost" }]));
	const pending = new Set<string>();
	/** how far each fold has been read: the next offset, or "end" */
	const progress = new Map<string, number | "end">();
	/** the peek calls of the previous assistant message: call id -> fold id */
	let inFlight = new Map<string, string>();
	let tree: TreeFold[] | undefined;
	let treeAsked = false;
	let probed = false;
	let peekWorked = false;
	let first = true;
	let done = false;
	let turn = 0;
	let summaries = 0;
	const counts = { status: 0, probes: 0, peeks: 0 };

	const finish = (): AssistantMessage => {
		done = true;
		const lines = opts.values.map((v) => {
			const r = outcome.get(v.value);
			const known = r?.outcome === "visible" || r?.outcome === "recovered";
			return `${v.stage}: ${known ? v.value : "(not recoverable from my context)"}`;
		});
		return fauxAssistantMessage(fauxText(lines.join("\n")));
	};
	const giveUp = (why: ValueOutcome): AssistantMessage => {
		for (const v of pending) {
			const r = outcome.get(v);
			if (r) r.outcome = why;
		}
		pending.clear();
		return finish();
	};
	const toolUse = (calls: { args: Record<string, string | number>; fold?: string }[]) => {
		inFlight = new Map();
		const blocks = calls.map(({ args, fold }, k) => {
			const c = fauxToolCall(FOLD_TOOL, args, { id: `recall${turn}c${k}` });
			if (fold) inFlight.set(c.id, fold);
			return c;
		});
		return fauxAssistantMessage(blocks, { stopReason: "toolUse" });
	};

	/** Read what the previous calls brought back: recovered values, how far each fold was read, the tree. */
	const absorb = (context: TranscriptContext, all: string): AssistantMessage | undefined => {
		const answers = trailingToolResults(context);
		for (const v of [...pending]) {
			// Only this agent's calls added text since the question: a value now present came back through them.
			if (!all.includes(v)) continue;
			const r = outcome.get(v);
			if (r) {
				r.outcome = "recovered";
				const carrier = answers.find((a) => a.text.includes(v));
				if (carrier) r.via = inFlight.get(carrier.id);
			}
			pending.delete(v);
		}
		const peeks = answers.filter((a) => inFlight.has(a.id));
		for (const a of peeks) {
			const id = PEEK_HEAD.exec(a.text)?.[1] ?? inFlight.get(a.id) ?? "";
			if (a.isError) {
				progress.set(id, "end");
				continue;
			}
			peekWorked = true;
			const on = PEEK_GOES_ON.exec(a.text);
			progress.set(id, on ? Number(on[1]) : "end");
		}
		// The first peeks all refused as an unknown action: this build has no peek.
		if (!peekWorked && peeks.length > 0 && peeks.every((a) => a.isError && PEEK_UNKNOWN.test(a.text))) {
			return giveUp("lost (peek unavailable)");
		}
		if (treeAsked && tree === undefined) {
			const answer = answers.find((a) => !inFlight.has(a.id));
			const b = answer ? BUDGET_LINE.exec(answer.text) : null;
			if (b) budget = Number(b[1]);
			// Refused (no tree in this build): the fold ids the window shows stand in for it.
			tree =
				answer && !answer.isError && treeFolds(answer.text).length > 0
					? treeFolds(answer.text)
					: idsIn(all).map((id) => ({ id, kind: "?", state: "?" }));
		}
		return undefined;
	};

	/** The fold to read next for a value at `stage`, and from where. */
	const targetFor = (stage: number, byFold: Map<string, Set<number>>): { id: string; offset: number } | undefined => {
		const readable = (id: string) => progress.get(id) !== "end";
		const from = (id: string) => ({ id, offset: (progress.get(id) as number | undefined) ?? 0 });
		// A fold the window already ties to this stage.
		for (const [id, stages] of byFold) if (stages.has(stage) && readable(id)) return from(id);
		// Else the innermost folds in transcript order: the last one starting at or before the stage.
		let best: { id: string; start: number } | undefined;
		for (const f of tree ?? []) {
			const stages = byFold.get(f.id);
			if (!stages || f.kind === "consolidation" || f.kind === "peek") continue;
			const start = Math.min(...stages);
			if (start <= stage && (!best || start > best.start)) best = { id: f.id, start };
		}
		return best && readable(best.id) ? from(best.id) : undefined;
	};

	const step: FauxResponseStep = (context, options, state, model) => {
		if (isSummaryRequest(context)) {
			summaries++;
			return typeof opts.summary === "function" ? opts.summary(context, options, state, model) : opts.summary;
		}
		if (done) return fauxAssistantMessage([], { stopReason: "error", errorMessage: "recall agent already answered" });
		turn++;
		const texts = messageTexts(context);
		const all = texts.join("\n\n");
		if (first) {
			first = false;
			for (const v of opts.values) {
				const r = outcome.get(v.value);
				if (!r) continue;
				if (all.includes(v.value)) r.outcome = "visible";
				else pending.add(v.value);
			}
		} else {
			const ended = absorb(context, all);
			if (ended) return ended;
		}
		if (pending.size === 0) return finish();
		if (!opts.foldTool) return giveUp("lost");
		if (!treeAsked) {
			treeAsked = true;
			counts.status++;
			return toolUse([{ args: { action: "status", detail: "tree" } }]);
		}
		const used = counts.probes + counts.peeks;
		if (used >= maxPeeks) return giveUp("lost");
		for (const [id, set] of stagesByFold(texts))
			for (const st of set) (known.get(id) ?? known.set(id, new Set()).get(id))?.add(st);
		const byFold = known;
		const stages = opts.values.filter((v) => pending.has(v.value)).map((v) => v.stage);
		if (!probed && stages.some((s) => ![...byFold.values()].some((set) => set.has(s)))) {
			// Skim: the head of every committed fold that is not an index of others says which stage it starts at.
			probed = true;
			const heads = (tree ?? [])
				.filter((f) => f.kind !== "consolidation" && f.kind !== "peek" && f.state !== "pending")
				.filter((f) => !byFold.has(f.id))
				.slice(0, maxPeeks - used);
			if (heads.length > 0) {
				counts.probes += heads.length;
				return toolUse(heads.map((f) => ({ args: { action: "peek", id: f.id, bytes: probeBytes }, fold: f.id })));
			}
		}
		const targets = new Map<string, { id: string; offset: number }>();
		for (const s of stages) {
			const t = targetFor(s, byFold);
			if (t) targets.set(`${t.id}@${t.offset}`, t);
		}
		// Roughly 4 bytes a token: the turn's slices together stay within peekShare of the budget.
		const allowance = budget ? Math.floor(budget * 4 * peekShare) : PEEK_DEFAULT_BYTES;
		const fit = Math.max(1, Math.floor(allowance / 4000));
		const next = [...targets.values()].slice(0, Math.min(peeksPerTurn, fit, maxPeeks - used));
		if (next.length === 0) return giveUp("lost");
		const bytes = Math.min(PEEK_DEFAULT_BYTES, Math.floor(allowance / next.length));
		counts.peeks += next.length;
		return toolUse(
			next.map((t) => {
				const args: Record<string, string | number> = { action: "peek", id: t.id };
				if (t.offset > 0) args.offset = t.offset;
				if (bytes < PEEK_DEFAULT_BYTES) args.bytes = bytes;
				return { args, fold: t.id };
			}),
		);
	};

	return {
		steps: (count) => Array.from({ length: count }, () => step),
		report: () => opts.values.map((v) => outcome.get(v.value) ?? { ...v, outcome: "lost" }),
		summaries: () => summaries,
		calls: () => ({ ...counts }),
	};
}
