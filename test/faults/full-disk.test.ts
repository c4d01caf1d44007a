// A full disk while a session works: every commit fails (the store cannot write), so the window
// grows past the serving budget with its marks still pending. After a reopen, the person's next
// prompt must reach the model: the request is folded first (as an overflow is) and then sent,
// never stopped by the fence while folds could make room.
import { fauxAssistantMessage, type Message } from "@earendil-works/pi-ai";
import { afterAll, describe, expect, it } from "vitest";
import { removeTempDirs, textOf } from "../../harness/pi-harness.ts";
import { StoreBatch } from "../../src/store/index.ts";
import { auditFolds, foldedSession, invalidRequests, runWorkload } from "./fault-session.ts";

afterAll(removeTempDirs);

/** Every store batch fails as a full disk would, until restored (nothing else can fail only the store's writes). */
function storeDiskFull(): { restore(): void; failures(): number } {
	const commit = StoreBatch.prototype.commit;
	let failures = 0;
	StoreBatch.prototype.commit = () => {
		failures++;
		return Promise.reject(Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" }));
	};
	return {
		restore: () => {
			StoreBatch.prototype.commit = commit;
		},
		failures: () => failures,
	};
}

/** A person's prompt with a pasted log: the window was at the budget already, this takes it well past. */
const PROMPT = `after the disk filled up, this is the log:\n${Array.from({ length: 240 }, (_, i) => `line ${i}: write failed, retrying`).join("\n")}`;

const BUDGET = 14_000;

/** A session that worked on a full disk: no commit, its marks pending, the window at the budget. Its file, closed. */
async function workedOnFullDisk(): Promise<string> {
	const s0 = await foldedSession({ budget: BUDGET });
	const full = storeDiskFull();
	try {
		await runWorkload(s0, 14, { seed: 41 });
	} finally {
		full.restore();
	}
	expect(full.failures()).toBeGreaterThan(0);
	const rt0 = s0.rt();
	expect(rt0.status().commits).toEqual([]);
	expect(rt0.lattice?.pending().length).toBeGreaterThan(0);
	const file = s0.h.session.sessionManager.getSessionFile() as string;
	s0.h.dispose();
	return file;
}

describe("a full disk, then a reopen and a prompt", () => {
	it("the first request is folded before it is sent, and the prompt reaches the model", async () => {
		const budget = BUDGET;
		const file = await workedOnFullDisk();
		const s = await foldedSession({ budget, session: { open: file } });
		try {
			s.h.script([fauxAssistantMessage("here is what we found")]);
			await s.h.session.prompt(PROMPT);
			const rt = s.rt();
			const status = rt.status();
			expect(status.fence.stopped, status.fence.last?.message).toBe(0);
			// The prompt reached the model, in a request within the budget.
			expect(s.h.captured).toHaveLength(1);
			const sent = s.h.captured[0].context.messages as Message[];
			const last = sent[sent.length - 1];
			expect(last.role).toBe("user");
			expect(textOf(last)).toContain(PROMPT);
			expect(status.commits.map((c) => c.reason)).toEqual(["fold"]);
			expect(status.commits[0].after).toBeLessThanOrEqual(budget);
			expect(status.rewrites.unattributed).toBe(0);
			expect(invalidRequests(s.h)).toEqual([]);
			auditFolds(rt, s.h.session.sessionManager);
		} finally {
			s.h.dispose();
		}
	});

	it("the disk still full: folding cannot make room, so the fence stops the request and says what to do", async () => {
		const file = await workedOnFullDisk();
		const s = await foldedSession({ budget: BUDGET, session: { open: file } });
		const full = storeDiskFull();
		try {
			s.h.script([fauxAssistantMessage("never asked")]);
			await s.h.session.prompt(PROMPT);
			const status = s.rt().status();
			expect(s.h.captured).toEqual([]);
			expect(status.fence.stopped).toBe(1);
			expect(status.fence.last?.message).toMatch(
				/staged marks? could not be folded before it \(\/fold-status says why; \/fold tries again\)\..* To go on: /,
			);
			expect(status.problems).toContainEqual(
				expect.stringMatching(
					/^context: a prompt's first request at \d+% of the budget could not be folded before it was sent: .*ENOSPC/,
				),
			);
		} finally {
			full.restore();
			s.h.dispose();
		}
	});
});
