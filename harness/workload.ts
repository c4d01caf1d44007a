// A scripted, reusable workload for the runtime's end-to-end tests and benchmark: one user message,
// then one long agentic turn of many stages. Each stage is one assistant message (a short note plus
// 2-4 real read/bash/ls calls) over a real code base, Pi's own dist/ (several MB of JS installed as
// a devDependency), so tool results have realistic sizes and contents. Everything is derived from a
// seed: the same arguments give the same calls, ids and (over the same install) the same results.
import { createHash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import {
	type AssistantMessage,
	type FauxResponseStep,
	fauxAssistantMessage,
	fauxText,
	fauxToolCall,
	type TranscriptContext,
} from "@earendil-works/pi-ai";
import type { ReferBacks } from "./refer-back.ts";
import { rng } from "./reference/gen.ts";

/** The code base the workload explores; use it as the session's cwd. */
export const WORKLOAD_ROOT = fileURLToPath(
	new URL("../node_modules/@earendil-works/pi-coding-agent/dist", import.meta.url),
);

export const WORKLOAD_PROMPT = "Survey this package's source: read through its modules stage by stage and take notes.";
/** How the workload's final answer begins: a run that shows it went through every stage. */
export const WORKLOAD_DONE = "Done: surveyed the package";
/** What the person says to go on after a pause (see WorkloadOptions.pauseEvery). */
export const CONTINUE_PROMPT = "Continue the survey where you stopped.";

export interface WorkloadOptions {
	/** Seed for the choice of files, offsets and tools (default 1). */
	seed?: number;
	/**
	 * A string stage k's tool results must contain, or undefined: an extra `bash` call prints a log
	 * with it on one line in the middle (`[stage k] check value: …`); the command only names the file.
	 */
	plant?: (stage: number) => string | undefined;
	/** 0-based index, among workload requests (summary requests not counted), answered with a context-overflow error. */
	overflowAt?: number;
	/** Size of the answer to a compaction summary request (default 1600 characters). */
	summaryChars?: number;
	/** The code base (default WORKLOAD_ROOT). */
	root?: string;
	/** Line counts a `read` call asks for, drawn uniformly in [min, max) (default 60-300). */
	readLines?: { min: number; max: number };
	/**
	 * End the agent's run after every this many stages with a short answer, so the stages are spread
	 * over several prompts (default: one prompt for all of them).
	 */
	pauseEvery?: number;
	/**
	 * Stages that must quote a value an earlier stage printed (see refer-back.ts): each gets it from
	 * the window, or looks it up first. The outcomes go to `referBacks.log`.
	 */
	referBacks?: ReferBacks;
	/** Put before every tool call id, so that several runs in one session keep ids unique (default ""). */
	idPrefix?: string;
	/** Tool calls per stage, times this (default 1: 2-4 calls a stage): how much tool output a stage brings. */
	outputScale?: number;
	/**
	 * Refuse a request whose prompt passes this many tokens (the faux provider's count) with a context
	 * overflow error, as a real provider refuses one past its window; default: take any size.
	 */
	windowLimit?: number;
}

interface PlannedCall {
	id: string;
	name: "read" | "bash" | "ls";
	args: Parameters<typeof fauxToolCall>[1];
}

interface StagePlan {
	stage: number;
	note: string;
	calls: PlannedCall[];
}

const MAX_READ_LINES = 300;
const MIN_READ_LINES = 60;

interface CodeBase {
	files: { path: string; lines: number }[];
	dirs: string[];
}

const codeBases = new Map<string, CodeBase>();

/** Source files (.js, .d.ts; no maps, no bundle) with line counts, and directories, sorted. */
function codeBase(root: string): CodeBase {
	const known = codeBases.get(root);
	if (known) return known;
	const files: CodeBase["files"] = [];
	const dirs: string[] = ["."];
	const walk = (dir: string): void => {
		for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
			const full = join(dir, e.name);
			if (e.isDirectory()) {
				if (e.name === "bundle") continue;
				dirs.push(relative(root, full));
				walk(full);
			} else if (/\.(js|d\.ts)$/.test(e.name)) {
				files.push({ path: relative(root, full), lines: readFileSync(full, "utf8").split("\n").length });
			}
		}
	};
	walk(root);
	if (files.length === 0) throw new Error(`workload: no source files under ${root}`);
	const made = { files, dirs };
	codeBases.set(root, made);
	return made;
}

/** Where plant logs are written: contents depend only on stage and value, so runs that share it agree. */
const PLANT_DIR = join(tmpdir(), "pi-fold-workload-plants");

