// Rewrite instrumentation inside a real AgentSession: every `context` event is recorded; requests
// between commits are pure appends, a context_edit commit announced by the runtime is an
// attributed rewrite, the same edit unannounced is an unattributed one; and each request's
// messages align one to one with the session entries that own them.
import { isDeepStrictEqual } from "node:util";
import { fauxAssistantMessage, fauxText, fauxToolCall, type Message } from "@earendil-works/pi-ai";
import { type ExtensionAPI, type SessionEntry, SessionManager } from "@earendil-works/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { makeSession, removeTempDirs } from "../harness/pi-harness.ts";
import { type Alignment, alignWithProjection, ProjectionAligner } from "../src/meter/alignment.ts";
import {
	digestIncrementally,
	digestMessages,
	firstChangedIndex,
	type RecordOutcome,
	RewriteRecorder,
} from "../src/meter/recorder.ts";
import { entriesSince } from "../src/session/entries-since.ts";
import { canonicalJson } from "../src/values/canonical-json.ts";

const core = nodeCore();
afterAll(removeTempDirs);

type Messages = Parameters<typeof alignWithProjection>[0];

interface Seen {
	messages: Messages;
	outcome: RecordOutcome;
	alignment: Alignment;
	/** The same request with its last message dropped, and with one role changed. */
	shortened: Alignment;
	relabelled: Alignment;
}

interface Plan {
	/** At turn_end #1, fold batch A (turn 0's tool calls and results) with one context_edit batch. */
	fold: boolean;
	/** Announce that fold as a commit. */
	announceFold: boolean;
	/** Announce a commit at turn_end #0 that never happens. */
	announceNothing?: boolean;
}

function instrumented(recorder: RewriteRecorder, seen: Seen[], plan: Plan) {
	return (pi: ExtensionAPI) => {
		let batchA: { assistant: string; results: string[] } | undefined;
		pi.on("context", (e, ctx) => {
			const projection = ctx.sessionManager.buildSessionProjection();
			const relabelled = structuredClone(e.messages);
			const victim = relabelled[relabelled.length - 1] as { role: string };
			victim.role = victim.role === "user" ? "assistant" : "user";
			seen.push({
				messages: structuredClone(e.messages),
				outcome: recorder.record(e.messages),
				alignment: alignWithProjection(e.messages, projection),
				shortened: alignWithProjection(e.messages.slice(0, -1), projection),
				relabelled: alignWithProjection(relabelled, projection),
			});
		});
		pi.on("turn_end", (e) => {
			if (e.turnIndex === 0) {
				batchA = { assistant: e.messageEntryId, results: e.toolResultEntryIds };
				if (plan.announceNothing) recorder.announce("commit");
				return;
			}
			if (e.turnIndex !== 1 || !plan.fold || !batchA) return;
			if (plan.announceFold) recorder.announce("commit");
			return {
				entries: [
					...e.entries,
					{
						type: "context_edit",
						targetId: batchA.assistant,
						replacement: { content: [{ type: "text", text: "[fold A: ls and echo of the work dir]" }] },
					},
					...batchA.results.map((targetId) => ({ type: "context_edit" as const, targetId, replacement: null })),
				],
			};
		});
	};
}

/** One prompt, six turns: a two-call batch, then single calls, then a final answer. */
function workload() {
	const call = (name: string, args: Parameters<typeof fauxToolCall>[1], id: string) => fauxToolCall(name, args, { id });
	return [
		fauxAssistantMessage([call("ls", { path: "." }, "a0"), call("bash", { command: "echo alpha" }, "a1")], {
			stopReason: "toolUse",
		}),
		...[1, 2, 3, 4].map((i) =>
			fauxAssistantMessage([fauxText(`step ${i}`), call("bash", { command: `echo step ${i}` }, `b${i}`)], {
				stopReason: "toolUse",
			}),
		),
		fauxAssistantMessage(fauxText("all done")),
	];
}

async function run(plan: Plan) {
	const recorder = new RewriteRecorder(core);
	const seen: Seen[] = [];
	const h = await makeSession({ extensions: [instrumented(recorder, seen, plan)] });
	try {
		h.script(workload());
		await h.session.prompt("look around");
		h.script([fauxAssistantMessage(fauxText("second answer"))]);
		await h.session.prompt("and now?");
		expect(h.extensionErrors).toEqual([]);
		const requests = h.captured.map((c) => c.context.messages.filter((m) => m.role !== "system"));
		return { recorder, seen, requests, branch: h.session.sessionManager.getBranch() };
	} finally {
		h.dispose();
	}
}

