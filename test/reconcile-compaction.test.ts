// After a Pi compaction, the window repair compares only what pi-fold edited since: edits from
// before it belonged to folds that may not have survived it, and Pi's projection of what they hid is
// taken as it is (showing it again would rewrite the window, and could show a result without its call).
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import { describe, expect, it } from "vitest";
import { editedTargets } from "../src/edits/reconcile.ts";

const at = "2026-01-01T00:00:00.000Z";
const message = (id: string, parentId: string | null): SessionEntry =>
	({
		type: "message",
		id,
		parentId,
		timestamp: at,
		message: { role: "user", content: id, timestamp: 0 },
	}) as SessionEntry;
const edit = (id: string, parentId: string, targetId: string): SessionEntry =>
	({ type: "context_edit", id, parentId, timestamp: at, targetId, replacement: null }) as SessionEntry;
const compaction = (id: string, parentId: string, firstKeptEntryId: string): SessionEntry =>
	({
		type: "compaction",
		id,
		parentId,
		timestamp: at,
		summary: "s",
		firstKeptEntryId,
		tokensBefore: 1,
	}) as SessionEntry;

describe("editedTargets", () => {
	// The branch: m0, m1, e1 (hides m1), c (compaction keeping m1 on), m2, e2 (hides m2).
	const m1 = message("m1", "m0");
	const e1 = edit("e1", "m1", "m1");
	const c = compaction("c", "e1", "m1");
	const m2 = message("m2", "c");
	const e2 = edit("e2", "m2", "m2");

	it("without a compaction, every edit counts", () => {
		expect(editedTargets([message("m0", null), m1, e1, m2, e2])).toEqual(new Set(["m1", "m2"]));
	});

	it("after one (Pi's context entries: the compaction, what it kept, what came after), only the edits since", () => {
		expect(editedTargets([c, m1, e1, m2, e2])).toEqual(new Set(["m2"]));
	});

	it("with the compaction the newest entry, none", () => {
		expect(editedTargets([c, m1, e1])).toEqual(new Set());
	});
});
