// The runtime's guards in real AgentSessions (faux provider, offline): the fence stops an
// over-budget request before the provider sees it; oversized tool results become read-only
// evidence files; the unbriefed-marks notice rides only on commit batches; a runtime that fails for
// real (its store cannot be written) leaves the session usable; and the version guard's decision.
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fauxAssistantMessage, fauxText, fauxToolCall, type Message } from "@earendil-works/pi-ai";
import { SessionManager, VERSION } from "@earendil-works/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { makeSession, removeTempDirs, toolResultFor } from "../harness/pi-harness.ts";
import { WORKLOAD_PROMPT, WORKLOAD_ROOT, workloadSteps } from "../harness/workload.ts";
import { NOTICE_MAX_BYTES } from "../src/edits/notice.ts";
import { checkHost, REQUIRED_PI_VERSION } from "../src/host/version-guard.ts";
import { type PiFold, registerPiFold } from "../src/index.ts";
import type { FoldRuntime } from "../src/runtime/runtime.ts";
import { EVIDENCE_DIR_NAME } from "../src/session/evidence.ts";
import { STORE_DIR_NAME } from "../src/store/index.ts";
import { RECEIPT_TYPE, UNBRIEFED_NOTICE_TYPE } from "../src/vocabulary.ts";
import { recordingUi } from "./helpers/recording-ui.ts";
import { isAppendOf, pairingProblems } from "./helpers/requests.ts";

afterAll(removeTempDirs);

function runtimeOf(fold: PiFold | undefined): FoldRuntime {
	const rt = fold?.runtime.get();
	if (!rt) throw new Error(`no runtime: ${fold?.runtime.reason()}`);
	return rt;
}

/** A session whose first turn runs one bash call printing ~60 kB (Pi truncates it to its output cap). */
async function bigOutputSession(options: Parameters<typeof registerPiFold>[1]) {
	let fold: PiFold | undefined;
	const h = await makeSession({
		persist: true,
		extensions: [
			(pi) => {
				fold = registerPiFold(pi, options);
			},
		],
	});
	const ui = recordingUi();
	const errors: unknown[] = [];
	await h.session.bindExtensions({ uiContext: ui.ui, onError: (e) => void errors.push(e) });
	h.script([
		fauxAssistantMessage([fauxToolCall("bash", { command: "seq -s ' ' 1 12000" }, { id: "big" })], {
			stopReason: "toolUse",
		}),
		fauxAssistantMessage(fauxText("answered")),
	]);
	await h.session.prompt("print the numbers");
	return { h, rt: runtimeOf(fold), ui, errors };
}

const FENCE_BUDGET = 6000;

describe("the fence", () => {
	it("stops an over-budget request before the provider sees it and says so out of band only", async () => {
		// bash results never fold here, so nothing lossless can ever make room.
		const { h, rt, ui, errors } = await bigOutputSession({
			providerInputBudget: FENCE_BUDGET,
			blacklistAutoFoldTools: ["bash"],
		});
		try {
			const status = rt.status();
			expect(errors).toEqual([]);
			expect(h.extensionErrors).toEqual([]);
			// The tool output landed in one turn, unseen by the model; the request carrying it was stopped.
			expect(h.captured).toHaveLength(1);
			expect(h.faux.getPendingResponseCount()).toBe(1);
			expect(status.fence.stopped).toBe(1);
			const last = status.fence.last;
			expect(last?.tokens).toBeGreaterThan(FENCE_BUDGET);
			expect(last?.sendLimit).toBe(FENCE_BUDGET);
			expect(ui.notes.map((n) => n.message)).toEqual([last?.message]);
			expect(ui.statuses.at(-1)?.text).toContain("request stopped");
			// Out of band: pi-fold wrote nothing into the window.
			const branch = h.session.sessionManager.getBranch();
			expect(branch.some((e) => e.type === "custom_message" || e.type === "context_edit")).toBe(false);
			const answers = branch.flatMap((e) =>
				e.type === "message" && e.message.role === "assistant" ? [e.message] : [],
			);
			expect(answers.at(-1)?.stopReason).toBe("aborted");
			// The session stays usable: the next prompt is stopped the same way, without an error.
			await h.session.prompt("and now?");
			expect(h.captured).toHaveLength(1);
			expect(rt.status().fence.stopped).toBe(2);
			expect(h.extensionErrors).toEqual([]);
		} finally {
			h.dispose();
		}
	});

	it("after a stop, the stopped turn's boundary folds what it can, and the next prompt fits", async () => {
		const { h, rt, errors } = await bigOutputSession({ providerInputBudget: FENCE_BUDGET });
		try {
			expect(errors).toEqual([]);
			expect(h.captured).toHaveLength(1);
			expect(rt.status().fence.stopped).toBe(1);
			// The aborted turn ends at a boundary: the now complete batch is marked there, but nothing is
			// committed after a stopped request (its receipt would end the run in the stop's place).
			expect(rt.commits).toHaveLength(0);
			expect(rt.lattice?.pending().length).toBeGreaterThan(0);
			const answers = h.session.messages.filter((m) => (m as Message).role === "assistant") as Message[];
			expect(h.session.messages.at(-1)).toBe(answers.at(-1));
			await h.session.prompt("and now?");
			expect(h.captured).toHaveLength(2);
			expect(rt.status().fence.stopped).toBe(1);
			// The next prompt's first request was folded before it went out.
			expect(rt.commits.map((c) => c.reason)).toEqual(["fold"]);
			const answered = h.session.messages.at(-1) as Message;
			expect(answered.role === "assistant" && answered.stopReason).toBe("stop");
			const billed =
				answered.role === "assistant" ? answered.usage.input + answered.usage.cacheRead + answered.usage.cacheWrite : 0;
			expect(billed).toBeLessThanOrEqual(FENCE_BUDGET);
			expect(pairingProblems(h.captured[1].context.messages)).toEqual([]);
			expect(rt.recorder.counters().unattributed).toBe(0);
			expect(h.extensionErrors).toEqual([]);
		} finally {
			h.dispose();
		}
	});
});