/** The text of stage `stage`'s plant log: some 60 audit lines, `value` on the one in the middle. */
export function plantLogText(stage: number, value: string): string {
	const next = rng(createHash("sha256").update(`${stage}\0${value}`).digest().readUInt32LE(0)).next;
	const lines: string[] = [];
	for (let j = 1; j <= 61; j++) {
		if (j === 31) lines.push(`[stage ${stage}] check value: ${value}`);
		else {
			const bytes = 1000 + Math.floor(next() * 90_000);
			lines.push(
				`[stage ${stage}] audit ${j}/61: block ${Math.floor(next() * 1e6).toString(16)} ok, ${bytes} bytes scanned`,
			);
		}
	}
	return `${lines.join("\n")}\n`;
}

/** Write stage `stage`'s plant log (once; atomically) and return its path. */
export function plantLog(stage: number, value: string, dir = PLANT_DIR): string {
	const text = plantLogText(stage, value);
	const name = `stage-${stage}-${createHash("sha256").update(text).digest("hex").slice(0, 12)}.log`;
	const path = join(dir, name);
	mkdirSync(dir, { recursive: true });
	const temp = `${path}.${process.pid}.tmp`;
	writeFileSync(temp, text);
	renameSync(temp, path);
	return path;
}

/** The calls of every stage, deterministic for (stages, seed, root). */
export function workloadPlan(stages: number, opts: WorkloadOptions = {}): StagePlan[] {
	const base = codeBase(opts.root ?? WORKLOAD_ROOT);
	const next = rng(opts.seed ?? 1).next;
	const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)];
	const minLines = opts.readLines?.min ?? MIN_READ_LINES;
	const maxLines = opts.readLines?.max ?? MAX_READ_LINES;
	if (!(Number.isSafeInteger(minLines) && minLines > 0 && Number.isSafeInteger(maxLines) && maxLines > minLines)) {
		throw new Error(`workload: readLines must be whole numbers with 0 < min < max, got ${minLines}-${maxLines}`);
	}
	const plans: StagePlan[] = [];
	const scale = opts.outputScale ?? 1;
	if (!(Number.isSafeInteger(scale) && scale >= 1))
		throw new Error(`workload: outputScale must be a whole number >= 1, got ${scale}`);
	for (let stage = 0; stage < stages; stage++) {
		const count = (2 + Math.floor(next() * 3)) * scale;
		const calls: PlannedCall[] = [];
		for (let j = 0; j < count; j++) {
			const id = `${opts.idPrefix ?? ""}s${stage}c${j}`;
			const roll = j === 0 ? 0 : next(); // every stage reads at least one file
			const file = pick(base.files);
			if (roll < 0.6) {
				const limit = minLines + Math.floor(next() * (maxLines - minLines));
				const offset = file.lines > limit ? 1 + Math.floor(next() * (file.lines - limit)) : undefined;
				calls.push({ id, name: "read", args: { path: file.path, ...(offset ? { offset } : {}), limit } });
			} else if (roll < 0.8) {
				calls.push({ id, name: "bash", args: { command: `grep -n "export" ${file.path} | head -n 40` } });
			} else {
				calls.push({ id, name: "ls", args: { path: pick(base.dirs) } });
			}
		}
		const planted = opts.plant?.(stage);
		if (planted !== undefined) {
			const call: PlannedCall = {
				id: `${opts.idPrefix ?? ""}s${stage}p`,
				name: "bash",
				args: { command: `cat ${plantLog(stage, planted)}` },
			};
			if (calls.length === 4) calls[3] = call;
			else calls.push(call);
		}
		const first = calls[0].args.path as string;
		plans.push({
			stage,
			note: `Stage ${stage}: looking at ${first} and ${calls.length - 1} more place(s).`,
			calls,
		});
	}
	return plans;
}

/** Pi's compaction (and branch) summary request: summarisation system prompt, one user message. */
export function isSummaryRequest(context: TranscriptContext): boolean {
	const first = context.messages[0] as { role?: string; content?: unknown } | undefined;
	if (first?.role !== "system") return false;
	const c = first.content;
	const text =
		typeof c === "string" ? c : Array.isArray(c) ? c.map((b) => (b as { text?: string }).text ?? "").join("") : "";
	return text.startsWith("You are a context summarization assistant");
}

/** What a provider answers when the request does not fit (pi-ai classifies it as a context overflow). */
function overflowReply(tokens = 210_000, maximum = 200_000): AssistantMessage {
	return fauxAssistantMessage([], {
		stopReason: "error",
		errorMessage: `prompt is too long: ${tokens} tokens > ${maximum} maximum`,
	});
}

