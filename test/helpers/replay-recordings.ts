// Sessions recorded by a real Pi AgentSession (faux provider, offline) for the replay tests: one with
// pi-fold and one with Pi's native compaction, each with what it really sent, made once per test file.
import { cpSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { AssistantMessage } from "@earendil-works/pi-ai";
import { DEFAULT_COMPACTION_SETTINGS } from "@earendil-works/pi-coding-agent";
import { expect } from "vitest";
import { makeSession, tempDir } from "../../harness/pi-harness.ts";
import { isSummaryRequest, WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "../../harness/workload.ts";
import { type PiFold, registerPiFold } from "../../src/index.ts";
import type { PolicyResult, ReplayResult } from "../../src/replay/replay.ts";
import type { CommittedFold } from "../../src/session/journal.ts";
import { RECORD_TYPE } from "../../src/vocabulary.ts";
import { fileEntries } from "./fixture-entries.ts";

export const STAGES = 16;
/**
 * The estimator's tolerance, relative to the size (as in runtime.test.ts): a replayed request that
 * is not the recorded one counts the provider's tokens for every message the recording sent and an
 * estimate for the rest (a brief naming another fold id, a receipt with other numbers).
 */
export const TOLERANCE = 0.1;

/** pi-fold recording: as in runtime.test.ts, a budget small enough for several commits in 16 stages. */
export const FOLD_BUDGET = 14_000;
export const FOLD_RESERVE = 16_384;
export const FOLD_WINDOW = FOLD_RESERVE + 16_000;

/** Native recording: Pi compacts above 16000 - 4000 tokens and keeps 3000. */
export const NATIVE_WINDOW = 16_000;
export const NATIVE_RESERVE = 4_000;
export const NATIVE_KEEP = 3_000;

/** anthropic/claude-opus-4-5 in Pi 1.6's catalog ($ per M tokens). */
export const OPUS_COST = { input: 5, output: 25, cacheRead: 0.5, cacheWrite: 6.25 };

export const promptOf = (m: AssistantMessage) => m.usage.input + m.usage.cacheRead + m.usage.cacheWrite;

export interface Recording {
	file: string;
	/** Prompt tokens the provider billed for each work request, in order. */
	billed: number[];
	/** Messages of each work request as the provider received them. */
	work: unknown[][];
	/** Work requests that first carried a rewrite (a pi-fold commit, or a native compaction's summary). */
	rewritten: number[];
	commits?: number;
}

export function assistantsOf(h: Awaited<ReturnType<typeof makeSession>>): AssistantMessage[] {
	return h.session.sessionManager
		.getBranch()
		.flatMap((e) => (e.type === "message" && e.message.role === "assistant" ? [e.message as AssistantMessage] : []));
}

/** One pi-fold recording for every test that needs one (made on first use). */
let foldRecording: Promise<Recording> | undefined;
export const recordedFold = () => {
	foldRecording ??= recordFold();
	return foldRecording;
};

async function recordFold(): Promise<Recording> {
	let fold: PiFold | undefined;
	const h = await makeSession({
		cwd: WORKLOAD_ROOT,
		persist: true,
		contextWindow: FOLD_WINDOW,
		settings: { compaction: { enabled: true, reserveTokens: FOLD_RESERVE, keepRecentTokens: 2000 } },
		extensions: [
			(pi) => {
				fold = registerPiFold(pi, { providerInputBudget: FOLD_BUDGET });
			},
		],
	});
	try {
		h.script(workloadSteps(STAGES, { seed: 11 }));
		await h.session.prompt(WORKLOAD_PROMPT);
		const rt = fold?.runtime.get();
		const file = h.session.sessionManager.getSessionFile();
		if (!rt || !file) throw new Error("no runtime or no session file");
		expect(rt.status().problems).toEqual([]);
		return {
			file,
			billed: assistantsOf(h).map(promptOf),
			work: h.captured.filter((c) => !isSummaryRequest(c.context)).map((c) => c.context.messages),
			// A commit at turn k (the workload is one prompt run: turn k answers request k) shows from request k + 1.
			rewritten: rt.commits.map((c) => c.turn + 1),
			commits: rt.commits.length,
		};
	} finally {
		h.dispose();
	}
}

export async function recordNative(): Promise<Recording> {
	const h = await makeSession({
		cwd: WORKLOAD_ROOT,
		persist: true,
		contextWindow: NATIVE_WINDOW,
		settings: { compaction: { enabled: true, reserveTokens: NATIVE_RESERVE, keepRecentTokens: NATIVE_KEEP } },
	});
	try {
		h.script(workloadSteps(STAGES, { seed: 7 }));
		await h.session.prompt(WORKLOAD_PROMPT);
		const file = h.session.sessionManager.getSessionFile();
		if (!file) throw new Error("no session file");
		const rewritten: number[] = [];
		let work = 0;
		for (const c of h.captured) {
			if (isSummaryRequest(c.context)) rewritten.push(work);
			else work++;
		}
		return {
			file,
			billed: assistantsOf(h).map(promptOf),
			work: h.captured.filter((c) => !isSummaryRequest(c.context)).map((c) => c.context.messages),
			rewritten,
		};
	} finally {
		h.dispose();
	}
}

/** A session Pi ran alone (no pi-fold) on FOLD_WINDOW, with its default compaction settings (what a replay assumes). */
export async function recordPiAlone(stages = STAGES): Promise<Recording> {
	const h = await makeSession({
		cwd: WORKLOAD_ROOT,
		persist: true,
		contextWindow: FOLD_WINDOW,
		settings: { compaction: { ...DEFAULT_COMPACTION_SETTINGS, enabled: true } },
	});
	try {
		h.script(workloadSteps(stages, { seed: 5 }));
		await h.session.prompt(WORKLOAD_PROMPT);
		const file = h.session.sessionManager.getSessionFile();
		if (!file) throw new Error("no session file");
		return {
			file,
			billed: assistantsOf(h).map(promptOf),
			work: h.captured.filter((c) => !isSummaryRequest(c.context)).map((c) => c.context.messages),
			rewritten: [],
		};
	} finally {
		h.dispose();
	}
}

export const policy = (r: ReplayResult, name: PolicyResult["name"]) => {
	const p = r.policies.find((x) => x.name === name);
	if (!p) throw new Error(`no ${name} policy in the result`);
	return p;
};

export function expectWithin(actual: number[], expected: number[], what: string): void {
	expect(actual).toHaveLength(expected.length);
	actual.forEach((a, i) => {
		expect(Math.abs(a - expected[i]), `${what}, request ${i}: ${a} vs ${expected[i]}`).toBeLessThanOrEqual(
			TOLERANCE * expected[i],
		);
	});
}

/** A copy of a recorded session's folder (the file and its store beside it); the copy's file. */
export function copySession(file: string, prefix = "session-copy"): string {
	const dir = tempDir(prefix);
	cpSync(dirname(file), dir, { recursive: true });
	return join(dir, basename(file));
}

/** Every fold a session file's pi-fold records commit (commits, then consolidations, in file order). */
export function committedFolds(file: string): CommittedFold[] {
	const out: CommittedFold[] = [];
	for (const e of fileEntries(file)) {
		if (e.type !== "custom" || e.customType !== RECORD_TYPE) continue;
		const d = e.data as { op: string; folds?: CommittedFold[]; fold?: CommittedFold };
		if (d.op === "commit") out.push(...(d.folds ?? []));
		if (d.op === "consolidate" && d.fold) out.push(d.fold);
	}
	return out;
}
