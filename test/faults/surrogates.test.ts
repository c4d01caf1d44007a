// A lone UTF-16 surrogate (valid in JSON and JS strings, not encodable as UTF-8) in a tool call's
// arguments or in the agent's own brief must not stop folding: briefs are made well-formed by
// construction and say so, and a fold that cannot be stored is skipped by id while the rest commit.
import { afterAll, describe, expect, it } from "vitest";
import { removeTempDirs } from "../../harness/pi-harness.ts";
import type { FoldRecord } from "../../src/fold-types.ts";
import { StoreBatch } from "../../src/store/index.ts";
import {
	call,
	callIdsOfEntry,
	detailsOf,
	finish,
	foldAgent,
	healthy,
	reopenMatches,
	resultText,
	rtOf,
	run,
	toolStep,
	work,
} from "../helpers/fold-agent.ts";
import { auditFolds, foldedSession, invalidRequests, runWorkload } from "./fault-session.ts";

afterAll(removeTempDirs);

const LONE = "x\ud800y\udc00z";

describe("a lone surrogate in a tool call's arguments", () => {
	it("folds like anything else: the brief shows U+FFFD and says so, and later commits go on", async () => {
		const agent = await foldAgent({ budget: 14_000 });
		try {
			// An early bash call whose command holds two unpaired surrogates (its brief quotes it).
			await run(agent, [
				...work(agent, "a", 1, 11),
				toolStep(agent, "Checking one odd value.", ["odd", "bash", { command: `printf '%s\\n' '${LONE}'` }]),
				...work(agent, "b", 14, 12),
				finish(agent, "done"),
			]);
			const rt = rtOf(agent);
			const status = rt.status();
			expect(status.problems).toEqual([]);
			expect(status.commits.length).toBeGreaterThanOrEqual(2);
			expect(status.commits.flatMap((c) => c.skipped)).toEqual([]);
			// The fold holding the call is standing, and its brief is well-formed and says what changed.
			const sm = agent.h.session.sessionManager;
			const callEntry = sm.getBranch().find((e) => e.type === "message" && callIdsOfEntry(e).includes("odd"));
			expect(callEntry).toBeDefined();
			const lattice = rt.lattice;
			const position = lattice?.entries.findIndex((e) => e.id === callEntry?.id) ?? -1;
			const holder = lattice?.folds().find((f) => f.kind === "tool-batch" && f.start <= position && position < f.end);
			expect(holder?.state).not.toBe("pending");
			expect(holder?.brief).not.toMatch(/[\uD800-\uDFFF]/u);
			expect(holder?.brief).toContain("\uFFFD");
			expect(holder?.brief).toContain("2 unpaired surrogates shown as U+FFFD");
			// The original keeps the exact arguments: the store holds the session's own bytes.
			expect(auditFolds(rt, sm)).toBeGreaterThan(0);
			healthy(agent);
		} finally {
			agent.h.dispose();
		}
	});
});

describe("a lone surrogate in the agent's brief", () => {
	it("is replaced, the tool's answer says so, and the mark commits with it", async () => {
		const agent = await foldAgent({ budget: 14_000 });
		try {
			const firstMark = () => rtOf(agent).lattice?.pending()[0]?.id ?? "none";
			await run(agent, [
				...work(agent, "a", 3, 3),
				call(agent, "b1", () => ({ action: "brief", id: firstMark(), text: `notes on ${LONE}` })),
				...work(agent, "c", 12, 4),
				finish(agent, "done"),
			]);
			const answer = resultText(agent, "b1");
			expect(answer).toContain("2 unpaired UTF-16 surrogates were replaced by U+FFFD");
			const details = detailsOf<{ result: { id: string; replaced: number } }>(agent, "b1").result;
			expect(details.replaced).toBe(2);
			const rt = rtOf(agent);
			expect(rt.lattice?.get(details.id)?.state).not.toBe("pending");
			const record = rt.store?.readRecord(rt.records.get(details.id) as string) as FoldRecord;
			expect(record.brief).toBe("notes on x\uFFFDy\uFFFDz");
			expect(record.provenance).toBe("supplied");
			healthy(agent);
			reopenMatches(agent);
		} finally {
			agent.h.dispose();
		}
	});
});

describe("a fold that cannot be stored", () => {
	it("is skipped and named; the other chosen folds commit in the same batch", async () => {
		// The fault: one record cannot be written (a full disk for that write). Nothing in the session
		// can cause this for one fold only, so the store's write batches holding it are made to fail.
		const stage = StoreBatch.prototype.putRecords;
		const commit = StoreBatch.prototype.commit;
		const doomed = new WeakSet<StoreBatch>();
		let victim: string | undefined;
		StoreBatch.prototype.putRecords = function (this: StoreBatch, records: readonly FoldRecord[]) {
			victim ??= records[0]?.id;
			if (records.some((r) => r.id === victim)) doomed.add(this);
			return stage.call(this, records);
		};
		StoreBatch.prototype.commit = function (this: StoreBatch) {
			if (doomed.has(this)) {
				return Promise.reject(Object.assign(new Error(`ENOSPC: no space left on device, write`), { code: "ENOSPC" }));
			}
			return commit.call(this);
		};
		const s = await foldedSession();
		try {
			await runWorkload(s, 16, { seed: 11 });
			const rt = s.rt();
			const status = rt.status();
			expect(victim).toBeDefined();
			// The victim stays pending, named in status with the reason; every commit still happened.
			expect(rt.lattice?.get(victim as string)?.state).toBe("pending");
			expect(status.unstorable).toEqual([{ id: victim, reason: expect.stringContaining("ENOSPC") }]);
			expect(status.problems.some((p) => p.includes(`fold ${victim} could not be stored`))).toBe(true);
			expect(status.commits.length).toBeGreaterThanOrEqual(2);
			expect(status.commits[0].skipped).toEqual([victim]);
			expect(status.commits[0].committed.length).toBeGreaterThan(0);
			// It is not chosen again by later threshold commits (no repeated failures).
			expect(status.commits.slice(1).flatMap((c) => c.skipped)).toEqual([]);
			expect(auditFolds(rt, s.h.session.sessionManager)).toBeGreaterThan(0);
			expect(invalidRequests(s.h)).toEqual([]);
		} finally {
			StoreBatch.prototype.putRecords = stage;
			StoreBatch.prototype.commit = commit;
			s.h.dispose();
		}
	});
});
