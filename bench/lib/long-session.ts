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
import { rng, WORKLOAD_ROOT, workloadPlan } from "../../harness/workload.ts";
import type { FoldLattice } from "../../src/lattice/index.ts";
import { FoldLattice as Lattice } from "../../src/lattice/index.ts";
import { commitOps, foldsOf, planCommit } from "../../src/policy/commit-plan.ts";
import { DEFAULT_THRESHOLDS } from "../../src/policy/thresholds.ts";
import { type ContextEntries, contextEntriesOf } from "../../src/session/context-entries.ts";
import { persistFolds, type RecordIndex } from "../../src/session/persist.ts";
import { FoldStore } from "../../src/store/index.ts";
import { RECORD_TYPE } from "../../src/vocabulary.ts";

export interface LongSessionOptions {
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

export async function generateLongSession(core: PiFoldCore, opts: LongSessionOptions): Promise<LongSession> {
	const t0 = performance.now();
	const sessionId = randomUUID();
	const clock = Date.UTC(2026, 0, 1);
	const file = join(opts.dir, `${new Date(clock).toISOString().replace(/[:.]/g, "-")}_${sessionId}.jsonl`);
	const cwd = opts.cwd ?? WORKLOAD_ROOT;
	const w = new SessionWriter(
		file,
		{ type: "session", version: CURRENT_SESSION_VERSION, id: sessionId, timestamp: new Date(clock).toISOString(), cwd },
		clock,
	);
	const store = FoldStore.forSession({ sessionFile: file, sessionId }, core);
	const texts = sourceTexts();
	const next = rng(opts.seed);

	w.append({
		type: "message",
		message: { role: "user", content: [{ type: "text", text: "Survey this package's source." }], timestamp: clock },
	});
	const first = contextEntriesOf(w.entries, core);
	const created = Lattice.create(core, first.entries);
	if (!created.ok) throw new Error(created.reason);
	let lattice: FoldLattice = created.lattice;
	const context: ContextEntries = first;
	const records: RecordIndex = new Map();
	/** The latest edit of each entry, as Pi applies them. */
	const latestEdit = new Map<string, string>();
	let stages = 0;
	let commits = 0;
	let contextEdits = 0;
	let redundantEdits = 0;

	// Stages in chunks, each marked as it comes; every chunk but the last is committed, so the session
	// ends as a live one does: folds up to a while ago, then raw stages whose marks wait for a commit.
	for (;;) {
		for (let k = 0; k < opts.stagesPerCommit; k++, stages++) {
			const calls = Array.from({ length: 3 }, (_, j) => {
				const src = texts[Math.floor(next() * texts.length)];
				const len = opts.resultChars.min + Math.floor(next() * (opts.resultChars.max - opts.resultChars.min));
				const at = Math.floor(next() * Math.max(1, src.text.length - len));
				return { id: `g${stages}c${j}`, path: src.path, text: src.text.slice(at, at + len) };
			});
			const added: SessionEntry[] = [];
			added.push(
				w.append({
					type: "message",
					message: {
						role: "assistant",
						content: [
							{ type: "text", text: `Stage ${stages}: reading ${calls[0].path} and ${calls.length - 1} more.` },
							...calls.map((c) => ({ type: "toolCall", id: c.id, name: "read", arguments: { path: c.path } })),
						],
						api: "pi-fold-faux",
						provider: "pi-fold-faux",
						model: "faux-1",
						usage: USAGE,
						stopReason: "toolUse",
						timestamp: clock + stages,
					},
				}),
			);
			for (const c of calls) {
				added.push(
					w.append({
						type: "message",
						message: {
							role: "toolResult",
							toolCallId: c.id,
							toolName: "read",
							content: [{ type: "text", text: c.text }],
							isError: false,
							timestamp: clock + stages,
						},
					}),
				);
			}
			const grown = contextEntriesOf(added, core);
			const ext = lattice.extend(grown.entries);
			if (!ext.ok) throw new Error(ext.reason);
			context.entries.push(...grown.entries);
			context.sources.push(...grown.sources);
			const marked = lattice.mark(added[0].id, added[added.length - 1].id, "tool-batch");
			if (!marked.ok) throw new Error(marked.reason);
			w.append({
				type: "custom",
				customType: RECORD_TYPE,
				data: { v: 1, op: "mark", id: marked.id, kind: "tool-batch", from: added[0].id, to: added.at(-1)?.id },
			});
		}
		if (lattice.folds().length >= opts.folds) break;
		const projection = buildSessionProjection(w.entries, w.leaf, w.byId);
		const planned = planCommit({
			core,
			lattice,
			context,
			projection: projection.entries,
			thresholds: DEFAULT_THRESHOLDS,
			need: 1,
			ratio: 1,
			all: true,
		});
		if (!planned.ok) throw new Error(`commit ${commits}: ${planned.reason}`);
		const { plan } = planned;
		persistFolds(plan.lattice, store, context, foldsOf(plan), records);
		for (const d of plan.drafts) {
			const key = replacementKey(d.replacement);
			if (latestEdit.get(d.targetId) === key) {
				redundantEdits++;
				continue;
			}
			latestEdit.set(d.targetId, key);
			w.append({ type: "context_edit", targetId: d.targetId, replacement: d.replacement });
			contextEdits++;
		}
		for (const op of commitOps(plan, records)) w.append({ type: "custom", customType: RECORD_TYPE, data: op });
		lattice = plan.lattice;
		commits++;
	}
	w.flush();
	const folds = lattice.folds();
	return {
		file,
		sessionId,
		stages,
		entries: w.entries.length,
		messages: w.entries.filter((e) => e.type === "message").length,
		contextEdits,
		redundantEdits,
		folds: folds.length,
		maxDepth: Math.max(...folds.map((f) => f.depth)),
		commits,
		fileBytes: statSync(file).size,
		generateMs: performance.now() - t0,
	};
}