/** The text the faux provider bills a message by (one text per message, as its usage counts it). */
function billedText(m: TranscriptContext["messages"][number]): string {
	const blocks = (c: unknown): string =>
		typeof c === "string"
			? c
			: Array.isArray(c)
				? c
						.map((b: { type?: string; text?: string; thinking?: string; name?: string; arguments?: unknown }) =>
							b.type === "text"
								? (b.text ?? "")
								: b.type === "thinking"
									? (b.thinking ?? "")
									: `${b.name}:${JSON.stringify(b.arguments)}`,
						)
						.join("\n")
				: "";
	const x = m as { role: string; content?: unknown; toolName?: string; toolsAdded?: unknown[] };
	if (x.role === "toolResult") return [x.toolName ?? "", blocks(x.content)].join("\n");
	if (x.role === "system")
		return [blocks(x.content), ...(x.toolsAdded ?? []).map((t) => `tool+:${JSON.stringify(t)}`)].join("\n");
	return blocks(x.content);
}

/** The prompt tokens the faux provider counts for a request: its messages' texts joined, a token per 4 characters. */
export function fauxPromptTokens(context: Pick<TranscriptContext, "messages">): number {
	const texts = context.messages.map((m) => `${m.role}:${billedText(m)}`);
	return Math.ceil((texts.reduce((n, t) => n + t.length, 0) + 2 * Math.max(0, texts.length - 1)) / 4);
}

/** A structured summary of realistic size, as a compaction summariser would write it. */
function summaryText(chars: number): string {
	const head = "## Goal\nSurvey the package source stage by stage.\n\n## Progress\n";
	let body = "";
	for (let i = 0; head.length + body.length < chars; i++) {
		body += `- Stage ${i}: read modules, noted exports and their roles; no changes made.\n`;
	}
	return `${head}${body}\n## Next steps\nContinue with the remaining modules.`;
}

/**
 * The faux provider's script: stage messages in order, then a final answer. Summary requests are
 * answered wherever they occur (without consuming a stage), and `overflowAt` answers that request
 * with an overflow error (Pi then recovers; the stage it would have answered comes next).
 */
export function workloadSteps(stages: number, opts: WorkloadOptions = {}): FauxResponseStep[] {
	const every = opts.pauseEvery ?? 0;
	const plans = workloadPlan(stages, opts);
	// The stage each queued answer belongs to (a pause or the final answer: none).
	const stageOf = new Map<AssistantMessage, number>();
	const queue: AssistantMessage[] = plans.flatMap((p, i) => {
		const stage = fauxAssistantMessage(
			[fauxText(p.note), ...p.calls.map((c) => fauxToolCall(c.name, c.args, { id: c.id }))],
			{ stopReason: "toolUse" },
		);
		stageOf.set(stage, p.stage);
		const pause = every > 0 && (i + 1) % every === 0 && i + 1 < stages;
		return pause
			? [stage, fauxAssistantMessage(fauxText(`Surveyed ${i + 1} stages; waiting for the next instruction.`))]
			: [stage];
	});
	queue.push(fauxAssistantMessage(fauxText(`${WORKLOAD_DONE} in ${stages} stages.`)));
	const summary = summaryText(opts.summaryChars ?? 1600);
	let workRequests = 0;
	const step: FauxResponseStep = (context) => {
		if (isSummaryRequest(context)) return fauxAssistantMessage(fauxText(summary));
		if (opts.windowLimit !== undefined) {
			const tokens = fauxPromptTokens(context);
			if (tokens > opts.windowLimit) return overflowReply(tokens, opts.windowLimit);
		}
		const index = workRequests++;
		if (index === opts.overflowAt) return overflowReply();
		const upcoming = queue[0] && stageOf.get(queue[0]);
		const lookup = upcoming === undefined ? undefined : opts.referBacks?.before(upcoming, context, opts.idPrefix ?? "");
		if (lookup) return lookup;
		return queue.shift() ?? fauxAssistantMessage([], { stopReason: "error", errorMessage: "workload exhausted" });
	};
	// Spare steps for summary requests, the overflow retry and requests refused as too long.
	const lookups = opts.referBacks ? stages : 0;
	const refusals = opts.windowLimit !== undefined ? stages : 0;
	return Array.from(
		{ length: stages + 12 + lookups + refusals + (every > 0 ? Math.ceil(stages / every) : 0) },
		() => step,
	);
}