/** A workload file big enough that a read of it crosses the evidence threshold (16 kB). */
function bigSourceFile(): string {
	const walk = (dir: string): string | undefined => {
		for (const e of readdirSync(dir, { withFileTypes: true })) {
			const full = join(dir, e.name);
			if (e.isDirectory() && e.name !== "bundle") {
				const found = walk(full);
				if (found) return found;
			} else if (e.name.endsWith(".js") && statSync(full).size > 40_000) return full;
		}
		return undefined;
	};
	const found = walk(WORKLOAD_ROOT);
	if (!found) throw new Error("no big source file in the workload root");
	return found;
}

describe("evidence", () => {
	it("a big read result lands as a 0444 file under the session's evidence folder, byte for byte", async () => {
		let fold: PiFold | undefined;
		const h = await makeSession({
			cwd: WORKLOAD_ROOT,
			persist: true,
			extensions: [
				(pi) => {
					fold = registerPiFold(pi);
				},
			],
		});
		try {
			const path = bigSourceFile();
			h.script([
				fauxAssistantMessage(
					[
						fauxToolCall("read", { path, limit: 1500 }, { id: "bigread" }),
						fauxToolCall("ls", { path: "." }, { id: "small" }),
					],
					{ stopReason: "toolUse" },
				),
				fauxAssistantMessage(fauxText("read it")),
			]);
			await h.session.prompt("read the big file");
			const status = runtimeOf(fold).status();
			expect(h.extensionErrors).toEqual([]);
			const ev = status.evidence;
			expect(ev?.written).toBe(1); // the ls listing is under the threshold
			expect(ev?.problems.count).toBe(0);
			expect(ev?.skippedOverCap.count).toBe(0);
			const file = h.session.sessionManager.getSessionFile() as string;
			const dir = join(dirname(file), EVIDENCE_DIR_NAME, h.session.sessionManager.getSessionId());
			expect(ev?.dir).toBe(dir);
			const names = readdirSync(dir);
			expect(names).toHaveLength(1);
			expect(names[0]).toMatch(/-read-bigread\.txt$/);
			const st = statSync(join(dir, names[0]));
			expect(st.mode & 0o777).toBe(0o444);
			const result = toolResultFor(h.session.messages, "bigread");
			const text = (result?.content ?? []).map((b) => (b.type === "text" ? b.text : "")).join("\n");
			expect(readFileSync(join(dir, names[0]), "utf8")).toBe(text);
			expect(st.size).toBe(ev?.usedBytes);
		} finally {
			h.dispose();
		}
	});
});

