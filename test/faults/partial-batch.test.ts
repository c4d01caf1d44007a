// A commit batch Pi appended only in part, in a live session: the disk filled up in the middle of
// the appends, or a person navigated (/tree) to an entry inside a batch. Either way Pi's window
// hides entries that no committed fold accounts for, some of a tool batch but not all. pi-fold
// finds the drift (at the request, or when the branch changes), shows a repaired window at once
// and makes the repair durable at the next boundary: every request stays provider-valid.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import type { Message } from "@earendil-works/pi-ai";
import { afterAll, describe, expect, it } from "vitest";
import { removeTempDirs } from "../../harness/pi-harness.ts";
import type { RuntimeStatus } from "../../src/operations/status.ts";
import { runtimeLines } from "../../src/tool/status.ts";
import { pairingProblems } from "../helpers/requests.ts";
import { auditFolds, foldedSession, invalidRequests, runWorkload } from "./fault-session.ts";

afterAll(removeTempDirs);

/**
 * Make appends to session files fail with ENOSPC from the second context_edit line on, `times`
 * times: the disk fills up after one edit of a commit batch has been written.
 */
function diskFullAfterOneEdit(times: number): { restore(): void; failures(): number } {
	// The fault: a full disk in the middle of Pi's appends. It cannot be caused for one file here,
	// so fs.appendFileSync (which Pi imports by name) is replaced for the duration.
	const append = fs.appendFileSync;
	let failures = 0;
	let edits = 0;
	fs.appendFileSync = ((path: fs.PathOrFileDescriptor, data: string | Uint8Array, options?: fs.WriteFileOptions) => {
		if (typeof path === "string" && path.endsWith(".jsonl") && failures < times) {
			if (edits >= 1) {
				failures++;
				throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
			}
			if (String(data).startsWith('{"type":"context_edit"')) edits++;
		}
		append(path, data, options);
	}) as typeof fs.appendFileSync;
	syncBuiltinESMExports();
	return {
		restore: () => {
			fs.appendFileSync = append;
			syncBuiltinESMExports();
		},
		failures: () => failures,
	};
}

/**
 * Once the repair is appended at a boundary, status says the drift's problems are repaired (each
 * line, and the count apart from what still needs action), in the agent's status text too.
 */
function repairedInStatus(status: RuntimeStatus): void {
	const drift = status.problems.filter((p) => /^(open|context): /.test(p) && !p.startsWith("context: alignment"));
	expect(drift.length).toBeGreaterThan(0);
	for (const p of drift) expect(p).toMatch(/ \(repaired\)$/);
	const open = status.problems.filter((p) => !p.endsWith(" (repaired)"));
	expect(status.problemsOpen).toBe(open.length);
	expect(runtimeLines(status)).toContain(
		`problems: ${open.length} need${open.length === 1 ? "s" : ""} action, ${status.problems.length - open.length} repaired`,
	);
}

describe("a commit batch cut short in a live session", () => {
	it("disk full in the middle of the appends: the drift is found at the next request, repaired, and work goes on", async () => {
		const s = await foldedSession();
		const full = diskFullAfterOneEdit(3);
		try {
			await expect(runWorkload(s, 12, { seed: 21 })).rejects.toThrow(/ENOSPC/);
		} finally {
			full.restore();
		}
		expect(full.failures()).toBeGreaterThan(0);
		const sm = s.h.session.sessionManager;
		// Pi alone would now send a tool result whose call is hidden.
		const orphans = pairingProblems(sm.buildSessionProjection().messages as Message[]).filter((p) =>
			p.includes("orphan"),
		);
		expect(orphans.length).toBeGreaterThan(0);
		const before = s.h.captured.length;
		await runWorkload(s, 8, { seed: 22, idPrefix: "r" });
		const rt = s.rt();
		const status = rt.status();
		expect(invalidRequests(s.h, before)).toEqual([]);
		// Found at the first request after it: the boundary's records missing from the session (or, where
		// that cannot be told, a request holding a result whose call is hidden).
		expect(
			status.problems.some((p) => p.includes("were not appended") || p.includes("tool results whose call is hidden")),
		).toBe(true);
		expect(status.problems.some((p) => p.includes("differ from the committed folds"))).toBe(true);
		repairedInStatus(status);
		expect(status.fence.stopped).toBe(0);
		expect(status.rewrites.unattributed).toBe(0);
		expect(status.commits.length).toBeGreaterThan(1);
		auditFolds(rt, sm);
		expect(pairingProblems(sm.buildSessionProjection().messages as Message[])).toEqual([]);
	});

	it("/tree to an entry inside a commit batch: repaired from the first request on", async () => {
		const s = await foldedSession();
		await runWorkload(s, 10, { seed: 21 });
		const sm = s.h.session.sessionManager;
		const branch = sm.getBranch();
		const firstEdit = branch.findIndex((e) => e.type === "context_edit");
		expect(firstEdit).toBeGreaterThan(0);
		// The second edit of the batch: its first edit (a brief) applies, the rest do not.
		const target = branch[firstEdit + 1];
		expect(target.type).toBe("context_edit");
		await s.h.session.navigateTree(target.id, { summarize: false });
		expect(pairingProblems(sm.buildSessionProjection().messages as Message[]).some((p) => p.includes("orphan"))).toBe(
			true,
		);
		const rt = s.rt();
		expect(rt.status().problems.some((p) => p.includes("differ from the committed folds"))).toBe(true);
		const before = s.h.captured.length;
		await runWorkload(s, 8, { seed: 22, idPrefix: "r" });
		expect(invalidRequests(s.h, before)).toEqual([]);
		const status = rt.status();
		repairedInStatus(status);
		expect(status.fence.stopped).toBe(0);
		expect(status.rewrites.unattributed).toBe(0);
		auditFolds(rt, sm);
		expect(pairingProblems(sm.buildSessionProjection().messages as Message[])).toEqual([]);
	});
});
