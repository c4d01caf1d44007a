// projectionCandidates on a real session that committed folds: pi-fold registered in a
// real Pi AgentSession (faux provider, offline) over the scripted workload with a small serving
// budget. The store is the oracle for identities and exact source bytes.
import { type SessionEntry, sessionEntryToContextMessages } from "@earendil-works/pi-coding-agent";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { makeSession, removeTempDirs, type TestSession } from "../harness/pi-harness.ts";
import { WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "../harness/workload.ts";
import { type PiFold, type ProjectionCandidate, registerPiFold } from "../src/index.ts";
import { estimateMessages } from "../src/meter/estimate.ts";
import {
	generatorOf,
	PROJECTION_GENERATOR_VERSION,
	projectionCandidateProvider,
	projectionCandidates,
} from "../src/operations/projection-candidates.ts";
import { DEFAULT_THRESHOLDS } from "../src/policy/thresholds.ts";
import { FoldRuntime } from "../src/runtime/runtime.ts";

const core = nodeCore();
/** As in runtime.test.ts: small enough that the workload needs several commits. */
const BUDGET = 14_000;
const STAGES = 16;
/** Low, so the short session also consolidates (nested folds to expand). */
const CONSOLIDATE_AFTER = 3;

const FIELDS = [
	"version",
	"key",
	"kind",
	"domain",
	"horizon",
	"source_id",
	"source_version",
	"route",
	"token_cost",
	"expansion_cost",
	"rank",
	"score",
	"raw_score",
	"confidence",
	"freshness",
	"locked_owner",
	"collapse_key",
	"generator",
	"generator_version",
	"recency",
].sort();

afterAll(removeTempDirs);

describe("projectionCandidates on a session that committed folds", () => {
	let h: TestSession;
	let fold: PiFold;
	let rt: FoldRuntime;
	let records: ProjectionCandidate[];

	beforeAll(async () => {
		let registered: PiFold | undefined;
		h = await makeSession({
			cwd: WORKLOAD_ROOT,
			persist: true,
			extensions: [
				(pi) => {
					registered = registerPiFold(pi, {
						providerInputBudget: BUDGET,
						thresholds: { consolidateAfter: CONSOLIDATE_AFTER },
					});
				},
			],
		});
		h.script(workloadSteps(STAGES, { seed: 11 }));
		await h.session.prompt(WORKLOAD_PROMPT);
		if (!registered) throw new Error("pi-fold did not register");
		fold = registered;
		const runtime = fold.runtime.get();
		if (!runtime) throw new Error(`no runtime: ${fold.runtime.reason()}`);
		rt = runtime;
		records = fold.projectionCandidates();
	});
	afterAll(() => h?.dispose());

	it("emits one record per visible collapsed fold, in window order, ranked 0..n-1", () => {
		const lattice = rt.view?.lattice;
		if (!lattice) throw new Error("no open lattice");
		expect(rt.status().problems).toEqual([]);
		expect(rt.commits.length).toBeGreaterThanOrEqual(2);
		// Nothing is expanded here, so the collapsed folds are exactly the committed roots.
		expect(lattice.folds().some((f) => f.state === "expanded")).toBe(false);
		expect(records.map((r) => r.source_id)).toEqual(lattice.visibleRoots());
		expect(records.length).toBeGreaterThan(0);
		expect(records.map((r) => r.rank)).toEqual(records.map((_, i) => i));
		const starts = records.map((r) => lattice.get(r.source_id)?.start ?? -1);
		expect(starts).toEqual([...starts].sort((a, b) => a - b));
		for (const r of records) expect(lattice.get(r.source_id)?.state).toBe("committed");
	});

	it("every record has every field, with the documented types and constant values", () => {
		for (const r of records) {
			expect(Object.keys(r).sort()).toEqual(FIELDS);
			const id = r.source_id;
			expect(id).toMatch(/^f[0-9a-f]{10}$/);
			expect(r).toMatchObject({
				version: 1,
				key: `projection:${id}`,
				kind: "projection",
				domain: "system",
				horizon: "working",
				route: { tool: "pi_fold_context", arguments: { action: "expand", id } },
				confidence: "exact",
				freshness: "current",
				locked_owner: false,
				collapse_key: `projection:${id}`,
				generator_version: PROJECTION_GENERATOR_VERSION,
				recency: null,
			});
			expect(r.generator_version).toBe("memory-slate-generators-v2");
			expect(r.route).toEqual({ tool: "pi_fold_context", arguments: { action: "expand", id } });
			expect(r.source_version).toMatch(/^[0-9a-f]{64}$/);
			for (const n of [r.token_cost, r.expansion_cost, r.raw_score, r.rank]) expect(Number.isSafeInteger(n)).toBe(true);
			expect(r.token_cost).toBeGreaterThanOrEqual(1);
			expect(r.expansion_cost).toBeGreaterThanOrEqual(1);
			expect(r.score).toBeGreaterThanOrEqual(0);
			expect(r.score).toBeLessThanOrEqual(1);
			expect(r.raw_score).toBeGreaterThanOrEqual(0);
		}
	});

	it("source_version is the store's verified identity, and the savings are the exact source bytes minus the brief's", () => {
		const view = rt.view;
		if (!view) throw new Error("no open session");
		for (const r of records) {
			const recordHash = view.records.get(r.source_id);
			if (!recordHash) throw new Error(`no store record for ${r.source_id}`);
			// verifyFold rehashes every leaf and recomputes every identity from the store alone.
			const verified = view.store.verifyFold(recordHash, { id: r.source_id });
			expect(r.source_version).toBe(verified.record.identity);
			const sourceBytes = verified.leaves.reduce((n, leaf) => n + leaf.bytes.byteLength, 0);
			const brief = view.lattice.get(r.source_id)?.brief ?? "";
			expect(brief.length).toBeGreaterThan(0);
			expect(r.raw_score).toBe(Math.max(0, sourceBytes - Buffer.byteLength(brief)));
			expect(r.score).toBeCloseTo(r.raw_score / sourceBytes, 12);
			// Every fold here spans at least minFoldChars of source and its brief is capped at 2000 chars.
			expect(sourceBytes).toBeGreaterThanOrEqual(DEFAULT_THRESHOLDS.minFoldChars);
			expect(r.raw_score).toBeGreaterThan(0);

			// Costs by the core's estimator: the brief as shown, the exact source's messages as expand shows them.
			expect(r.token_cost).toBe(Math.max(1, Math.ceil(core.estimateTokens(brief))));
			const entries = verified.leaves.map(
				(leaf) => JSON.parse(Buffer.from(leaf.bytes).toString("utf8")) as SessionEntry,
			);
			const messages = entries.flatMap((e) => sessionEntryToContextMessages(e));
			const expansion = estimateMessages(core, messages).reduce((n, t) => n + t, 0);
			expect(r.expansion_cost).toBe(Math.max(1, Math.ceil(expansion)));
			// A fold is worth showing collapsed: its source costs more than its brief.
			expect(r.expansion_cost).toBeGreaterThan(r.token_cost);
		}
	});

	it("the generator follows each fold's brief provenance", () => {
		const lattice = rt.view?.lattice;
		for (const r of records) {
			const provenance = lattice?.get(r.source_id)?.provenance ?? "";
			expect(r.generator).toBe(generatorOf(provenance));
			// The workload's agent writes no briefs: every fold here is the runtime's.
			expect(r.generator).toBe("projection-deterministic");
		}
		expect(generatorOf("supplied")).toBe("projection-supplied");
		expect(generatorOf("model")).toBe("projection-model");
	});

	it("no candidates for pending marks", () => {
		const pending = rt.view?.lattice.pending() ?? [];
		// The frontier keeps marking work after the last commit, so marks are waiting at the end.
		expect(pending.length).toBeGreaterThan(0);
		const ids = new Set(records.map((r) => r.source_id));
		for (const mark of pending) expect(ids.has(mark.id)).toBe(false);
	});

	it("no candidate for an expanded fold; its collapsed children take its place, ranks renumbered", () => {
		const view = rt.view;
		if (!view) throw new Error("no open session");
		const parent = records
			.map((r) => view.lattice.get(r.source_id))
			.find((f) => f?.children.some((c) => c.type === "fold"));
		if (!parent) throw new Error("the workload made no consolidation (nothing nested to expand)");
		// The lattice's own expand, on a copy: the session's lattice is not touched.
		const lattice = view.lattice.clone();
		const expanded = lattice.expand(parent.id);
		expect(expanded.ok).toBe(true);
		const after = projectionCandidates(core, { lattice, context: view.context });
		const ids = after.map((r) => r.source_id);
		expect(ids).not.toContain(parent.id);
		const children = parent.children.flatMap((c) => (c.type === "fold" ? [c.id] : []));
		const at = records.findIndex((r) => r.source_id === parent.id);
		const expected = [
			...records.slice(0, at).map((r) => r.source_id),
			...children.filter((c) => lattice.get(c)?.state === "committed"),
			...records.slice(at + 1).map((r) => r.source_id),
		];
		expect(ids).toEqual(expected);
		expect(after.map((r) => r.rank)).toEqual(after.map((_, i) => i));
		// The session's own answer is unchanged.
		expect(fold.projectionCandidates()).toEqual(records);
	});

	it("answers for the session a Pi context is about: its own gets the records, another gets none", () => {
		const sm = h.session.sessionManager;
		expect(fold.projectionCandidates({ sessionManager: sm })).toEqual(records);
		expect(fold.projectionCandidates({ sessionManager: { getSessionId: () => "another-session" } })).toEqual([]);
	});

	it("never throws: a context that fails is answered with [] and recorded as a problem", () => {
		const hostile = {
			getSessionId: (): string => {
				throw new Error("session manager gone");
			},
		};
		expect(fold.projectionCandidates({ sessionManager: hostile })).toEqual([]);
		expect(rt.status().problems.join("\n")).toMatch(/projectionCandidates: session manager gone/);
	});
});

describe("projectionCandidates with no open session", () => {
	it("returns [] when no runtime exists or the runtime has opened no session", () => {
		expect(projectionCandidateProvider(() => undefined)()).toEqual([]);
		const idle = new FoldRuntime(core, {
			thresholds: { ...DEFAULT_THRESHOLDS },
			blacklistAutoFoldTools: new Set(),
			bandFixed: false,
		});
		expect(idle.view).toBeUndefined();
		expect(projectionCandidateProvider(() => idle)()).toEqual([]);
	});
});
