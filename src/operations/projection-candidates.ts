// Projection candidates: one record per fold the window shows collapsed, in window order,
// for a host that plans its own context (a memory slate) around pi-fold's folds. Each record says
// what the fold costs as shown (its brief), what expanding it would cost (its exact source), how
// much it saves, and the tool call that expands it. Read-only: it never changes the runtime.
import { type SessionEntry, sessionEntryToContextMessages } from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import type { FoldView } from "../lattice/index.ts";
import { estimateMessages } from "../meter/estimate.ts";
import { errorMessage, FOLD_TOOL_NAME, type FoldId, type HexHash } from "../vocabulary.ts";
import type { OpenView, RuntimeView } from "./view.ts";

export const PROJECTION_GENERATOR_VERSION = "memory-slate-generators-v2";

/** Brief provenance -> generator. "model" is what pre-3.x sessions recorded for model-written briefs. */
type ProjectionGenerator = "projection-model" | "projection-deterministic" | "projection-supplied";

export interface ProjectionCandidate {
	version: 1;
	/** `projection:<fold id>`. */
	key: string;
	kind: "projection";
	domain: "system";
	horizon: "working";
	source_id: FoldId;
	/** The fold's identity: SHA-256 over its children's hashes in order (what the store verifies). */
	source_version: HexHash;
	route: { tool: typeof FOLD_TOOL_NAME; arguments: { action: "expand"; id: FoldId } };
	/** Estimated tokens of the brief the window shows (ceil, at least 1). */
	token_cost: number;
	/** Estimated tokens of the exact source, as its messages would show again when expanded (ceil, at least 1). */
	expansion_cost: number;
	/** Zero-based position among the emitted records (window order). */
	rank: number;
	/** raw_score / source bytes, in [0, 1]. */
	score: number;
	/** Exact bytes saved: the source's canonical bytes minus the brief's UTF-8 bytes, not below 0. */
	raw_score: number;
	confidence: "exact";
	freshness: "current";
	locked_owner: false;
	collapse_key: string;
	generator: ProjectionGenerator;
	generator_version: typeof PROJECTION_GENERATOR_VERSION;
	recency: null;
}

/** What the candidates are computed from: the open session's lattice and its context entries. */
type ProjectionSource = Pick<OpenView, "lattice" | "context">;

export function generatorOf(provenance: string): ProjectionGenerator {
	if (provenance === "supplied") return "projection-supplied";
	if (provenance === "model") return "projection-model";
	return "projection-deterministic";
}

const atLeastOne = (tokens: number): number => Math.max(1, Math.ceil(tokens));

function candidate(core: PiFoldCore, source: ProjectionSource, fold: FoldView, rank: number): ProjectionCandidate {
	const { entries, sources } = source.context;
	let sourceBytes = 0;
	for (let i = fold.start; i < fold.end; i++) sourceBytes += entries[i].bytes;
	const briefBytes = Buffer.byteLength(fold.brief, "utf8");
	const saved = Math.max(0, sourceBytes - briefBytes);
	const messages = sources.slice(fold.start, fold.end).flatMap((e: SessionEntry) => sessionEntryToContextMessages(e));
	const expansion = estimateMessages(core, messages).reduce((sum, t) => sum + t, 0);
	const key = `projection:${fold.id}`;
	return {
		version: 1,
		key,
		kind: "projection",
		domain: "system",
		horizon: "working",
		source_id: fold.id,
		source_version: fold.identity,
		route: { tool: FOLD_TOOL_NAME, arguments: { action: "expand", id: fold.id } },
		token_cost: atLeastOne(core.estimateTokens(fold.brief)),
		expansion_cost: atLeastOne(expansion),
		rank,
		score: sourceBytes > 0 ? Math.min(1, saved / sourceBytes) : 0,
		raw_score: saved,
		confidence: "exact",
		freshness: "current",
		locked_owner: false,
		collapse_key: key,
		generator: generatorOf(fold.provenance),
		generator_version: PROJECTION_GENERATOR_VERSION,
		recency: null,
	};
}

/**
 * One record per fold the window shows collapsed (committed and visible: a root, or a child of an
 * expanded fold), in window order. Pending marks show nothing of themselves and expanded folds
 * show their children, so neither has a record.
 */
export function projectionCandidates(core: PiFoldCore, source: ProjectionSource): ProjectionCandidate[] {
	const out: ProjectionCandidate[] = [];
	for (const item of source.lattice.window()) {
		if (item.type !== "fold") continue;
		const fold = source.lattice.get(item.id);
		if (fold?.state !== "committed") continue;
		out.push(candidate(core, source, fold, out.length));
	}
	return out;
}

/** The part of a Pi context the provider looks at: which session it is about. */
export interface CandidateContext {
	sessionManager?: { getSessionId(): string };
}

/** The runtime as the provider needs it: its view and core, and its problem log. */
type CandidateRuntime = Pick<RuntimeView, "core" | "view" | "problem">;

/**
 * `projectionCandidates(ctx?)` as registerPiFold returns it: [] with no open session, or when
 * `ctx` is about another session than the one open. Never throws (a failure is recorded as a
 * problem in status and answered with []).
 */
export function projectionCandidateProvider(
	runtime: () => CandidateRuntime | undefined,
): (ctx?: CandidateContext) => ProjectionCandidate[] {
	return (ctx) => {
		let rt: CandidateRuntime | undefined;
		try {
			rt = runtime();
			const view = rt?.view;
			if (!rt || !view) return [];
			const asked = ctx?.sessionManager?.getSessionId();
			if (asked !== undefined && asked !== view.sessionId) return [];
			return projectionCandidates(rt.core, view);
		} catch (err) {
			try {
				rt?.problem("projectionCandidates", errorMessage(err));
			} catch {
				// Nothing more to do: the caller still gets an answer.
			}
			return [];
		}
	};
}
