// Damaged leaf objects (the exact bytes of folded entries) in the store of a folded session: gone,
// replaced by a symlink or cut short while the session is closed, or flipped inside a pack, closed
// or under a running session. The session file holds the same bytes: a leaf whose entry still
// hashes to it is set aside and written again from them (found at open when it is gone, replaced
// or cut short; on the first read that fails verification otherwise), and status says it was
// repaired. A leaf that cannot be healed leaves its fold listed as damaged, never folded into a
// new parent.
import { symlinkSync, truncateSync, unlinkSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { removeTempDirs } from "../../harness/pi-harness.ts";
import type { FoldId, FoldRecord } from "../../src/fold-types.ts";
import type { FoldRuntime } from "../../src/runtime/runtime.ts";
import type { FoldStore } from "../../src/store/index.ts";
import { runtimeLines } from "../../src/tool/status.ts";
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

type Leaf = Extract<FoldRecord["children"][number], { type: "leaf" }>;

/** A committed fold whose record names leaf objects, with those leaves. */
function leafFold(store: FoldStore, records: readonly [FoldId, string][], skip = 0): { id: FoldId; leaves: Leaf[] } {
	const found = records
		.map(([id, hash]) => ({ id, leaves: store.readRecord(hash).children.filter((c): c is Leaf => c.type === "leaf") }))
		.filter((f) => f.leaves.length >= 3);
	const pick = found[skip];
	if (!pick) throw new Error("no committed fold with three leaves");
	return pick;
}

/** Every leaf object the store's records name looks whole again. */
function leavesWhole(rt: FoldRuntime): void {
	const store = rt.store as FoldStore;
	for (const hash of rt.records.values()) {
		const leaves = store.readRecord(hash).children.filter((c): c is Leaf => c.type === "leaf");
		expect(store.objects.looksWhole(leaves).filter((w) => w !== undefined)).toEqual([]);
	}
}

function repairedLine(rt: FoldRuntime, fold: FoldId): string | undefined {
	return rt.status().problems.find((p) => p.includes(fold) && p.includes("written again from the session's own bytes"));
}

async function keepWorking(s: FoldedSession): Promise<void> {
	const before = s.h.captured.length;
	await runWorkload(s, 8, { seed: 52, idPrefix: "r" });
	expect(invalidRequests(s.h, before)).toEqual([]);
}

describe("damaged leaf objects", () => {
	it("loose layout, closed: a leaf gone, one a symlink, one cut short are written again at open", async () => {
		const { file, records } = await foldedFile("loose");
		const s0 = await foldedSession({ session: { open: file } });
		const store = s0.rt().store as FoldStore;
		s0.h.dispose();
		const { id, leaves } = leafFold(store, records);
		const [gone, linked, cut] = leaves.map((l) => store.objects.pathOf(l.hash));
		unlinkSync(gone);
		unlinkSync(linked);
		symlinkSync("/dev/zero", linked);
		truncateSync(cut, 3);

		const s = await foldedSession({ consolidateAfter: 20, session: { open: file } });
		try {
			const rt = s.rt();
			// Found at open, before anything read the fold; said to be repaired.
			expect(repairedLine(rt, id)).toMatch(/leaf object [0-9a-f]{64} is .* \(and 2 more\); .*\(repaired\)$/);
			expect(rt.status().damaged).toEqual([]);
			leavesWhole(rt);
			expect(s.fold.runtime.actions()?.peek(id, {})?.ok).toBe(true);
			expect(runtimeLines(rt.status()).join("\n")).toMatch(/^problems: \d+ needs? action, [1-9]\d* repaired$/m);
			await keepWorking(s);
			auditFolds(rt, s.h.session.sessionManager);
		} finally {
			s.h.dispose();
		}
	});

	it("packs, closed: a leaf flipped inside its pack is healed by the first read, which succeeds", async () => {
		const { file, records } = await foldedFile();
		const s0 = await foldedSession({ session: { open: file } });
		const store = s0.rt().store as FoldStore;
		s0.h.dispose();
		const { id, leaves } = leafFold(store, records);
		flipInPack(store, leaves[1].hash);

		const s = await foldedSession({ consolidateAfter: 20, session: { open: file } });
		try {
			const rt = s.rt();
			expect(repairedLine(rt, id)).toBeUndefined();
			const peek = s.fold.runtime.actions()?.peek(id, {});
			expect(peek?.ok, peek && !peek.ok ? peek.reason : "").toBe(true);
			expect(repairedLine(rt, id)).toMatch(new RegExp(`entry ${leaves[1].entryId}: .*\\(repaired\\)$`));
			expect(rt.status().damaged).toEqual([]);
			await keepWorking(s);
			auditFolds(rt, s.h.session.sessionManager);
		} finally {
			s.h.dispose();
		}
	});

	it("packs, under a running session: a flipped leaf is healed by the peek that finds it", async () => {
		const s = await foldedSession({ consolidateAfter: 20 });
		try {
			await runWorkload(s, 12, { seed: 31 });
			const rt = s.rt();
			const store = rt.store as FoldStore;
			const { id, leaves } = leafFold(store, [...rt.records]);
			flipInPack(store, leaves[2].hash);
			const peek = s.fold.runtime.actions()?.peek(id, {});
			expect(peek?.ok, peek && !peek.ok ? peek.reason : "").toBe(true);
			expect(repairedLine(rt, id)).toMatch(/\(repaired\)$/);
			expect(rt.status().problems.some((p) => p.includes("set aside as"))).toBe(true);
			expect(rt.status().damaged).toEqual([]);
			await keepWorking(s);
			auditFolds(rt, s.h.session.sessionManager);
		} finally {
			s.h.dispose();
		}
	});

	it("a leaf that cannot be healed (its entry changed in the session file too): the fold is damaged, never consolidated", async () => {
		const { file, records } = await foldedFile();
		const s0 = await foldedSession({ session: { open: file } });
		const store = s0.rt().store as FoldStore;
		s0.h.dispose();
		const { id, leaves } = leafFold(store, records);
		flipInPack(store, leaves[0].hash);
		editTimestamp(file, leaves[0].entryId);

		const s = await foldedSession({ consolidateAfter: 2, session: { open: file } });
		try {
			const rt = s.rt();
			const peek = s.fold.runtime.actions()?.peek(id, {});
			expect(peek?.ok).toBe(false);
			const reason = peek && !peek.ok ? peek.reason : "";
			expect(reason).toContain(`fold ${id}`);
			expect(reason).toContain(leaves[0].entryId);
			expect(reason).toMatch(/not repaired: the session's copy of entry .* changed too/);
			const damaged = rt.status().damaged.map((d) => d.id);
			const now = rt.view?.aliases.get(id) ?? id;
			expect(damaged).toContain(now);
			expect(runtimeLines(rt.status()).join("\n")).toMatch(/^damaged folds: [1-9]/m);
			await keepWorking(s);
			// Consolidation ran (consolidateAfter 2), and no new fold was built over the damaged one.
			expect(rt.status().commits.some((c) => c.consolidated.length > 0)).toBe(true);
			expect(rt.lattice?.get(now)?.parent ?? null).toBeNull();
		} finally {
			s.h.dispose();
		}
	});
});
