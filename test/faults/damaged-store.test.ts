// Damage the store and the session file of a folded session, then reopen it and keep working, for
// a store in packs (what pi-fold writes) and one in the loose layout (what it wrote before packs).
// A corrupt or symlinked record is set aside (a loose file renamed beside it; a pack renamed once
// its good entries are written anew; never deleted) and written again from the session's own
// bytes; when the session's copy changed too, the fold stays (the window still hides its entries)
// and is listed as damaged; a fold whose entries were edited in the session file stays reachable by
// the id its brief shows, served from the store's original bytes.
import { readdirSync, readFileSync, symlinkSync, unlinkSync } from "node:fs";
import { basename, dirname } from "node:path";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { removeTempDirs } from "../../harness/pi-harness.ts";
import { editedTargets, windowRepair } from "../../src/edits/reconcile.ts";
import type { FoldId } from "../../src/fold-types.ts";
import { isPackQuarantineName } from "../../src/store/index.ts";
import { isQuarantineName } from "../../src/store/objects.ts";
import { overwrite } from "../fixtures/store-data.ts";
import { flipInPack } from "../helpers/store-audit.ts";
import {
	auditFolds,
	editTimestamp,
	type FoldedSession,
	foldedFile,
	foldedSession,
	invalidRequests,
	runWorkload,
} from "./fault-session.ts";

afterAll(removeTempDirs);

/** Pi's window and the lattice agree entry by entry (what status counts is what the window holds). */
function windowAgrees(s: FoldedSession): void {
	const rt = s.rt();
	const sm = s.h.session.sessionManager;
	const view = rt.view;
	if (!view) throw new Error("no session open");
	const left = windowRepair(
		view.lattice,
		view.context.sources,
		sm.buildSessionProjection().entries,
		editedTargets(view.raw),
	);
	expect(left.reasons).toEqual([]);
}

async function reopenAndWork(file: string): Promise<FoldedSession> {
	const s = await foldedSession({ consolidateAfter: 20, session: { open: file } });
	const before = s.h.captured.length;
	await runWorkload(s, 8, { seed: 32, idPrefix: "r" });
	expect(invalidRequests(s.h, before)).toEqual([]);
	return s;
}

