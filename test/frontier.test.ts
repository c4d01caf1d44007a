// The frontier on sessions written by Pi's own SessionManager and on the real fixture: every
// proposal is accepted by markMany, none covers an incomplete batch, a system, pinned or
// blacklisted entry, each reaches minFoldChars, at most maxCutsPerPass per pass, stalest first,
// and a pass right after marking proposes nothing new.
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { copyFixture, FIXTURE_MISSING, skipFixture } from "../harness/fixture.ts";
import { removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { assistantMessage } from "../harness/synthetic-session.ts";
import { FoldLattice, type MarkRequest } from "../src/lattice/index.ts";
import {
	DEFAULT_FRONTIER_SETTINGS,
	type FrontierSettings,
	frontierCursor,
	proposeMarks,
} from "../src/policy/frontier.ts";
import { type ContextEntries, contextEntriesOf } from "../src/session/context-entries.ts";
import { referenceMarks } from "./helpers/frontier-reference.ts";
import { seededInts } from "./helpers/seeded-ints.ts";

const core = nodeCore();
afterAll(removeTempDirs);
if (skipFixture) console.log(`frontier: ${FIXTURE_MISSING}`);

const assistant = assistantMessage;

/** A session builder over Pi's SessionManager. */
class Builder {
	readonly sm = SessionManager.inMemory("/tmp");
	#calls = 0;
	user(text = "next task") {
		return this.sm.appendMessage({ role: "user", content: text, timestamp: 1 });
	}
	note(text = "Done.") {
		return this.sm.appendMessage(assistant([{ type: "text", text }], "stop"));
	}
	/** An assistant's calls; results land only when `land` is called (or at once by default). */
	calls(names: string[], resultChars: number, land = true) {
		const ids = names.map((name) => ({ id: `call_${this.#calls++}`, name }));
		this.sm.appendMessage(
			assistant([
				{ type: "text", text: "Looking." },
				...ids.map((c) => ({ type: "toolCall", id: c.id, name: c.name, arguments: { path: c.id } })),
			]),
		);
		const results = () =>
			ids.map((c) =>
				this.sm.appendMessage({
					role: "toolResult",
					toolCallId: c.id,
					toolName: c.name,
					content: [{ type: "text", text: "r".repeat(resultChars) }],
					isError: false,
					timestamp: 1,
				} as never),
			);
		if (land) return results();
		return results;
	}
	/** A bash execution message: in the window but never foldable (a "system" entry for the lattice). */
	bashExecution() {
		return this.sm.appendMessage({
			role: "bashExecution",
			command: "ls",
			output: "a\nb",
			exitCode: 0,
			cancelled: false,
			truncated: false,
			timestamp: 1,
		} as never);
	}
	context(): ContextEntries {
		return contextEntriesOf(this.sm.buildContextEntries(), core);
	}
}

/** The lattice carried over to the grown context (marks, folds and pins kept). */
function relattice(context: ContextEntries, previous?: FoldLattice): FoldLattice {
	const made = previous
		? FoldLattice.load(core, context.entries, previous.save())
		: FoldLattice.create(core, context.entries);
	if (!made.ok) throw new Error(made.reason);
	return made.lattice;
}

const settings = (over: Partial<FrontierSettings> = {}): FrontierSettings => ({
	...DEFAULT_FRONTIER_SETTINGS,
	...over,
});

/** One pass, checked against every rule; the proposals are marked. */
function pass(context: ContextEntries, lattice: FoldLattice, s: FrontierSettings): MarkRequest[] {
	const proposals = proposeMarks(context, lattice, s);
	const pos = new Map(context.entries.map((e, p) => [e.id, p]));
	const pins = new Set(lattice.pins());
	expect(proposals.length).toBeLessThanOrEqual(s.maxCutsPerPass);
	let previousEnd = -1;
	for (const r of proposals) {
		const from = pos.get(r.from)!;
		const to = pos.get(r.to)!;
		expect(from).toBeGreaterThan(previousEnd); // stalest first, no overlap
		previousEnd = to;
		let bytes = 0;
		const calls = new Set<string>();
		const results = new Set<string>();
		for (let p = from; p <= to; p++) {
			const e = context.entries[p];
			bytes += e.bytes;
			expect(e.role).not.toBe("system");
			expect(pins.has(e.id)).toBe(false);
			for (const c of e.toolCallIds ?? []) calls.add(c);
			if (e.toolCallId) results.add(e.toolCallId);
			const src = context.sources[p];
			if (src.type === "message" && src.message.role === "toolResult") {
				expect(s.blacklistAutoFoldTools.has(src.message.toolName)).toBe(false);
			}
		}
		// Whole batches only: every call answered inside, every result's call inside.
		expect([...calls].sort()).toEqual([...results].sort());
		expect(bytes).toBeGreaterThanOrEqual(s.minFoldChars);
		expect(["tool-batch", "chapter"]).toContain(r.kind);
	}
	if (proposals.length > 0) {
		const marked = lattice.markMany(proposals);
		expect(marked.ok, marked.ok ? "" : marked.reason).toBe(true);
	}
	return proposals;
}

/** Passes until one proposes nothing (bounded); returns every proposal. */
function converge(context: ContextEntries, lattice: FoldLattice, s: FrontierSettings): MarkRequest[] {
	const all: MarkRequest[] = [];
	for (let k = 0; k < 1000; k++) {
		const got = pass(context, lattice, s);
		if (got.length === 0) return all;
		all.push(...got);
	}
	throw new Error("the frontier did not converge");
}

describe("the frontier on synthetic sessions", () => {
	it("merges small batches up to minFoldChars, stalest first; the tail below waits", () => {
		const b = new Builder();
		b.user();
		for (let k = 0; k < 10; k++) b.calls(["read"], 3000); // ~3.3 kB per batch
		const context = b.context();
		const lattice = relattice(context);
		const s = settings();
		const got = pass(context, lattice, s);
		// Ten ~3.3 kB batches: marks of three batches each, and the last batch waits.
		expect(got.length).toBeGreaterThanOrEqual(2);
		expect(got.every((r) => r.kind === "tool-batch")).toBe(true);
		const lastBatchResult = context.entries.at(-1)!.id;
		expect(lattice.foldOf(lastBatchResult)).toBeNull();
		expect(pass(context, lattice, s)).toEqual([]); // converged
	});

	it("never proposes an incomplete batch; once its results land, it is proposable", () => {
		const b = new Builder();
		b.user();
		const land = b.calls(["read", "read"], 9000, false) as () => string[];
		let context = b.context();
		let lattice = relattice(context);
		expect(pass(context, lattice, settings())).toEqual([]);
		land();
		context = b.context();
		lattice = relattice(context, lattice);
		const got = pass(context, lattice, settings());
		expect(got).toHaveLength(1);
		expect(got[0].kind).toBe("tool-batch");
	});

	it("at most maxCutsPerPass per pass, the oldest first; repeated passes converge", () => {
		const b = new Builder();
		b.user();
		for (let k = 0; k < 30; k++) b.calls(["read"], 9000);
		const context = b.context();
		const lattice = relattice(context);
		const s = settings();
		const first = proposeMarks(context, lattice, s);
		expect(first).toHaveLength(8);
		const all = converge(context, lattice, s);
		expect(all.length).toBe(30);
		expect(all.slice(0, 8)).toEqual(first);
		expect(proposeMarks(context, lattice, s)).toEqual([]);
	});

	it("closed chapters fold with their user message; the open chapter's loose entries wait", () => {
		const b = new Builder();
		const chapterOpen = b.user("first task");
		b.note("x".repeat(5000));
		b.note("y".repeat(5000));
		const secondUser = b.user("second task");
		b.note("z".repeat(20000));
		const context = b.context();
		const lattice = relattice(context);
		const got = pass(context, lattice, settings());
		expect(got).toEqual([{ from: chapterOpen, to: context.entries[2].id, kind: "chapter" }]);
		expect(lattice.foldOf(secondUser)).toBeNull();
	});

	it("system, pinned and blacklisted entries are never inside a proposal", () => {
		const b = new Builder();
		b.user();
		for (let k = 0; k < 4; k++) b.calls(["read"], 6000);
		b.bashExecution();
		for (let k = 0; k < 4; k++) b.calls(["bash", "read"], 3000);
		const [pinMe] = b.calls(["read"], 9000) as string[];
		for (let k = 0; k < 4; k++) b.calls(["read"], 6000);
		b.user("next");
		const context = b.context();
		const lattice = relattice(context);
		expect(lattice.pin([pinMe]).ok).toBe(true);
		const s = settings({ blacklistAutoFoldTools: new Set(["bash"]) });
		const all = converge(context, lattice, s);
		expect(all.length).toBeGreaterThan(0);
		expect(lattice.foldOf(pinMe)).toBeNull();
	});

	it("a small tail between a mark and a never-folding entry is absorbed by the mark", () => {
		const b = new Builder();
		b.user();
		b.calls(["read"], 9000);
		const [tail] = b.calls(["read"], 1000) as string[];
		b.bashExecution();
		const context = b.context();
		const lattice = relattice(context);
		const got = pass(context, lattice, settings());
		expect(got).toHaveLength(1);
		expect(got[0].to).toBe(tail);
	});

	it("a small gap beside a committed fold is absorbed over it; pending neighbours leave it waiting", () => {
		const b = new Builder();
		b.user();
		b.calls(["read"], 9000);
		const [gap] = b.calls(["read"], 500) as string[];
		b.bashExecution();
		const context = b.context();
		const lattice = relattice(context);
		const batch = context.entries.slice(1, 3);
		const m = lattice.mark(batch[0].id, batch[1].id, "tool-batch", { brief: "a batch" });
		if (!m.ok) throw new Error(m.reason);
		// Pending left neighbour: the gap waits (a mark never contains a mark).
		expect(proposeMarks(context, lattice, settings())).toEqual([]);
		expect(lattice.commit([m.id]).ok).toBe(true);
		const got = pass(context, lattice, settings());
		expect(got).toEqual([{ from: batch[0].id, to: gap, kind: "chapter" }]);
		expect(lattice.get(lattice.foldOf(gap)!)?.children).toContainEqual({ type: "fold", id: m.id });
	});

	it("small gaps on both sides of one committed fold become one mark over both (never two overlapping)", () => {
		const b = new Builder();
		b.bashExecution();
		const opening = b.user("short task");
		b.calls(["read"], 9000);
		const [gap] = b.calls(["read"], 500) as string[];
		b.bashExecution();
		b.user("next");
		const context = b.context();
		const lattice = relattice(context);
		const batch = context.entries.slice(2, 4);
		const m = lattice.mark(batch[0].id, batch[1].id, "tool-batch", { brief: "a batch" });
		if (!m.ok) throw new Error(m.reason);
		expect(lattice.commit([m.id]).ok).toBe(true);
		const got = pass(context, lattice, settings());
		expect(got).toEqual([{ from: opening, to: gap, kind: "chapter" }]);
	});

	it("grows event by event: every pass valid, the lattice always accepts, nothing proposed twice", () => {
		const b = new Builder();
		const s = settings({ minFoldChars: 4000 });
		let lattice: FoldLattice | undefined;
		const seen = new Set<string>();
		for (let step = 0; step < 60; step++) {
			if (step % 9 === 0) b.user(`task ${step}`);
			if (step % 13 === 5) b.bashExecution();
			const land = b.calls(
				step % 4 === 0 ? ["read", "ls"] : ["read"],
				200 + ((step * 977) % 3000),
				false,
			) as () => string[];
			// Between a call and its results: the open batch is never proposed.
			let context = b.context();
			lattice = relattice(context, lattice);
			for (const r of pass(context, lattice, s)) {
				expect(seen.has(r.from)).toBe(false);
				seen.add(r.from);
			}
			land();
			if (step % 5 === 4) b.note(`note ${step}`);
			context = b.context();
			lattice = relattice(context, lattice);
			for (const r of pass(context, lattice, s)) {
				expect(seen.has(r.from)).toBe(false);
				seen.add(r.from);
			}
			expect(proposeMarks(context, lattice, s)).toEqual([]);
		}
		expect(seen.size).toBeGreaterThan(5);
	});

	it("bad settings or a lattice over other entries propose nothing, without throwing", () => {
		const b = new Builder();
		b.user();
		for (let k = 0; k < 3; k++) b.calls(["read"], 9000);
		const context = b.context();
		const lattice = relattice(context);
		expect(proposeMarks(context, lattice, settings({ minFoldChars: Number.NaN }))).toEqual([]);
		expect(proposeMarks(context, lattice, settings({ maxCutsPerPass: -1 }))).toEqual([]);
		expect(proposeMarks(context, lattice, { minFoldChars: 1 } as never)).toEqual([]);
		const other = relattice({ ...context, entries: context.entries.slice(0, 2) });
		expect(proposeMarks(context, other, settings())).toEqual([]);
		expect(proposeMarks(context, lattice, settings()).length).toBeGreaterThan(0);
	});
});

describe("the frontier cursor", () => {
	// Sessions grown event by event, as the runtime grows them (the lattice extended in place, the
	// proposals marked, now and then pins, late results and commits): a pass from the cursor
	// proposes exactly what a whole pass proposes, every time.
	it.each([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])("proposes what a whole pass does (seed %i)", (seed) => {
		const r = seededInts(seed);
		const b = new Builder();
		b.user();
		const s = settings({
			minFoldChars: [2000, 8000, 20000][r(3)],
			maxCutsPerPass: [1, 2, 8][r(3)],
			blacklistAutoFoldTools: r(2) === 0 ? new Set(["bash"]) : new Set<string>(),
		});
		let context = b.context();
		const made = FoldLattice.create(core, context.entries);
		if (!made.ok) throw new Error(made.reason);
		const lattice = made.lattice;
		let cursor = frontierCursor();
		const late: (() => string[])[] = [];
		let checked = 0;
		for (let step = 0; step < 120; step++) {
			const act = r(12);
			if (act === 0) b.user(`task ${step}`);
			else if (act === 1) b.note("x".repeat(r(3000)));
			else if (act === 2) b.bashExecution();
			else if (act <= 4 && late.length > 0) late.splice(r(late.length), 1)[0]();
			else if (act === 5) late.push(b.calls(["read"], r(6000), false) as () => string[]);
			else b.calls(r(4) === 0 ? ["bash"] : r(3) === 0 ? ["read", "grep"] : ["read"], r(9000));
			const grown = b.context();
			const added = grown.entries.slice(context.entries.length);
			if (added.length > 0) {
				const extended = lattice.extend(added);
				expect(extended.ok, extended.ok ? "" : extended.reason).toBe(true);
			}
			context = grown;
			if (r(40) === 0) {
				const raw = context.entries.filter((e) => lattice.foldOf(e.id) === null && e.role !== "system");
				if (raw.length > 0) lattice.pin([raw[r(raw.length)].id]);
			}
			if (r(20) === 0) {
				const pending = lattice.pending().filter((f) => f.parent === null);
				if (pending.length > 0 && lattice.commit([pending[0].id]).ok) cursor = frontierCursor(); // its owner resets it
			}
			// A few passes per step: the cap leaves more for the next one.
			for (let k = 0; k < 3; k++) {
				const whole = proposeMarks(context, lattice, s);
				const fromCursor = proposeMarks(context, lattice, s, cursor);
				expect(fromCursor).toEqual(whole);
				checked++;
				if (whole.length === 0) break;
				const marked = lattice.markMany(whole);
				expect(marked.ok, marked.ok ? "" : marked.reason).toBe(true);
			}
		}
		expect(checked).toBeGreaterThan(120);
	});
});

describe("the frontier against the straightforward pass", () => {
	const sliced = (context: ContextEntries, n: number): ContextEntries => ({
		entries: context.entries.slice(0, n),
		sources: context.sources.slice(0, n),
	});

	// As the runtime runs it: the whole context and lattice (the lattice's index of tool batches,
	// its root spans), the pass limited to the first `seen` entries (the model has not seen the
	// newest batch yet), a cursor kept across passes. The reference gathers tool groups from the
	// examined entries alone and reads every fold as a view. Sessions with several chapters, late
	// results, repeated call ids, orphan results, pins, blacklists and commits.
	it.each([1, 2, 3, 4, 5, 6])("proposes what the reference does (seed %i)", (seed) => {
		const r = seededInts(seed * 7919);
		const b = new Builder();
		b.user();
		const s = settings({
			minFoldChars: [1500, 4000, 8000][r(3)],
			maxCutsPerPass: [1, 3, 8][r(3)],
			blacklistAutoFoldTools: r(3) === 0 ? new Set(["bash"]) : new Set<string>(),
		});
		let context = b.context();
		const made = FoldLattice.create(core, context.entries);
		if (!made.ok) throw new Error(made.reason);
		let lattice = made.lattice;
		let cursor = frontierCursor();
		const late: (() => string[])[] = [];
		let proposed = 0;
		for (let step = 0; step < 150; step++) {
			const act = r(14);
			if (act === 0) b.user(`task ${step}`);
			else if (act === 1) b.note("x".repeat(r(4000)));
			else if (act === 2) b.bashExecution();
			else if (act <= 4 && late.length > 0) late.splice(r(late.length), 1)[0]();
			else if (act === 5) late.push(b.calls(["read"], r(5000), false) as () => string[]);
			else if (act === 6) {
				// A result whose call no entry makes (an orphan), or a second result for an answered call.
				b.sm.appendMessage({
					role: "toolResult",
					toolCallId: r(2) === 0 ? `ghost_${step}` : `call_${r(Math.max(1, step))}`,
					toolName: "read",
					content: [{ type: "text", text: "o".repeat(r(2000)) }],
					isError: false,
					timestamp: 1,
				} as never);
			} else b.calls(r(4) === 0 ? ["bash"] : r(3) === 0 ? ["read", "grep"] : ["read"], r(6000));
			const grown = b.context();
			const added = grown.entries.slice(context.entries.length);
			context = grown;
			if (added.length > 0 && !lattice.extend(added).ok) {
				// An append that breaks a fold (a second result for a folded call): the runtime rebuilds.
				const rebuilt = FoldLattice.create(core, context.entries);
				if (!rebuilt.ok) throw new Error(rebuilt.reason);
				lattice = rebuilt.lattice;
				cursor = frontierCursor();
			}
			if (r(40) === 0) {
				const raw = context.entries.filter((e) => lattice.foldOf(e.id) === null && e.role !== "system");
				if (raw.length > 0) lattice.pin([raw[r(raw.length)].id]);
			}
			if (r(15) === 0) {
				const pending = lattice.pending().filter((f) => f.parent === null);
				if (pending.length > 0 && lattice.commit([pending[r(pending.length)].id]).ok) cursor = frontierCursor();
			}
			// What the model has seen: usually all but the newest assistant message and what follows it.
			const n = context.entries.length;
			let lastAssistant = n - 1;
			while (lastAssistant > 0 && context.entries[lastAssistant].role !== "assistant") lastAssistant--;
			const seen = r(3) === 0 ? n : r(5) === 0 ? r(n + 1) : lastAssistant;
			for (let k = 0; k < 3; k++) {
				const want = referenceMarks(sliced(context, seen), lattice.folds(), lattice.pins(), s);
				const got = proposeMarks(context, lattice, s, cursor, seen);
				expect(got).toEqual(want);
				if (got.length === 0) break;
				// The lattice checks a mark against every entry, also those after `seen`: a second result
				// for a call, landed later, can make it refuse (the runtime then reports a problem).
				const marked = lattice.markMany(got);
				if (!marked.ok && seen < n) break;
				expect(marked.ok, marked.ok ? "" : marked.reason).toBe(true);
				proposed += got.length;
			}
		}
		expect(proposed).toBeGreaterThan(5);
	});
});

describe.skipIf(skipFixture)("the frontier on the real fixture session", () => {
	it("passes over the whole fixture are accepted, bounded and converge", () => {
		const dir = tempDir("frontier");
		const sm = SessionManager.open(copyFixture(dir), dir);
		const context = contextEntriesOf(sm.buildContextEntries(), core);
		const lattice = relattice(context);
		const s = settings({ blacklistAutoFoldTools: new Set(["edit"]) });
		const all = converge(context, lattice, s);
		expect(all.length).toBeGreaterThan(8);
		// Everything foldable and big enough is now marked: a fresh pass over a fresh lattice
		// with these marks proposes nothing.
		expect(proposeMarks(context, lattice, s)).toEqual([]);
		const marked = lattice.pending().reduce((n, f) => n + (f.end - f.start), 0);
		expect(marked).toBeGreaterThan(context.entries.length / 2);
	});
});
