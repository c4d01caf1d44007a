// The session benchmark's planted values and the scripted agent that is asked for them at the end.
//
// Eight seeded values are printed in the middle of a bash output (a log; see the workload's `plant`)
// at stages spread over the run; the command that printed them does not name them. After the last
// stage one user message asks for all of them, naming the stages. The scripted agent (a faux response
// function) knows only what a model would: the text of each request (the window: raw messages, briefs
// and their index lines), and the answers of its own pi_fold_context calls. It never reads the plan:
// - it reads the question for the words it uses ("check value") and the stages it names;
// - a line of the window holding those words and a stage gives that stage's value: "visible";
// - with search, it searches for the question's words and reads the matching lines (page after page);
// - without search (or for what search did not find), it reads the index: the fold whose index line
//   names the stage, a consolidation's contents (peek from the start: children with their stages and
//   offsets) down to the tool batch, that batch's contents (its entries with offsets), and then each
//   bash result of that stage, peeked at its offset for its length, until a line with the words;
// - what it found after calls is "recovered" (with the calls made and the tokens they added by then);
//   what it could not find is "lost". Its final answer lists what it found; the bench checks it.
// Summary requests (Pi's compaction) are answered wherever they occur, by the workload's own step.
//
// It reads as a careful model would, never worse: it knows the words to look for, misreads nothing
// and always takes the next right step, so its recall is an upper bound for a model (RECALL_CAVEAT).
// It leans on meaning, not on this project's phrasing: the question may be worded in several ways,
// the planted line's separator and case may change, and the tool's answers are read by what they
// carry (a line with the words and a stage, a `next` call, `@offset +bytes` items, an entry's role).
import { createHash } from "node:crypto";
import {
	type AssistantMessage,
	type FauxResponseStep,
	fauxAssistantMessage,
	fauxText,
	fauxToolCall,
	type TranscriptContext,
} from "@earendil-works/pi-ai";
import { isSummaryRequest } from "../../harness/workload.ts";
import { FOLD_TOOL_NAME } from "../../src/vocabulary.ts";

export interface PlantedValue {
	stage: number;
	value: string;
}

type ValueOutcome = "visible" | "recovered" | "lost";