describe("the unbriefed-marks notice", () => {
	it("appears only at the end of commit batches, bounded, and adds no rewrite of its own", async () => {
		let fold: PiFold | undefined;
		const h = await makeSession({
			cwd: WORKLOAD_ROOT,
			persist: true,
			extensions: [
				(pi) => {
					fold = registerPiFold(pi, {
						providerInputBudget: 30_000,
						// Small marks and a shallow commit: several marks stay pending after each commit.
						thresholds: { minFoldChars: 1500, maxTarget: 0.5, minTarget: 0.45 },
					});
				},
			],
		});
		try {
			h.script(workloadSteps(16, { seed: 7 }));
			await h.session.prompt(WORKLOAD_PROMPT);
			const rt = runtimeOf(fold);
			expect(h.extensionErrors).toEqual([]);
			expect(rt.status().problems).toEqual([]);
			expect(rt.commits.length).toBeGreaterThan(0);
			const branch = h.session.sessionManager.getBranch();
			const notices = branch.filter((e) => e.type === "custom_message" && e.customType === UNBRIEFED_NOTICE_TYPE);
			expect(notices.length).toBeGreaterThan(0);
			expect(notices.length).toBeLessThanOrEqual(rt.commits.length);
			for (const n of notices) {
				if (n.type !== "custom_message" || typeof n.content !== "string") throw new Error("notice is not text");
				expect(Buffer.byteLength(n.content)).toBeLessThanOrEqual(NOTICE_MAX_BYTES);
				// Part of a commit batch: right after its receipt.
				const prev = branch[branch.indexOf(n) - 1];
				expect(prev.type === "custom_message" && prev.customType === RECEIPT_TYPE).toBe(true);
				// It names marks that really are pending now or were committed later.
				const ids = [...n.content.matchAll(/^- (\S+) /gm)].map((m) => m[1]);
				expect(ids.length).toBeGreaterThan(0);
				for (const id of ids) expect(rt.lattice?.get(id as never)).toBeDefined();
			}
			const counters = rt.recorder.counters();
			expect(counters.unattributed).toBe(0);
			expect(counters.attributed.commit).toBe(rt.commits.length);
		} finally {
			h.dispose();
		}
	});
});

describe("failure containment", () => {
	it("a store that cannot be written: no exception reaches Pi, status shows it, nothing folds, requests only append", async () => {
		let fold: PiFold | undefined;
		const h = await makeSession({
			cwd: WORKLOAD_ROOT,
			persist: true,
			extensions: [
				(pi) => {
					fold = registerPiFold(pi, {
						providerInputBudget: 60_000,
						// Fire early, far below the budget, so the fence stays out of it.
						thresholds: { maxTarget: 0.2, minTarget: 0.1 },
					});
				},
			],
		});
		try {
			// A file where the fold store's directory must go: every store write fails for real.
			const file = h.session.sessionManager.getSessionFile() as string;
			writeFileSync(join(dirname(file), STORE_DIR_NAME), "not a directory");
			h.script(workloadSteps(8, { seed: 2 }));
			await h.session.prompt(WORKLOAD_PROMPT);
			const rt = runtimeOf(fold);
			const status = rt.status();
			expect(h.extensionErrors).toEqual([]);
			expect(status.problems.some((p) => /commit/.test(p) && /nothing folded/.test(p))).toBe(true);
			expect(status.commits).toEqual([]);
			expect(status.fence.stopped).toBe(0);
			const branch = h.session.sessionManager.getBranch();
			expect(branch.some((e) => e.type === "context_edit")).toBe(false);
			const work = h.captured.map((c) => c.context.messages as Message[]);
			expect(work).toHaveLength(9);
			for (let i = 1; i < work.length; i++) expect(isAppendOf(work[i - 1], work[i]), `request ${i}`).toBe(true);
			for (const w of work) expect(pairingProblems(w)).toEqual([]);
			expect(rt.recorder.counters().unattributed).toBe(0);
			const answers = branch.flatMap((e) =>
				e.type === "message" && e.message.role === "assistant" ? [e.message] : [],
			);
			expect(answers.at(-1)?.stopReason).toBe("stop");
			// Reopening the session file still works (nothing half-written into it).
			expect(SessionManager.open(file, h.sessionDir).getBranch().length).toBe(branch.length);
		} finally {
			h.dispose();
		}
	});
});

describe("the version guard", () => {
	it("accepts this Pi by its capability", () => {
		expect(checkHost({ VERSION, SessionManager })).toEqual({ ok: true, version: VERSION });
	});

	it("refuses a Pi without context_edit, naming the version it needs, whatever its version string says", () => {
		class OldSessionManager {
			buildSessionProjection() {}
			appendMessage() {}
		}
		const old = checkHost({ VERSION: "1.5.3", SessionManager: OldSessionManager });
		expect(old.ok).toBe(false);
		if (old.ok) return;
		expect(old.reason).toContain(`Pi ${REQUIRED_PI_VERSION} or later`);
		expect(old.reason).toContain("1.5.3");
		// A version string claiming 1.6 does not help without the capability.
		expect(checkHost({ VERSION: "1.6.0", SessionManager: OldSessionManager }).ok).toBe(false);
		expect(checkHost({}).ok).toBe(false);
		expect(checkHost({ SessionManager: { prototype: { appendContextEdit() {} } } }).ok).toBe(false); // not a class
	});
});