/** How many captured requests extend their predecessor (deep equality; independent of the recorder). */
function appendsIn(requests: Message[][]): number {
	let n = 0;
	for (let k = 1; k < requests.length; k++) {
		const prev = requests[k - 1];
		if (prev.length <= requests[k].length && prev.every((m, i) => isDeepStrictEqual(m, requests[k][i]))) n++;
	}
	return n;
}

/** Where batch A's assistant message sits in a request. */
const batchAIndex = (messages: Messages) =>
	messages.findIndex((m) => m.role === "assistant" && m.content.some((b) => b.type === "toolCall" && b.id === "a0"));

function expectAligned(seen: Seen[], branch: SessionEntry[]) {
	const onBranch = new Set(branch.map((e) => e.id));
	for (const s of seen) {
		expect(s.alignment.ok, s.alignment.ok ? "" : s.alignment.reason).toBe(true);
		if (!s.alignment.ok) continue;
		s.alignment.entries.forEach((entry, i) => {
			expect(onBranch.has(entry.id)).toBe(true);
			const m = s.messages[i];
			if (entry.type === "message") {
				expect(entry.message.role).toBe(m.role);
				if (m.role === "toolResult" && entry.message.role === "toolResult") {
					expect(entry.message.toolCallId).toBe(m.toolCallId);
				}
			}
		});
		expect(s.shortened).toMatchObject({ ok: false, reason: expect.stringMatching(/messages/) });
		expect(s.relabelled).toMatchObject({
			ok: false,
			reason: expect.stringMatching(/^message \d+ is \w+ in the request, \w+ in the session projection$/),
		});
	}
}

describe("rewrite instrumentation in an AgentSession", () => {
	it("a run with no edits is all pure appends, and every message aligns with its entry", async () => {
		const { recorder, seen, requests, branch } = await run({ fold: false, announceFold: false });
		const c = recorder.counters();
		expect(c.requests).toBe(requests.length);
		expect(c.baselines).toBe(1);
		expect(c.pureAppends).toBe(requests.length - 1);
		expect(c.pureAppends).toBe(appendsIn(requests)); // the provider saw the same thing
		expect(c.unattributed).toBe(0);
		expect(Object.values(c.attributed).every((n) => n === 0)).toBe(true);
		expect(recorder.lastRewrite).toBeUndefined();
		// The digests kept for status are those of the last request, message by message.
		const last = seen.at(-1) as Seen;
		expect(recorder.lastDigests()).toHaveLength(last.messages.length);
		expect(recorder.lastDigests()[0]).toBe(
			Buffer.from(digestMessages(core, last.messages).subarray(0, 32)).toString("hex"),
		);
		expectAligned(seen, branch);
	});

	it("a context_edit commit announced by the runtime is exactly one attributed rewrite", async () => {
		const { recorder, seen, requests, branch } = await run({ fold: true, announceFold: true });
		const c = recorder.counters();
		expect(c.requests).toBe(requests.length);
		expect(c.attributed.commit).toBe(1);
		expect(c.unattributed).toBe(0);
		expect(c.pureAppends).toBe(requests.length - 2);
		expect(c.pureAppends).toBe(appendsIn(requests));
		// The rewrite is the request right after turn_end #1, starting at batch A's assistant message.
		const at = seen.findIndex((s) => s.outcome.ok && s.outcome.kind === "attributed");
		expect(at).toBe(2);
		const expectedIndex = batchAIndex(seen[at - 1].messages);
		expect(expectedIndex).toBeGreaterThan(0);
		expect(seen[at].outcome).toMatchObject({ ok: true, reason: "commit", firstChanged: expectedIndex });
		expect(recorder.lastRewrite).toEqual({ request: at + 1, firstChanged: expectedIndex, reason: "commit" });
		expect(batchAIndex(seen[at].messages)).toBe(-1); // the fold really reached the request
		expectAligned(seen, branch); // the edited projection aligns too
	});

	it("the same edit unannounced is one unattributed rewrite; an announcement lapses after one request", async () => {
		const { recorder, seen, requests, branch } = await run({ fold: true, announceFold: false, announceNothing: true });
		const c = recorder.counters();
		expect(c.unattributed).toBe(1);
		expect(c.attributed.commit).toBe(0);
		expect(c.lapsedAnnouncements).toBe(1); // turn_end #0 announced, the next request only appended
		expect(c.requests).toBe(c.baselines + c.pureAppends + c.unattributed);
		expect(c.pureAppends).toBe(appendsIn(requests));
		expect(recorder.lastRewrite).toMatchObject({ reason: "unattributed", firstChanged: batchAIndex(seen[1].messages) });
		expectAligned(seen, branch);
	});
});

