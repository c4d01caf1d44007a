// Shared by the fault tests: a real Pi session folding the scripted workload with pi-fold, and the
// audits every fault test ends with (every fold verifies and its leaves are the session's bytes;
// every request the provider got is provider-valid).
import { readFileSync, writeFileSync } from "node:fs";
import type { Message } from "@earendil-works/pi-ai";
import type { ExtensionFactory, SessionManager } from "@earendil-works/pi-coding-agent";
import { expect } from "vitest";
import { makeSession, type SessionOptions, type TestSession } from "../../harness/pi-harness.ts";
import { WORKLOAD_PROMPT, WORKLOAD_ROOT, type WorkloadOptions, workloadSteps } from "../../harness/workload.ts";
import type { FoldId } from "../../src/fold-types.ts";
import { type PiFold, registerPiFold } from "../../src/index.ts";
import type { FoldRuntime } from "../../src/runtime/runtime.ts";
import { canonicalText } from "../../src/session/context-entries.ts";
import type { FoldStore, StoreLayout } from "../../src/store/index.ts";
import { pairingProblems } from "../helpers/requests.ts";
import { toLooseLayout } from "../helpers/store-audit.ts";

export interface FoldedSession {
	h: TestSession;
	fold: PiFold;
	rt(): FoldRuntime;
}

export interface FoldedSessionOptions {
	/** providerInputBudget (default 14,000: a commit every few stages of the workload). */
	budget?: number;
	consolidateAfter?: number;
	extensions?: ExtensionFactory[];
	session?: Partial<SessionOptions>;
}

/** A persisted session over the workload's code base with pi-fold registered (nothing run yet). */
export async function foldedSession(opts: FoldedSessionOptions = {}): Promise<FoldedSession> {
	let fold: PiFold | undefined;
	const h = await makeSession({
		cwd: WORKLOAD_ROOT,
		persist: true,
		contextWindow: 1_000_000,
		...opts.session,
		extensions: [
			(pi) => {
				fold = registerPiFold(pi, {
					providerInputBudget: opts.budget ?? 14_000,
					thresholds: { consolidateAfter: opts.consolidateAfter ?? 3 },
				});
			},
			...(opts.extensions ?? []),
		],
	});
	if (!fold) throw new Error("pi-fold did not register");
	const f = fold;
	return {
		h,
		fold: f,
		rt: () => {
			const rt = f.runtime.get();
			if (!rt) throw new Error(`no runtime: ${f.runtime.reason()}`);
			return rt;
		},
	};
}

/** Run `stages` of the workload as one prompt. */
export async function runWorkload(s: FoldedSession, stages: number, opts: WorkloadOptions = {}): Promise<void> {
	s.h.script(workloadSteps(stages, opts));
	await s.h.session.prompt(WORKLOAD_PROMPT);
}

/** Every committed fold verifies from the store and every leaf is byte-identical to the session's entry. */
export function auditFolds(rt: FoldRuntime, sm: Pick<SessionManager, "getEntry">): number {
	const store = rt.store as FoldStore;
	let leaves = 0;
	for (const [id, record] of rt.records) {
		const verified = store.verifyFold(record, { id });
		for (const leaf of verified.leaves) {
			const entry = sm.getEntry(leaf.entryId);
			if (!entry) throw new Error(`leaf ${leaf.entryId} of ${id} is not in the session`);
			expect(Buffer.from(leaf.bytes).equals(Buffer.from(canonicalText(entry))), `leaf ${leaf.entryId}`).toBe(true);
			leaves++;
		}
	}
	return leaves;
}

/** Tool-call pairing problems of every captured request from `from` on (empty when all are valid). */
export function invalidRequests(h: TestSession, from = 0): string[] {
	return h.captured
		.slice(from)
		.flatMap((c, i) => pairingProblems(c.context.messages as Message[]).map((p) => `request ${from + i}: ${p}`));
}

/**
 * A folded session file, closed; its committed folds (root first) and their record hashes. With
 * layout "loose", its store is rewritten as an earlier pi-fold left stores: one file per object.
 */
export async function foldedFile(
	layout: StoreLayout = "packs",
): Promise<{ file: string; records: [FoldId, string][] }> {
	const s = await foldedSession({ consolidateAfter: 20 });
	await runWorkload(s, 12, { seed: 31 });
	const rt = s.rt();
	expect(rt.status().commits.length).toBeGreaterThanOrEqual(2);
	const records = [...rt.records];
	const file = s.h.session.sessionManager.getSessionFile() as string;
	const root = rt.store?.root as string;
	s.h.dispose();
	if (layout === "loose") toLooseLayout(root);
	return { file, records };
}

/** Change one entry's timestamp in the session file (as an editor or a sync tool might). */
export function editTimestamp(file: string, entryId: string): void {
	const lines = readFileSync(file, "utf8").trimEnd().split("\n");
	const at = lines.findIndex((l) => l.includes(`"id":"${entryId}"`));
	expect(at).toBeGreaterThan(0);
	const entry = JSON.parse(lines[at]);
	entry.timestamp = "2020-01-01T00:00:00.000Z";
	lines[at] = JSON.stringify(entry);
	writeFileSync(file, `${lines.join("\n")}\n`);
}