export interface ValueReport extends PlantedValue {
	outcome: ValueOutcome;
	/** recovered: pi_fold_context calls made, and tokens their answers added, when it was found */
	calls?: number;
	tokens?: number;
	/** recovered: how (the search, or the fold whose peek carried it) */
	via?: string;
	/** what the agent answered for this stage when it was not the value (a wrong answer counts as lost) */
	answered?: string;
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

/** What the bench says beside the recall figures. */
export const RECALL_CAVEAT =
	"The recall agent is scripted: it knows the words to look for and never misreads an answer, so these " +
	"figures are an upper bound for a model reading the same window and answers.";

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

/** A message's content as text: a string as it is, blocks one per line. */
function contentText(c: unknown): string {
	return typeof c === "string" ? c : Array.isArray(c) ? c.map(blockText).join("\n") : "";
}

/** Everything a request shows the model, one string per message (system, user, assistant, tool results). */
export function messageTexts(context: TranscriptContext): string[] {
	return context.messages.map((m) => contentText((m as Loose).content));
}

interface ToolAnswer {
	id: string;
	isError: boolean;
	text: string;
}

/** The tool results after the last assistant message (a commit receipt or notice may follow them). */
function trailingToolResults(context: TranscriptContext): ToolAnswer[] {
	const out: ToolAnswer[] = [];
	for (let i = context.messages.length - 1; i >= 0; i--) {
		const m = context.messages[i] as Loose;
		if (m.role === "assistant") break;
		if (m.role !== "toolResult") continue;
		out.unshift({ id: String(m.toolCallId), isError: m.isError === true, text: contentText(m.content) });
	}
	return out;
}

/** The thing asked for, however the sentence is built: "a check value was printed", "bash printed a check value". */
const ASKED_FOR = [
	/\b(?:a|an|the|one|each)\s+([a-z][a-z -]*?)\s+(?:was|were|is|got|has been|had been)\s+(?:\w+\s+)?(?:printed|logged|shown|written|output|emitted|reported)\b/i,
	/\b(?:printed|logged|showed|shown|wrote|output|emitted|reported)\s+(?:a|an|the|one)\s+([a-z][a-z -]*?)(?=\s+(?:at|in|on|for|during|when|each|every)\b|[,.;:]|$)/i,
	/["`'“]([a-z][a-z -]*[a-z])["`'”]/i,
];

/** The question's words for what is asked, and the stages it names. */
export function readQuestion(text: string): { words: string; stages: number[] } | undefined {
	// The phrase after its last article: "the survey a check value" asks for a "check value".
	const phrase = ASKED_FOR.map((re) => re.exec(text)?.[1]).find((w) => w !== undefined);
	const words = phrase?.split(/\s+(?:a|an|the|one|each)\s+/i).at(-1);
	const lists = [...text.matchAll(/\bstages?\b\D{0,24}?(\d+(?:\s*(?:,|and|&|;)?\s*\d+)*)/gi)];
	const stages = [...new Set(lists.flatMap((m) => (m[1].match(/\d+/g) ?? []).map(Number)))];
	if (!words || stages.length === 0) return undefined;
	return { words: words.trim(), stages };
}

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The words as a pattern that allows other spacing, hyphens or underscores between them, any case. */
function wordsPattern(words: string): string {
	return words
		.trim()
		.split(/[\s_-]+/)
		.map(escapeRe)
		.join("[\\s_-]*");
}

/** A stage named on a line: "stage 12", "[Stage 12]", "stage #12", "stage: 12". */
const STAGE_ON_LINE = /\bstage\s*[#:=]?\s*(\d+)\b/i;

/** Lines holding the words: the stage each names and the token right after the words. */
export function valuesIn(text: string, words: string): Map<number, string> {
	const out = new Map<number, string>();
	const re = new RegExp(`${wordsPattern(words)}\\s*(?:[:=]|->|\\bis\\b|\\bwas\\b)?\\s*([^\\s"'\`,;]+)`, "i");
	for (const line of text.split("\n")) {
		const m = re.exec(line);
		const stage = STAGE_ON_LINE.exec(line);
		const value = m?.[1].replace(/[.)\]}>]+$/, "");
		if (value && stage && !out.has(Number(stage[1]))) out.set(Number(stage[1]), value);
	}
	return out;
}

const STAGE_OR_FOLD = /\bf[0-9a-f]{10}\b|\bstage\s*[#:=]?\s*(\d+)\b/gi;

/**
 * The stages the text ties to each fold: within one message, a "Stage k" belongs to the nearest
 * fold id before it (a brief's header precedes its notes; an index line names its child first,
 * then the child's first and last notes; a peek's header or nested-fold line precedes its entries).
 */
export function stagesByFold(texts: readonly string[]): Map<string, Set<number>> {
	const out = new Map<string, Set<number>>();
	for (const text of texts) {
		let fold: string | undefined;
		for (const m of text.matchAll(STAGE_OR_FOLD)) {
			if (m[1] === undefined) fold = m[0];
			else if (fold) {
				let set = out.get(fold);
				if (!set) {
					set = new Set();
					out.set(fold, set);
				}
				set.add(Number(m[1]));
			}
		}
	}
	return out;
}

/** One line of a peek's contents: where an item starts in the fold's text view, and what it is. */
interface ContentsItem {
	offset: number;
	bytes: number;
	text: string;
}

function contentsOf(text: string): ContentsItem[] {
	const out: ContentsItem[] = [];
	for (const line of text.split("\n")) {
		const m = /^\s*@\s*(\d+)\s*\+\s*(\d+)\s+(.*)$/.exec(line);
		if (m) out.push({ offset: Number(m[1]), bytes: Number(m[2]), text: m[3] });
	}
	return out;
}

/** The role an entry line of a peek's contents names first (assistant, toolResult, user), if any. */
function roleOf(text: string): "assistant" | "toolResult" | "user" | undefined {
	const m = /\b(assistant|tool ?result|user)\b/i.exec(text);
	if (!m) return undefined;
	const r = m[1].toLowerCase().replace(" ", "");
	return r === "toolresult" ? "toolResult" : (r as "assistant" | "user");
}

/** The call a paged answer offers for its next page: a JSON object on a line led by "next". */
function nextCall(text: string): ToolArgs | undefined {
	const m = /^\s*next\b[^{\n]*(\{.*\})\s*$/im.exec(text);
	if (!m) return undefined;
	try {
		return JSON.parse(m[1]) as ToolArgs;
	} catch {
		return undefined;
	}
}

// ---- the scripted agent ----

type ToolArgs = Parameters<typeof fauxToolCall>[1];

interface RecallOptions {
	values: readonly PlantedValue[];
	/** true when the arm has pi-fold's tool; false: answer from the window only */
	foldTool: boolean;
	/** false: the agent does not use search (the index and peek only) */
	search?: boolean;
	/** answers a compaction summary request (the workload's own step, so both phases answer alike) */
	summary: FauxResponseStep;
	/** give up after this many pi_fold_context calls (default 40) */
	maxCalls?: number;
}

export interface RecallAgent {
	steps(count: number): FauxResponseStep[];
	/** per value, once the agent has answered (before: every outcome "lost") */
	report(): ValueReport[];
	/** summary requests answered by this agent */
	summaries(): number;
	/** pi_fold_context calls made, and tokens their answers added to the window (characters / 4) */
	calls(): { search: number; peek: number; tokens: number };
}

interface Goal {
	stage: number;
	/** folds already read for it, from the start */
	opened: Set<string>;
	/** bash results of its stage still to read: fold, offset, bytes */
	results: { fold: string; offset: number; bytes: number }[];
	read: Set<string>;
}

type Call = { args: ToolArgs; kind: "search" | "peek"; fold?: string; contents?: boolean };

/** The agent's state over the recall phase: what it was asked, what it learnt, what it found. */
class RecallRun {
	readonly maxCalls: number;
	readonly useSearch: boolean;
	readonly found = new Map<number, { value: string; calls: number; tokens: number; via?: string }>();
	question: { words: string; stages: number[] } | undefined;
	answer: Map<number, string> | undefined;
	first = true;
	done = false;
	turn = 0;
	summaries = 0;
	readonly counts = { search: 0, peek: 0, tokens: 0 };
	/** The calls of the previous assistant message: id -> what it was for. */
	inFlight = new Map<string, Call>();
	/** What the agent learnt from the window and its reading: the stages each fold holds. */
	readonly known = new Map<string, Set<number>>();
	/** Contents of folds it has read from the start. */
	readonly contents = new Map<string, ContentsItem[]>();
	readonly goals = new Map<number, Goal>();
	searched = false;
	nextSearch: ToolArgs | undefined;

	readonly opts: RecallOptions;

	constructor(opts: RecallOptions) {
		this.opts = opts;
		this.maxCalls = opts.maxCalls ?? 40;
		this.useSearch = opts.search !== false;
	}

	missing(): number[] {
		return (this.question?.stages ?? []).filter((s) => !this.found.has(s));
	}

	calls(): number {
		return this.counts.search + this.counts.peek;
	}

	learn(byFold: Map<string, Set<number>>): void {
		for (const [id, set] of byFold) {
			let mine = this.known.get(id);
			if (!mine) {
				mine = new Set();
				this.known.set(id, mine);
			}
			for (const s of set) mine.add(s);
		}
	}

	note(values: Map<number, string>, via?: string): void {
		for (const [stage, value] of values) {
			if (!this.question?.stages.includes(stage) || this.found.has(stage)) continue;
			this.found.set(stage, { value, calls: this.calls(), tokens: this.counts.tokens, ...(via ? { via } : {}) });
		}
	}

	finish(): AssistantMessage {
		this.done = true;
		this.answer = new Map([...this.found].map(([s, f]) => [s, f.value]));
		const lines = (this.question?.stages ?? []).map(
			(s) => `${s}: ${this.found.get(s)?.value ?? "(not recoverable from my context)"}`,
		);
		return fauxAssistantMessage(fauxText(lines.join("\n")));
	}

	toolUse(list: readonly Call[]): AssistantMessage {
		this.inFlight = new Map();
		const blocks = list.map((c, k) => {
			const call = fauxToolCall(FOLD_TOOL_NAME, c.args, { id: `recall${this.turn}c${k}` });
			this.inFlight.set(call.id, c);
			this.counts[c.kind]++;
			return call;
		});
		return fauxAssistantMessage(blocks, { stopReason: "toolUse" });
	}

	/** Read the answers to the previous calls: values, stages of folds, contents, the next search page. */
	absorb(context: TranscriptContext): void {
		if (!this.question) return;
		for (const a of trailingToolResults(context)) {
			const c = this.inFlight.get(a.id);
			if (!c) continue;
			this.counts.tokens += Math.ceil(a.text.length / 4);
			if (a.isError) continue;
			if (c.kind === "search") this.absorbSearch(a.text, this.question.words);
			else this.absorbPeek(a.text, this.question.words, c);
		}
	}

	/** A search page: the lines that name a stage and the words anywhere in it, and the call for the next page. */
	absorbSearch(text: string, words: string): void {
		this.note(valuesIn(text, words), "search");
		this.nextSearch = nextCall(text);
	}

	absorbPeek(text: string, words: string, c: Call): void {
		this.note(valuesIn(text, words), c.fold);
		this.learn(stagesByFold([text]));
		if (!c.contents || !c.fold) return;
		const items = contentsOf(text);
		this.contents.set(c.fold, items);
		// Children named with their stages; a batch's entries: each stage's bash results, in order.
		this.learn(stagesByFold(items.map((i) => i.text)));
		let stage: number | undefined;
		for (const item of items) {
			const role = roleOf(item.text);
			if (role === "assistant") {
				const s = STAGE_ON_LINE.exec(item.text);
				stage = s ? Number(s[1]) : undefined;
			} else if (stage !== undefined && role === "toolResult" && /\bbash\b/i.test(item.text)) {
				this.goals.get(stage)?.results.push({ fold: c.fold, offset: item.offset, bytes: item.bytes });
			}
		}
	}

	/** The next peek for a stage: a bash result of it to read, or the narrowest fold that holds it. */
	nextFor(goal: Goal): { args: ToolArgs; fold: string; contents: boolean } | undefined {
		const r = goal.results.find((x) => !goal.read.has(`${x.fold}@${x.offset}`));
		if (r) {
			goal.read.add(`${r.fold}@${r.offset}`);
			return {
				args: { action: "peek", id: r.fold, offset: r.offset, bytes: Math.max(1, r.bytes) },
				fold: r.fold,
				contents: false,
			};
		}
		const pick = this.narrowestHolding(goal) ?? this.between(goal);
		if (!pick) return undefined;
		goal.opened.add(pick);
		return { args: { action: "peek", id: pick }, fold: pick, contents: true };
	}

	/** Folds that name this stage exactly, else whose stage range holds it; the narrowest range first. */
	narrowestHolding(goal: Goal): string | undefined {
		let best: { id: string; span: number } | undefined;
		for (const [id, stages] of this.known) {
			if (goal.opened.has(id) || stages.size === 0) continue;
			const lo = Math.min(...stages);
			const hi = Math.max(...stages);
			if (goal.stage < lo || goal.stage > hi) continue;
			const span = stages.has(goal.stage) ? hi - lo : hi - lo + 1000;
			if (!best || span < best.span) best = { id, span };
		}
		return best?.id;
	}

	/**
	 * A child no line tied to a stage, lying in a fold's contents between the children that end
	 * before the stage and those that start after it (children are in transcript order).
	 */
	between(goal: Goal): string | undefined {
		const range = (id: string) => {
			const st = this.known.get(id);
			return st && st.size > 0 ? [Math.min(...st), Math.max(...st)] : undefined;
		};
		for (const [parent, items] of this.contents) {
			const kids = items.flatMap((i) => /^\s*(f[0-9a-f]{10})\b/.exec(i.text)?.[1] ?? []);
			const before = kids.findLastIndex((k) => (range(k)?.[1] ?? Number.POSITIVE_INFINITY) < goal.stage);
			const after = kids.findIndex((k, i) => i > before && (range(k)?.[0] ?? Number.NEGATIVE_INFINITY) > goal.stage);
			const candidates = kids.slice(before + 1, after < 0 ? kids.length : after);
			if (!this.known.get(parent)?.has(goal.stage) && !this.inRange(parent, goal.stage)) continue;
			const open = candidates.find((k) => !goal.opened.has(k) && !range(k));
			if (open) return open;
		}
		return undefined;
	}

	inRange(id: string, stage: number): boolean {
		const st = this.known.get(id);
		return st !== undefined && st.size > 0 && Math.min(...st) <= stage && stage <= Math.max(...st);
	}

	/** The first request: read the question, and what the window shows already. */
	begin(texts: readonly string[]): void {
		this.first = false;
		this.question = readQuestion(texts.at(-1) ?? "");
		if (!this.question) return;
		// The question itself names the words and stages but holds no value.
		this.note(valuesIn(texts.slice(0, -1).join("\n"), this.question.words));
		for (const s of this.missing()) this.goals.set(s, { stage: s, opened: new Set(), results: [], read: new Set() });
	}

	/** One peek per missing stage (none twice in a turn), within the call limit. */
	peeks(): Call[] {
		const list: Call[] = [];
		const asked = new Set<string>();
		for (const s of this.missing()) {
			if (this.calls() + list.length >= this.maxCalls) break;
			const goal = this.goals.get(s);
			const n = goal && this.nextFor(goal);
			if (!n) continue;
			const key = JSON.stringify(n.args);
			if (asked.has(key)) continue; // another stage's peek reads the same thing this turn
			asked.add(key);
			list.push({ ...n, kind: "peek" });
		}
		return list;
	}

	/** The agent's answer to one request of the recall phase. */
	respond(context: TranscriptContext): AssistantMessage {
		if (this.done) {
			return fauxAssistantMessage([], { stopReason: "error", errorMessage: "recall agent already answered" });
		}
		this.turn++;
		const texts = messageTexts(context);
		if (this.first) this.begin(texts);
		else this.absorb(context);
		const question = this.question;
		if (!question || this.missing().length === 0 || !this.opts.foldTool || this.calls() >= this.maxCalls) {
			return this.finish();
		}
		this.learn(stagesByFold(texts));
		if (this.useSearch && (!this.searched || this.nextSearch)) {
			const args: ToolArgs = this.nextSearch ?? { action: "search", query: question.words, limit: 30 };
			this.searched = true;
			this.nextSearch = undefined;
			return this.toolUse([{ args, kind: "search" }]);
		}
		const list = this.peeks();
		return list.length > 0 ? this.toolUse(list) : this.finish();
	}

	report(): ValueReport[] {
		return this.opts.values.map((v): ValueReport => {
			const f = this.found.get(v.stage);
			const said = this.answer?.get(v.stage);
			if (!f || said !== v.value) return { ...v, outcome: "lost", ...(said ? { answered: said } : {}) };
			if (f.calls === 0) return { ...v, outcome: "visible" };
			return { ...v, outcome: "recovered", calls: f.calls, tokens: f.tokens, ...(f.via ? { via: f.via } : {}) };
		});
	}
}

export function recallAgent(opts: RecallOptions): RecallAgent {
	const run = new RecallRun(opts);
	const step: FauxResponseStep = (context, options, state, model) => {
		if (!isSummaryRequest(context)) return run.respond(context);
		run.summaries++;
		return typeof opts.summary === "function" ? opts.summary(context, options, state, model) : opts.summary;
	};
	return {
		steps: (count) => Array.from({ length: count }, () => step),
		report: () => run.report(),
		summaries: () => run.summaries,
		calls: () => ({ ...run.counts }),
	};
}