describe("recorder units", () => {
	it("canonical JSON sorts keys and drops what JSON.stringify drops", () => {
		expect(canonicalJson({ b: 1, a: undefined, c: [undefined, "x"], d: { z: null, y: Number.NaN } })).toBe(
			'{"b":1,"c":[null,"x"],"d":{"y":null,"z":null}}',
		);
		const message = { role: "toolResult", toolCallId: "c1", content: [{ type: "text", text: 'say "hi"\n' }] };
		expect(JSON.parse(canonicalJson(message))).toEqual(message);
	});

	const msg = (text: string) => ({ role: "user", content: text, timestamp: 1 });

	it("compares by canonical JSON: key order does not count as a rewrite", () => {
		const r = new RewriteRecorder(core);
		r.record([{ role: "user", content: "a", timestamp: 1 }]);
		expect(r.record([{ timestamp: 1, content: "a", role: "user" }, msg("b")])).toMatchObject({ kind: "append" });
	});

	it("a shorter request is a rewrite at the first missing index", () => {
		const a = digestMessages(core, [msg("a"), msg("b"), msg("c")]);
		expect(firstChangedIndex(a, digestMessages(core, [msg("a"), msg("b")]))).toBe(2);
		expect(firstChangedIndex(a, digestMessages(core, [msg("a"), msg("x"), msg("c")]))).toBe(1);
		expect(firstChangedIndex(a, a)).toBe(-1);
	});

	it("refuses what it cannot digest and changes nothing", () => {
		const r = new RewriteRecorder(core);
		r.record([msg("a")]);
		const before = r.counters();
		expect(r.record([{ role: "user", content: 1n }])).toMatchObject({
			ok: false,
			reason: expect.stringContaining("BigInt"),
		});
		expect(r.record("nope" as unknown as unknown[])).toMatchObject({ ok: false });
		expect(r.counters()).toEqual(before);
		expect(r.record([msg("a"), msg("b")])).toMatchObject({ kind: "append" });
	});

	/** A request with a large tool result deep in an early message, as the workload makes them. */
	const bigRequest = () => [
		msg("task"),
		{
			role: "toolResult",
			toolCallId: "c1",
			toolName: "read",
			content: [{ type: "text", text: `${"const x = 1;\n".repeat(4000)}export default x;\n` }],
			details: { lines: 4001, nested: { deeper: ["a", "b", { text: "c".repeat(500) }] } },
			timestamp: 2,
		},
		msg("note"),
	];

	it("catches a single changed byte deep inside an early message, also in the incremental path", () => {
		const r = new RewriteRecorder(core);
		r.record(bigRequest());
		expect(r.record([...bigRequest(), msg("more")])).toMatchObject({ kind: "append" });
		// One character in the middle of message 1's 50 KB tool output.
		const changed = [...bigRequest(), msg("more"), msg("again")];
		const result = changed[1] as { content: { text: string }[] };
		const text = result.content[0].text;
		const mid = text.length >> 1;
		result.content[0].text = `${text.slice(0, mid)}${text[mid] === "1" ? "2" : "1"}${text.slice(mid + 1)}`;
		expect(r.record(changed)).toMatchObject({ kind: "unattributed", firstChanged: 1 });
		// And one character of a string nested in details.
		const nested = [...changed, msg("last")];
		(nested[1] as { details: { nested: { deeper: unknown[] } } }).details.nested.deeper[2] = {
			text: `${"c".repeat(499)}d`,
		};
		expect(r.record(nested)).toMatchObject({ kind: "unattributed", firstChanged: 1 });
		expect(r.counters()).toMatchObject({ requests: 4, baselines: 1, pureAppends: 1, unattributed: 2 });
	});

	/** A window of every kind of message Pi sends, nested values included (as Pi's messages carry them). */
	const window = (): Record<string, unknown>[] => [
		{ role: "user", content: "fix the parser", timestamp: 1 },
		{
			role: "assistant",
			content: [
				{ type: "thinking", thinking: "read it first", thinkingSignature: "sig" },
				{ type: "text", text: "Reading." },
				{ type: "toolCall", id: "call_1", name: "read", arguments: { path: "src/a.ts", offset: 10, all: false } },
			],
			api: "faux",
			provider: "faux",
			model: "m",
			usage: { input: 120, output: 30, cacheRead: 0, cacheWrite: 0, cost: { input: 0.1, output: 0.2, total: 0.3 } },
			stopReason: "toolUse",
			timestamp: 2,
		},
		{
			role: "toolResult",
			toolCallId: "call_1",
			toolName: "read",
			content: [{ type: "text", text: "export const a = 1;\nexport const b = 2;\n" }],
			details: { lines: 2, truncation: null, nested: { deeper: ["x", { text: "tail" }] } },
			isError: false,
			timestamp: 3,
		},
		{ role: "custom", customType: "note", content: [{ type: "text", text: "a note" }], display: true, timestamp: 4 },
	];

	type Container = Record<string | number, unknown>;
	type Change = { where: string; change(root: unknown): void };

	/** Every way one leaf or one key of `value` can change, each as a function changing a clone in place. */
	function changesOf(value: unknown, path: (string | number)[] = []): Change[] {
		const follow = (root: unknown, steps: (string | number)[]) =>
			steps.reduce((o: unknown, k) => (o as Container)[k], root) as Container;
		const parent = (root: unknown) => follow(root, path.slice(0, -1));
		const key = path.at(-1) as string | number;
		const replace = (where: string, next: (old: unknown) => unknown): Change => ({
			where,
			change: (root) => {
				const p = parent(root);
				p[key] = next(p[key]);
			},
		});
		const where = path.join(".");
		if (typeof value === "string") {
			return [...new Set([0, value.length >> 1, value.length - 1])].map((i) =>
				replace(`${where}[char ${i}]`, (old) => {
					const s = old as string;
					return s.length === 0 ? "x" : `${s.slice(0, i)}${s[i] === "#" ? "$" : "#"}${s.slice(i + 1)}`;
				}),
			);
		}
		if (typeof value === "number") return [replace(where, (old) => (old as number) + 1)];
		if (typeof value === "boolean") return [replace(where, (old) => !old)];
		if (value === null) return [replace(where, () => 0)];
		if (typeof value !== "object") return [];
		const self = (root: unknown) => follow(root, path);
		if (Array.isArray(value)) {
			const pushed: Change = {
				where: `${where}[pushed]`,
				change: (root) => void (self(root) as unknown as unknown[]).push(0),
			};
			return [pushed, ...value.flatMap((v, i) => changesOf(v, [...path, i]))];
		}
		const out: Change[] = [
			{
				where: `${where}{added}`,
				change: (root) => {
					self(root).zz = 1;
				},
			},
		];
		for (const k of Object.keys(value)) {
			out.push({
				where: `${where}{-${k}}`,
				change: (root) => {
					delete self(root)[k];
				},
			});
			out.push({
				where: `${where}{${k} renamed}`,
				change: (root) => {
					const o = self(root);
					o[`${k}_`] = o[k];
					delete o[k];
				},
			});
			out.push(...changesOf((value as Container)[k], [...path, k]));
		}
		return out;
	}

	it("catches every changed byte, key and leaf anywhere in the prefix (fresh clones, as Pi hands them over)", () => {
		const base = window();
		let tried = 0;
		for (let i = 0; i < base.length; i++) {
			for (const { where, change } of changesOf(base[i])) {
				const r = new RewriteRecorder(core);
				r.record(structuredClone(base));
				// The next request: the same window, cloned afresh, one thing changed in message i, one message more.
				const next = [...structuredClone(base), msg("more")];
				change(next[i]);
				expect(r.record(next), `message ${i}: ${where}`).toMatchObject({ kind: "unattributed", firstChanged: i });
				// The proof the estimate reuses covers every other message of the window, not this one.
				for (let j = 0; j < next.length; j++)
					expect(r.sameAs(next[j]) !== undefined, `${where}: ${j}`).toBe(j !== i && j < base.length);
				tried++;
			}
		}
		expect(tried).toBeGreaterThan(150);
		// Unchanged, every message is proven the same, and the request is a pure append.
		const r = new RewriteRecorder(core);
		r.record(structuredClone(base));
		const again = [...structuredClone(base), msg("more")];
		expect(r.record(again)).toMatchObject({ kind: "append" });
		expect(again.map((m) => r.sameAs(m) !== undefined)).toEqual([...base.map(() => true), false]);
	});

	it("incremental digests equal digesting every message afresh", () => {
		const first = bigRequest();
		const a = digestIncrementally(core, first, undefined);
		expect(Buffer.from(a.digests(core)).equals(Buffer.from(digestMessages(core, first)))).toBe(true);
		// Reused (same text), re-digested (key order changed, content changed) and appended messages.
		const second: unknown[] = [
			{ timestamp: 1, content: "task", role: "user" },
			bigRequest()[1],
			msg("note, edited"),
			msg("appended"),
		];
		const b = digestIncrementally(core, second, a);
		expect(Buffer.from(b.digests(core)).equals(Buffer.from(digestMessages(core, second)))).toBe(true);
		// A shorter request against a longer previous one.
		const third = second.slice(0, 2);
		expect(
			Buffer.from(digestIncrementally(core, third, b).digests(core)).equals(Buffer.from(digestMessages(core, third))),
		).toBe(true);
	});

	it("rebase starts a new baseline instead of a rewrite", () => {
		const r = new RewriteRecorder(core);
		r.record([msg("a"), msg("b")]);
		r.rebase();
		expect(r.record([msg("summary")])).toMatchObject({ kind: "baseline" });
		expect(r.counters()).toMatchObject({ requests: 2, baselines: 2, unattributed: 0 });
	});
});