describe("a damaged store", () => {
	it("loose layout: a corrupt and a symlinked record are set aside and written again from the session; commits go on", async () => {
		const { file, records } = await foldedFile("loose");
		const s0 = await foldedSession({ session: { open: file } });
		const store = s0.rt().store;
		s0.h.dispose();
		if (!store) throw new Error("no store");
		const [[idA, hashA], [idB, hashB]] = records;
		const pathA = store.records.pathOf(hashA);
		const pathB = store.records.pathOf(hashB);
		overwrite(pathA, "not a record");
		unlinkSync(pathB);
		symlinkSync("/dev/zero", pathB);

		const s = await reopenAndWork(file);
		try {
			const rt = s.rt();
			const status = rt.status();
			for (const id of [idA, idB]) {
				expect(status.problems).toContainEqual(
					expect.stringMatching(new RegExp(`fold ${id}: .*written again from the session's own bytes`)),
				);
			}
			expect(status.problems.filter((p) => p.includes("set aside as"))).toHaveLength(2);
			expect(status.damaged).toEqual([]);
			// Nothing deleted: both damaged files are beside the rewritten ones, under quarantine names.
			for (const path of [pathA, pathB]) {
				expect(readdirSync(dirname(path)).some((n) => isQuarantineName(n) && path.endsWith(n.slice(0, 64)))).toBe(true);
			}
			expect(status.commits.length).toBeGreaterThan(0);
			expect(status.problems.filter((p) => p.includes("nothing folded"))).toEqual([]);
			auditFolds(rt, s.h.session.sessionManager);
			windowAgrees(s);
		} finally {
			s.h.dispose();
		}
	});

	it("packs: two corrupt records are written again from the session with their packs' good entries; the packs are set aside", async () => {
		const { file, records } = await foldedFile();
		const s0 = await foldedSession({ session: { open: file } });
		const store = s0.rt().store;
		s0.h.dispose();
		if (!store) throw new Error("no store");
		const [idA, hashA] = records[0];
		const [idB, hashB] = records[records.length - 1];
		const packs = [...new Set([flipInPack(store, hashA), flipInPack(store, hashB)])];
		const bytes = new Map(packs.map((p) => [p, readFileSync(p)]));

		const s = await reopenAndWork(file);
		try {
			const rt = s.rt();
			const status = rt.status();
			for (const id of [idA, idB]) {
				expect(status.problems).toContainEqual(
					expect.stringMatching(new RegExp(`fold ${id}: .*written again from the session's own bytes`)),
				);
			}
			expect(status.problems.filter((p) => p.includes("set aside as"))).toHaveLength(packs.length);
			expect(status.damaged).toEqual([]);
			// Nothing deleted: each damaged pack is beside the new ones under a quarantine name, as it was.
			for (const path of packs) {
				const aside = readdirSync(dirname(path)).filter((n) => isPackQuarantineName(n) && n.startsWith(basename(path)));
				expect(aside).toHaveLength(1);
				expect(readFileSync(`${dirname(path)}/${aside[0]}`).equals(bytes.get(path) as Buffer)).toBe(true);
			}
			expect(status.commits.length).toBeGreaterThan(0);
			expect(status.problems.filter((p) => p.includes("nothing folded"))).toEqual([]);
			// Every fold verifies, the ones whose leaves were in the set-aside packs included.
			auditFolds(rt, s.h.session.sessionManager);
			windowAgrees(s);
		} finally {
			s.h.dispose();
		}
	});

	it.each(["packs", "loose"] as const)(
		"%s: a damaged record whose session copy changed too: the fold stays, listed as damaged, never consolidated",
		async (layout) => {
			const { file, records } = await foldedFile(layout);
			const s0 = await foldedSession({ session: { open: file } });
			const rt0 = s0.rt();
			const [idA, hashA] = records[0];
			const fold = rt0.lattice?.get(idA);
			const firstEntry = fold && rt0.view?.context.sources[fold.start];
			const store = rt0.store;
			s0.h.dispose();
			if (!firstEntry || !store) throw new Error("no fold to damage");
			if (layout === "loose") overwrite(store.records.pathOf(hashA), "not a record");
			else flipInPack(store, hashA);
			editTimestamp(file, firstEntry.id);

			const s = await foldedSession({ consolidateAfter: 2, session: { open: file } });
			try {
				const rt = s.rt();
				const damaged = rt.status().damaged;
				expect(damaged).toHaveLength(1);
				expect(damaged[0].reason).toMatch(/not repaired: the session's copy of its entries changed/);
				// It is in the lattice (committed) under its new id, and the window agrees with the lattice.
				const now = rt.view?.aliases.get(idA);
				expect(now).toBeDefined();
				expect(rt.lattice?.get(now as FoldId)?.state).toBe("committed");
				windowAgrees(s);
				await runWorkload(s, 8, { seed: 32, idPrefix: "r" });
				expect(invalidRequests(s.h)).toEqual([]);
				// Consolidation ran (consolidateAfter 2), and no new fold was built over the damaged one.
				const held = rt.lattice?.get(now as FoldId);
				expect(held?.parent ?? null).toBeNull();
				expect(rt.status().commits.some((c) => c.consolidated.length > 0)).toBe(true);
			} finally {
				s.h.dispose();
			}
		},
	);
});

describe("a folded entry edited in the session file", () => {
	it("its fold keeps its id (the agent's id means one thing), peek serves the store's original bytes, status says what changed", async () => {
		const { file, records } = await foldedFile();
		const [idA, recordA] = records[0];
		const original = SessionManager.open(file);
		const s0 = await foldedSession({ session: { open: file } });
		const fold = s0.rt().lattice?.get(idA);
		const entry = fold && s0.rt().view?.context.sources[fold.start];
		const store = s0.rt().store;
		const idsBefore = s0
			.rt()
			.lattice?.folds()
			.map((f) => f.id);
		s0.h.dispose();
		if (!entry || !store) throw new Error("no folded entry");
		expect(store.readRecord(recordA).children.every((c) => c.type === "leaf")).toBe(true);
		const originalLine = JSON.stringify(original.getEntry(entry.id));
		editTimestamp(file, entry.id);

		const s = await foldedSession({ session: { open: file } });
		try {
			const rt = s.rt();
			const status = rt.status();
			expect(status.problems).toContainEqual(
				expect.stringMatching(
					new RegExp(
						`entry ${entry.id} changed in the session file since fold ${idA} was committed: the fold keeps its id.* \\(repaired\\)$`,
					),
				),
			);
			expect(status.problems.filter((p) => p.includes("rebuilds as"))).toEqual([]);
			expect(status.damaged).toEqual([]);
			// Every fold has the id it had, and the lattice's identity is its record's.
			expect(rt.lattice?.folds().map((f) => f.id)).toEqual(idsBefore);
			expect(rt.view?.aliases.size).toBe(0);
			for (const [id, hash] of rt.records) {
				const record = rt.store?.readRecord(hash);
				expect([record?.id, record?.identity]).toEqual([id, rt.lattice?.get(id)?.identity]);
			}
			const peek = s.fold.runtime.actions()?.peek(idA, {});
			expect(peek?.ok, peek && !peek.ok ? peek.reason : "").toBe(true);
			if (!peek?.ok) return;
			expect(peek.fold.id).toBe(idA);
			expect(peek.verifiedBy).toBe("store");
			// One fold of leaves: nothing listed as nested in it (least of all itself).
			expect(peek.slice.text).not.toContain("## nested fold");
			expect(peek.slice.text).toContain(`## entry ${entry.id}`);
			// The store's bytes: the original timestamp, not the edited one.
			const stored = rt.store?.verifyFold(recordA, { id: idA }).leaves[0];
			expect(Buffer.from(stored?.bytes ?? []).toString("utf8")).toBe(originalLine);
			expect(JSON.stringify(s.h.session.sessionManager.getEntry(entry.id))).not.toBe(originalLine);
			windowAgrees(s);
			// Work goes on over it: commits, and no request is invalid.
			await runWorkload(s, 8, { seed: 32, idPrefix: "r" });
			expect(invalidRequests(s.h)).toEqual([]);
			expect(rt.status().commits.length).toBeGreaterThan(0);
			expect(rt.lattice?.get(idA)?.state).toBe("committed");
		} finally {
			s.h.dispose();
		}
	});
});
