// A synthetic long session, as pi-fold would have left it after thousands of stages: a Pi session
// file of tool-call stages over real source text, each stage marked, committed in batches by the
// runtime's own commit planner (briefs, selection, consolidation, the store writes, journal records
// and context_edit drafts), so a benchmark can open it in Pi with pi-fold and measure what one more
// request costs at that size. Written line by line, without Pi's SessionManager (whose appends walk
// the branch: quadratic at this size); Pi reads the file back as any session of its own.
//
// The context_edit entries are the commit's drafts less those that leave an entry showing what it
// shows already (Pi applies the latest edit of each entry): a consolidation rewrites only the
// entries whose visible content changes. That is the session shape the runtime aims for; a session
// holding every redundant edit would be several times larger at the same number of folds.
import { randomUUID } from "node:crypto";
import { appendFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { buildSessionProjection, CURRENT_SESSION_VERSION, type SessionEntry } from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import { rng } from "../../harness/reference/gen.ts";
import { WORKLOAD_ROOT, workloadPlan } from "../../harness/workload.ts";
import type { FoldLattice } from "../../src/lattice/index.ts";
import { FoldLattice as Lattice } from "../../src/lattice/index.ts";
import { foldsOf, planCommit } from "../../src/policy/commit-plan.ts";
import { DEFAULT_THRESHOLDS } from "../../src/policy/thresholds.ts";
import { commitOps } from "../../src/runtime/commit.ts";
import { type ContextEntries, contextEntriesOf } from "../../src/session/context-entries.ts";
import { persistFolds, type RecordIndex } from "../../src/session/persist.ts";
import { FoldStore } from "../../src/store/index.ts";
import { RECORD_TYPE } from "../../src/vocabulary.ts";

interface LongSessionOptions {
	/** The session directory (the file and its store go there). */
	dir: string;
	/** Stop once the lattice holds this many folds (the last chunk's marks, pending, included). */
	folds: number;
	/** Stages per commit (each stage is one tool batch, marked at once). */
	stagesPerCommit: number;
	/** Characters of source text per tool result, drawn in [min, max). */
	resultChars: { min: number; max: number };
	seed: number;
	cwd?: string;
}

export interface LongSession {
	file: string;
	sessionId: string;
	stages: number;
	entries: number;
	messages: number;
	contextEdits: number;
	/** Edits the commit planner drafted that left their entry as it was (not written). */
	redundantEdits: number;
	folds: number;
	maxDepth: number;
	commits: number;
	fileBytes: number;
	/** ms to generate (the store writes included). */
	generateMs: number;
}

type Line = Record<string, unknown> & { id: string };

/** A session file written by appending lines, with the in-memory entries Pi's projection reads. */
class SessionWriter {
	readonly entries: SessionEntry[] = [];
	readonly byId = new Map<string, SessionEntry>();
	#leaf: string | null = null;
	#buffer: string[] = [];
	#next = 0;
	#clock: number;
	readonly file: string;

	constructor(file: string, header: Record<string, unknown>, clock: number) {
		this.file = file;
		this.#clock = clock;
		writeFileSync(file, `${JSON.stringify(header)}\n`);
	}

	get leaf(): string | null {
		return this.#leaf;
	}

	/** Ids are unique by construction (a counter), 8 hex digits like Pi's. */
	append(body: Record<string, unknown>): SessionEntry {
		const id = (0x10000000 + this.#next++).toString(16);
		const line: Line = {
			...body,
			id,
			parentId: this.#leaf,
			timestamp: new Date(this.#clock++).toISOString(),
		} as Line;
		const entry = line as unknown as SessionEntry;
		this.entries.push(entry);
		this.byId.set(id, entry);
		this.#leaf = id;
		this.#buffer.push(JSON.stringify(line));
		if (this.#buffer.length >= 512) this.flush();
		return entry;
	}

	flush(): void {
		if (this.#buffer.length === 0) return;
		appendFileSync(this.file, `${this.#buffer.join("\n")}\n`);
		this.#buffer = [];
	}
}

/** Source files of the workload's code base, read once, as the text tool results quote. */
function sourceTexts(): { path: string; text: string }[] {
	const plan = workloadPlan(64, { seed: 1 });
	const paths = [...new Set(plan.flatMap((p) => p.calls.flatMap((c) => (c.name === "read" ? [c.args.path] : []))))];
	return paths.map((path) => ({ path: String(path), text: readFileSync(join(WORKLOAD_ROOT, String(path)), "utf8") }));
}

const USAGE = {
	input: 0,
	output: 0,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: 0,
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

/** The replacement an edit puts on its target, comparable as text (null hides it). */
const replacementKey = (r: unknown) => JSON.stringify(r ?? null);

/** What the generator carries from stage to stage and commit to commit. */
interface GenState {
	core: PiFoldCore;
	w: SessionWriter;
	store: FoldStore;
	lattice: FoldLattice;
	context: ContextEntries;
	readonly records: RecordIndex;
	/** The latest edit of each entry, as Pi applies them. */
	latestEdit: Map<string, string>;
	stages: number;
	commits: number;
	contextEdits: number;
	redundantEdits: number;
	/** The session's start (ms since the epoch): a stage's messages are stamped this plus its index. */
	clock: number;
}

type StageCall = { id: string; path: string; text: string };

/** Three reads of random slices of the workload's sources. */
function stageCalls(
	texts: readonly { path: string; text: string }[],
	next: () => number,
	stage: number,
	chars: LongSessionOptions["resultChars"],
): StageCall[] {
	return Array.from({ length: 3 }, (_, j) => {
		const src = texts[Math.floor(next() * texts.length)];
		const len = chars.min + Math.floor(next() * (chars.max - chars.min));
		const at = Math.floor(next() * Math.max(1, src.text.length - len));
		return { id: `g${stage}c${j}`, path: src.path, text: src.text.slice(at, at + len) };
	});
}

/** The stage's assistant message and its tool results, appended to the session file. */
function appendStage(w: SessionWriter, calls: readonly StageCall[], stage: number, timestamp: number): SessionEntry[] {
	const added: SessionEntry[] = [
		w.append({
			type: "message",
			message: {
				role: "assistant",
				content: [
					{ type: "text", text: `Stage ${stage}: reading ${calls[0].path} and ${calls.length - 1} more.` },
					...calls.map((c) => ({ type: "toolCall", id: c.id, name: "read", arguments: { path: c.path } })),
				],
				api: "pi-fold-faux",
				provider: "pi-fold-faux",
				model: "faux-1",
				usage: USAGE,
				stopReason: "toolUse",
				timestamp,
			},
		}),
	];
	for (const c of calls) {
		const content = [{ type: "text", text: c.text }];
		added.push(
			w.append({
				type: "message",
				message: { role: "toolResult", toolCallId: c.id, toolName: "read", content, isError: false, timestamp },
			}),
		);
	}
	return added;
}

/** Grow the lattice by the stage's entries and mark them as one tool batch, recorded as the runtime does. */
function markStage(g: GenState, added: readonly SessionEntry[]): void {
	const grown = contextEntriesOf(added, g.core);
	const ext = g.lattice.extend(grown.entries);
	if (!ext.ok) throw new Error(ext.reason);
	g.context.entries.push(...grown.entries);
	g.context.sources.push(...grown.sources);
	const marked = g.lattice.mark(added[0].id, added[added.length - 1].id, "tool-batch");
	if (!marked.ok) throw new Error(marked.reason);
	g.w.append({
		type: "custom",
		customType: RECORD_TYPE,
		data: { v: 1, op: "mark", id: marked.id, kind: "tool-batch", from: added[0].id, to: added.at(-1)?.id },
	});
}

/** Commit every mark, writing the context edits (each entry's latest only once) and the records. */
function commitAll(g: GenState): void {
	const projection = buildSessionProjection(g.w.entries, g.w.leaf, g.w.byId);
	const planned = planCommit({
		core: g.core,
		lattice: g.lattice,
		context: g.context,
		projection: projection.entries,
		thresholds: DEFAULT_THRESHOLDS,
		need: 1,
		ratio: 1,
		all: true,
	});
	if (!planned.ok) throw new Error(`commit ${g.commits}: ${planned.reason}`);
	const { plan } = planned;
	persistFolds(plan.lattice, g.store, g.context, foldsOf(plan), g.records);
	for (const d of plan.drafts) {
		const key = replacementKey(d.replacement);
		if (g.latestEdit.get(d.targetId) === key) {
			g.redundantEdits++;
			continue;
		}
		g.latestEdit.set(d.targetId, key);
		g.w.append({ type: "context_edit", targetId: d.targetId, replacement: d.replacement });
		g.contextEdits++;
	}
	for (const op of commitOps(plan, g.records)) g.w.append({ type: "custom", customType: RECORD_TYPE, data: op });
	g.lattice = plan.lattice;
	g.commits++;
}

/** A session file with its header and the user's opening message, and the state over it. */
function openSession(core: PiFoldCore, opts: LongSessionOptions): GenState & { file: string; sessionId: string } {
	const sessionId = randomUUID();
	const clock = Date.UTC(2026, 0, 1);
	const file = join(opts.dir, `${new Date(clock).toISOString().replace(/[:.]/g, "-")}_${sessionId}.jsonl`);
	const cwd = opts.cwd ?? WORKLOAD_ROOT;
	const w = new SessionWriter(
		file,
		{ type: "session", version: CURRENT_SESSION_VERSION, id: sessionId, timestamp: new Date(clock).toISOString(), cwd },
		clock,
	);
	w.append({
		type: "message",
		message: { role: "user", content: [{ type: "text", text: "Survey this package's source." }], timestamp: clock },
	});
	const context = contextEntriesOf(w.entries, core);
	const created = Lattice.create(core, context.entries);
	if (!created.ok) throw new Error(created.reason);
	const store = FoldStore.forSession({ sessionFile: file, sessionId }, core);
	return {
		...{ file, sessionId, core, w, store, lattice: created.lattice, context, records: new Map() },
		...{ latestEdit: new Map(), stages: 0, commits: 0, contextEdits: 0, redundantEdits: 0, clock },
	};
}

export async function generateLongSession(core: PiFoldCore, opts: LongSessionOptions): Promise<LongSession> {
	const t0 = performance.now();
	const g = openSession(core, opts);
	const texts = sourceTexts();
	const next = rng(opts.seed).next;
	// Stages in chunks, each marked as it comes; every chunk but the last is committed, so the session
	// ends as a live one does: folds up to a while ago, then raw stages whose marks wait for a commit.
	for (;;) {
		for (let k = 0; k < opts.stagesPerCommit; k++, g.stages++) {
			const calls = stageCalls(texts, next, g.stages, opts.resultChars);
			markStage(g, appendStage(g.w, calls, g.stages, g.clock + g.stages));
		}
		if (g.lattice.folds().length >= opts.folds) break;
		commitAll(g);
	}
	g.w.flush();
	const folds = g.lattice.folds();
	return {
		file: g.file,
		sessionId: g.sessionId,
		stages: g.stages,
		entries: g.w.entries.length,
		messages: g.w.entries.filter((e) => e.type === "message").length,
		contextEdits: g.contextEdits,
		redundantEdits: g.redundantEdits,
		folds: folds.length,
		maxDepth: Math.max(...folds.map((f) => f.depth)),
		commits: g.commits,
		fileBytes: statSync(g.file).size,
		generateMs: performance.now() - t0,
	};
}