describe("ProjectionAligner (incremental alignment on pure appends)", () => {
	const user = (text: string, timestamp: number) => ({ role: "user" as const, content: text, timestamp });
	const requestOf = (sm: SessionManager) =>
		sm.buildSessionProjection().messages.filter((m) => m.role !== "system") as Parameters<
			ProjectionAligner["align"]
		>[0];

	it("accepts an aligned tail and still catches a misaligned one, as the full check does", () => {
		const sm = SessionManager.inMemory();
		sm.appendMessage(user("a", 1));
		const aligner = new ProjectionAligner();
		expect(aligner.align(requestOf(sm), sm, false).ok).toBe(true);
		sm.appendMessage(user("b", 2));
		const next = requestOf(sm);
		expect(aligner.align(next, sm, true).ok).toBe(true);
		sm.appendMessage(user("c", 3));
		const wrongTimestamp = [...requestOf(sm)];
		wrongTimestamp[2] = { ...wrongTimestamp[2], timestamp: 99 } as (typeof wrongTimestamp)[number];
		const bad = aligner.align(wrongTimestamp, sm, true);
		expect(bad).toEqual(alignWithProjection(wrongTimestamp, sm.buildSessionProjection()));
		expect(bad.ok).toBe(false);
		// A message the session does not have, after a failure: still caught (the failure forgot the last alignment).
		const extra = [...requestOf(sm), user("d", 4)] as typeof next;
		expect(aligner.align(extra, sm, true).ok).toBe(false);
		expect(aligner.align(requestOf(sm), sm, false).ok).toBe(true);
		const extra2 = [...requestOf(sm), user("e", 5)] as typeof next;
		expect(aligner.align(extra2, sm, true).ok).toBe(false);
	});

	it("entriesSince walks back to the given leaf, and refuses one off the path", () => {
		const sm = SessionManager.inMemory();
		const a = sm.appendMessage(user("a", 1));
		const b = sm.appendMessage(user("b", 2));
		const c = sm.appendMessage(user("c", 3));
		expect(entriesSince(sm, a)?.map((e) => e.id)).toEqual([b, c]);
		expect(entriesSince(sm, c)).toEqual([]);
		expect(entriesSince(sm, "not-there")).toBeUndefined();
		expect(entriesSince(sm, a, 1)).toBeUndefined();
	});
});
