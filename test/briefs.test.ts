// Deterministic briefs and the unbriefed-marks notice, on sessions written by Pi's own
// SessionManager (synthetic edge cases) and on the real 2.4 MB fixture session.
import { createHash } from "node:crypto";
import { type SessionEntry, SessionManager } from "@earendil-works/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { copyFixture, FIXTURE_MISSING, skipFixture } from "../harness/fixture.ts";
import { toolBatches } from "../harness/fold-fixture.ts";
import { removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { assistantMessage } from "../harness/synthetic-session.ts";
import { briefForFold, deterministicBrief, readBackSuffix } from "../src/briefs/briefs.ts";
import { principalKey } from "../src/briefs/call-args.ts";
import { callsAcross, readSpan } from "../src/briefs/span.ts";
import { NOTICE_MAX_BYTES, type NoticeFold, unbriefedNotice } from "../src/edits/notice.ts";
import { BRIEF_MAX_CHARS, briefLength, FoldLattice } from "../src/lattice/index.ts";
import { contextEntriesOf } from "../src/session/context-entries.ts";
import { BRIEF_MAX_CHARS as EXPORTED_MAX } from "../src/vocabulary.ts";

const core = nodeCore();
afterAll(removeTempDirs);
if (skipFixture) console.log(`briefs: ${FIXTURE_MISSING}`);

const assistant = assistantMessage;
const call = (id: string, name: string, args: Record<string, unknown>) => ({
	type: "toolCall",
	id,
	name,
	arguments: args,
});
const result = (id: string, name: string, text: string, isError = false) =>
	({
		role: "toolResult",
		toolCallId: id,
		toolName: name,
		content: [{ type: "text", text }],
		isError,
		timestamp: 1,
	}) as never;

/** A lattice over a SessionManager's context, and the entries by id. */
function latticeOf(sm: SessionManager) {
	const context = contextEntriesOf(sm.buildContextEntries(), core);
	const made = FoldLattice.create(core, context.entries);
	if (!made.ok) throw new Error(made.reason);
	const byId = new Map<string, SessionEntry>(context.sources.map((e) => [e.id, e]));
	return { context, lattice: made.lattice, byId };
}

/** Mark [from, to] and write its brief. */
function briefOf(sm: SessionManager, from: string, to: string, kind: "tool-batch" | "chapter" | "peek") {
	const { lattice, byId } = latticeOf(sm);
	const marked = lattice.mark(from, to, kind);
	if (!marked.ok) throw new Error(marked.reason);
	const text = briefForFold(lattice, marked.id, byId);
	if (text === undefined) throw new Error("no brief");
	// Whatever we write, the lattice must accept as a brief.
	expect(lattice.setDeterministicBrief(marked.id, text).ok).toBe(true);
	return { id: marked.id, text, again: briefForFold(lattice, marked.id, byId) };
}

function expectWellFormed(b: { id: string; text: string; again?: string }) {
	expect(briefLength(b.text)).toBeLessThanOrEqual(BRIEF_MAX_CHARS);
	expect(b.text).toContain(b.id);
	expect(b.text.endsWith(readBackSuffix(b.id))).toBe(true);
	expect(b.again).toBe(b.text);
	// No lone surrogate anywhere: every cut fell between code points.
	expect(b.text).toBe(Buffer.from(b.text, "utf8").toString("utf8"));
}

/** One batch of the given calls and results, then a note; returns the batch's first and last entry ids. */
function batchSession(calls: { name: string; args: Record<string, unknown>; out: string; error?: boolean }[]) {
	const sm = SessionManager.inMemory("/tmp");
	sm.appendMessage({ role: "user", content: "Look at the repository.", timestamp: 1 });
	const blocks = calls.map((c, k) => call(`c${k}`, c.name, c.args));
	const first = sm.appendMessage(assistant([{ type: "text", text: "Reading the sources first." }, ...blocks]));
	let last = first;
	calls.forEach((c, k) => {
		last = sm.appendMessage(result(`c${k}`, c.name, c.out, c.error));
	});
	sm.appendMessage(assistant([{ type: "text", text: "Done." }], "stop"));
	return { sm, first, last };
}

describe("deterministic briefs on synthetic tool batches", () => {
	it("16 calls with long results: each call line still names its principal argument whole", () => {
		const commands = Array.from(
			{ length: 16 },
			(_, k) => `grep -n "export" modes/interactive/components/widget-number-${k}.d.ts | head -n 40`,
		);
		const { sm, first, last } = batchSession(
			commands.map((command, k) => ({
				name: "bash",
				args: { command, timeout: 30 },
				out: `${k}: export x\n`.repeat(400),
			})),
		);
		const b = briefOf(sm, first, last, "tool-batch");
		expectWellFormed(b);
		const lines = b.text.split("\n");
		commands.forEach((command, k) => {
			const line = lines.find((l) => l.startsWith(`${k + 1}. bash `)) ?? "";
			expect(line).toContain(`command=${principalKey({ command })}`);
			// The results still get the most of the line.
			expect(line).toContain(`${k}: export x`);
		});
	});

	it("a 2 MB result: head and tail shown, the omitted middle named, within the cap", () => {
		const big = `HEAD-MARKER ${"lorem ipsum ".repeat(180_000)} TAIL-MARKER`;
		expect(big.length).toBeGreaterThan(2_000_000);
		const { sm, first, last } = batchSession([{ name: "read", args: { path: "big.txt" }, out: big }]);
		const b = briefOf(sm, first, last, "tool-batch");
		expectWellFormed(b);
		expect(b.text).toContain("HEAD-MARKER");
		expect(b.text).toContain("TAIL-MARKER");
		expect(b.text).toMatch(/\[[\d,]+ chars omitted\]/);
		expect(b.text).toContain("read");
		expect(b.text).toContain("big.txt");
		expect(b.text).toContain("Reading the sources first.");
	});

	it("emoji and astral characters at every cut point never split a surrogate pair", () => {
		for (const pad of [0, 1, 2, 3]) {
			const emoji = "😀🧪🚀".repeat(3000);
			const out = `${"a".repeat(pad)}${emoji}${"b".repeat(pad)}`;
			const args = { path: `${"x".repeat(pad)}${"🗂".repeat(400)}` };
			const { sm, first, last } = batchSession([{ name: "read", args, out }]);
			const b = briefOf(sm, first, last, "tool-batch");
			expectWellFormed(b);
			expect(b.text).toContain("😀");
		}
	});

	it("an error result is flagged", () => {
		const { sm, first, last } = batchSession([
			{ name: "bash", args: { command: "make" }, out: "make: *** No rule to make target", error: true },
			{ name: "read", args: { path: "ok.ts" }, out: "fine" },
		]);
		const b = briefOf(sm, first, last, "tool-batch");
		expectWellFormed(b);
		expect(b.text).toContain("ERROR");
		expect(b.text).toContain("No rule to make target");
		expect(b.text).toContain("1 failed");
	});

	it("40 calls in one batch: every call counted, within the cap", () => {
		const calls = Array.from({ length: 40 }, (_, k) => ({
			name: k % 2 ? "bash" : "read",
			args: { path: `src/module-${k}.ts` },
			out: `export const value${k} = ${k};\n`.repeat(200),
		}));
		const { sm, first, last } = batchSession(calls);
		const b = briefOf(sm, first, last, "tool-batch");
		expectWellFormed(b);
		expect(b.text).toContain("40 calls");
		expect(b.text).toContain("read ×20");
		expect(b.text).toContain("bash ×20");
		// The first call is always described by name and argument.
		expect(b.text).toContain("module-0.ts");
	});

	it("an empty result", () => {
		const { sm, first, last } = batchSession([{ name: "ls", args: { path: "empty/" }, out: "" }]);
		const b = briefOf(sm, first, last, "tool-batch");
		expectWellFormed(b);
		expect(b.text).toContain("ls");
		expect(b.text).toContain("0 chars");
	});

	it("a peek batch names what was peeked and its size", () => {
		const { sm, first, last } = batchSession([
			{ name: "pi_fold_context", args: { action: "peek", id: "f0123456789" }, out: "z".repeat(5000) },
		]);
		const b = briefOf(sm, first, last, "peek");
		expectWellFormed(b);
		expect(b.text).toContain('"action":"peek","id":"f0123456789"');
		expect(b.text).toContain("5,000 chars");
	});

	it("a missing entry or a tiny limit still gives a brief naming the fold", () => {
		const { sm, first, last } = batchSession([{ name: "read", args: { path: "a" }, out: "b".repeat(9000) }]);
		const { lattice } = latticeOf(sm);
		const marked = lattice.mark(first, last, "tool-batch");
		if (!marked.ok) throw new Error(marked.reason);
		const fold = { ...lattice.get(marked.id)!, leaves: lattice.leavesOf(marked.id)! };
		const empty = deterministicBrief(fold, new Map());
		expectWellFormed({ id: marked.id, text: empty, again: deterministicBrief(fold, new Map()) });
		expect(empty).toContain("unavailable");
		const tiny = deterministicBrief(fold, latticeOf(sm).byId, { limit: 150 });
		expect(briefLength(tiny)).toBeLessThanOrEqual(150);
		expect(tiny.endsWith(readBackSuffix(marked.id))).toBe(true);
	});
});

describe("deterministic briefs on chapters and consolidations", () => {
	it("a chapter carries its opening text and every assistant note in order", () => {
		const sm = SessionManager.inMemory("/tmp");
		const from = sm.appendMessage({ role: "user", content: "OPENING: refactor the parser 🚀", timestamp: 1 });
		for (let k = 0; k < 6; k++) {
			sm.appendMessage(
				assistant([
					{ type: "text", text: `note-${k} ${"detail ".repeat(100 * k)}` },
					call(`c${k}`, "read", { path: `p${k}` }),
				]),
			);
			sm.appendMessage(result(`c${k}`, "read", "y".repeat(3000)));
		}
		const to = sm.appendMessage(assistant([{ type: "text", text: "FINAL reply" }], "stop"));
		const b = briefOf(sm, from, to, "chapter");
		expectWellFormed(b);
		expect(b.text).toContain("OPENING: refactor the parser 🚀");
		const positions = ["note-0", "note-1", "note-2", "note-3", "note-4", "note-5", "FINAL reply"].map((n) =>
			b.text.indexOf(n),
		);
		expect(positions.every((p) => p >= 0)).toBe(true);
		expect([...positions].sort((x, y) => x - y)).toEqual(positions);
		expect(b.text).toContain("read ×6");
	});

	it("a chapter with short notes gives the room they leave to naming every call", () => {
		const sm = SessionManager.inMemory("/tmp");
		const from = sm.appendMessage({ role: "user", content: "survey the modules", timestamp: 1 });
		// Paths no range or shared prefix shortens, more than a third of the brief can name.
		const paths = Array.from(
			{ length: 40 },
			(_, k) => `lib/${createHash("sha256").update(`${k}`).digest("hex").slice(0, 14)}.js`,
		);
		paths.forEach((path, k) => {
			sm.appendMessage(assistant([{ type: "text", text: `look ${k}` }, call(`c${k}`, "read", { path })]));
			sm.appendMessage(result(`c${k}`, "read", "z".repeat(800)));
		});
		const to = sm.appendMessage(assistant([{ type: "text", text: "surveyed" }], "stop"));
		const b = briefOf(sm, from, to, "chapter");
		expectWellFormed(b);
		const tools = b.text.split("\n").find((l) => l.startsWith("Tools: ")) ?? "";
		expect(tools).not.toContain("more");
		for (const path of paths) expect(tools).toContain(path.slice(4, -3));
		// The notes are all still there, first to last.
		expect(b.text).toContain("- look 0");
		expect(b.text).toContain("- surveyed");
		expect(b.text).not.toMatch(/notes omitted/);
	});

	it("a chapter with hundreds of notes stays within the cap and keeps the first and last", () => {
		const sm = SessionManager.inMemory("/tmp");
		const from = sm.appendMessage({ role: "user", content: "go", timestamp: 1 });
		let to = from;
		for (let k = 0; k < 300; k++) to = sm.appendMessage(assistant([{ type: "text", text: `step ${k} done` }], "stop"));
		const b = briefOf(sm, from, to, "chapter");
		expectWellFormed(b);
		expect(b.text).toContain("step 0 done");
		expect(b.text).toContain("step 299 done");
		expect(b.text).toMatch(/notes omitted/);
	});

	it("a consolidation indexes each child by id, call and principal argument, raw gaps by role and size", () => {
		const sm = SessionManager.inMemory("/tmp");
		sm.appendMessage({ role: "user", content: "go", timestamp: 1 });
		const spans: [string, string][] = [];
		for (let k = 0; k < 3; k++) {
			const a = sm.appendMessage(assistant([call(`c${k}`, "read", { path: `f${k}` })]));
			const r = sm.appendMessage(result(`c${k}`, "read", "q".repeat(500)));
			spans.push([a, r]);
			sm.appendMessage(assistant([{ type: "text", text: `between ${k}` }], "stop"));
		}
		const { lattice, byId } = latticeOf(sm);
		const ids = spans.map(([a, r]) => {
			const m = lattice.mark(a, r, "tool-batch");
			if (!m.ok) throw new Error(m.reason);
			expect(lattice.setDeterministicBrief(m.id, briefForFold(lattice, m.id, byId)!).ok).toBe(true);
			return m.id;
		});
		expect(lattice.commit(ids).ok).toBe(true);
		const c = lattice.consolidate(ids, { maxGap: 1 });
		if (!c.ok) throw new Error(c.reason);
		const text = briefForFold(lattice, c.id, byId)!;
		expectWellFormed({ id: c.id, text, again: briefForFold(lattice, c.id, byId) });
		ids.forEach((id, k) => {
			expect(text).toContain(`- ${id} batch: read f${k} → "qqq`);
		});
		expect(text).toMatch(/raw: assistant 1 \(\d+ chars\)/);
	});
});

describe("a consolidation's call count, read child by child", () => {
	it("equals reading its span whole, however the span is cut into parts", () => {
		// Calls answered in a later part, results before their calls, a result answering nothing,
		// a repeated id, and a second result for one call.
		const sm = SessionManager.inMemory("/tmp");
		sm.appendMessage({ role: "user", content: "go", timestamp: 1 });
		sm.appendMessage(assistant([call("c1", "read", { path: "a" }), call("c2", "ls", {})]));
		sm.appendMessage(result("c1", "read", "A"));
		sm.appendMessage(result("c9", "read", "nobody asked"));
		sm.appendMessage(result("c2", "ls", "B"));
		sm.appendMessage(result("c3", "bash", "before its call"));
		sm.appendMessage(assistant([call("c3", "bash", { command: "x" }), call("c1", "read", { path: "again" })]));
		sm.appendMessage(result("c1", "read", "C"));
		sm.appendMessage(result("c1", "read", "C twice"));
		const leaves = sm.getBranch().flatMap((e) => (e.type === "message" ? [{ entryId: e.id, hash: "" }] : []));
		const byId = new Map<string, SessionEntry>(sm.getBranch().map((e) => [e.id, e]));
		const whole = readSpan(leaves, byId).calls.length;
		let cuts = 0;
		// Every way to cut the span into consecutive parts (each bit: a cut after that leaf).
		for (let mask = 0; mask < 1 << (leaves.length - 1); mask++) {
			const parts: (typeof leaves)[] = [[]];
			leaves.forEach((leaf, i) => {
				parts[parts.length - 1].push(leaf);
				if (i < leaves.length - 1 && mask & (1 << i)) parts.push([]);
			});
			expect(callsAcross(parts.map((p) => readSpan(p, byId))), `cuts ${mask.toString(2)}`).toBe(whole);
			cuts++;
		}
		expect(cuts).toBe(256);
	});
});

describe.skipIf(skipFixture)("deterministic briefs on the real fixture session", () => {
	it("every tool batch and chapter gets a bounded, deterministic brief", () => {
		const dir = tempDir("briefs");
		const sm = SessionManager.open(copyFixture(dir), dir);
		const { context, lattice, byId } = latticeOf(sm);
		const batches = toolBatches(context.entries);
		expect(batches.length).toBeGreaterThan(100);
		let checked = 0;
		for (const [s, e] of batches) {
			const m = lattice.mark(context.entries[s].id, context.entries[e].id, "tool-batch");
			if (!m.ok) continue;
			const text = briefForFold(lattice, m.id, byId)!;
			expectWellFormed({ id: m.id, text, again: briefForFold(lattice, m.id, byId) });
			expect(text).toMatch(/tool batch: \d+ call/);
			expect(lattice.unmark(m.id).ok).toBe(true);
			checked++;
		}
		expect(checked).toBe(batches.length);
		// Chapters: each user message through the entry before the next one, where the lattice allows it.
		const users = context.entries.flatMap((x, p) => (x.role === "user" ? [p] : []));
		let chapters = 0;
		for (let k = 0; k + 1 < users.length; k++) {
			const m = lattice.mark(context.entries[users[k]].id, context.entries[users[k + 1] - 1].id, "chapter");
			if (!m.ok) continue;
			const text = briefForFold(lattice, m.id, byId)!;
			expectWellFormed({ id: m.id, text, again: briefForFold(lattice, m.id, byId) });
			expect(text).toContain("Opening: ");
			chapters++;
		}
		expect(chapters).toBeGreaterThan(0);
	});
});

describe("the unbriefed-marks notice", () => {
	const folds = (n: number, over: Partial<NoticeFold> = {}): NoticeFold[] =>
		Array.from({ length: n }, (_, k) => ({
			id: `f${k.toString(16).padStart(10, "0")}`,
			kind: "tool-batch",
			provenance: "deterministic",
			bytes: 9000 + k,
			state: "pending",
			...over,
		}));

	it("stays silent below 3 unbriefed marks; supplied briefs and standing folds do not count", () => {
		expect(unbriefedNotice(folds(2))).toBeUndefined();
		expect(unbriefedNotice([...folds(2), ...folds(5, { provenance: "supplied" })])).toBeUndefined();
		expect(unbriefedNotice([...folds(2), ...folds(5, { state: "committed" })])).toBeUndefined();
		expect(unbriefedNotice([])).toBeUndefined();
	});

	it("names 3 marks with kind and size and says how to brief them", () => {
		const text = unbriefedNotice(folds(3))!;
		for (const f of folds(3)) expect(text).toContain(f.id);
		expect(text).toContain("tool-batch");
		expect(text).toContain('"action":"brief"');
		expect(text).toContain("pi_fold_context");
		expect(text).not.toContain("more");
	});

	it("cuts a long list with 'and N more' within 1200 bytes", () => {
		for (const n of [3, 10, 30, 200]) {
			const list = folds(n, { kind: "chapter" });
			const text = unbriefedNotice(list)!;
			expect(Buffer.byteLength(text)).toBeLessThanOrEqual(NOTICE_MAX_BYTES);
			const named = list.filter((f) => text.includes(f.id)).length;
			expect(named).toBeGreaterThanOrEqual(3);
			if (named < n) expect(text).toContain(`and ${n - named} more`);
			expect(unbriefedNotice(list)).toBe(text);
		}
	});
});

it("exports the same cap as the lattice", () => {
	expect(EXPORTED_MAX).toBe(BRIEF_MAX_CHARS);
});
