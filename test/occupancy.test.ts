// Capacity accounting inside a real AgentSession: the estimate of each request
// calibrated by the usage the (faux) provider reports, and the thresholds' refusals.
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { makeSession, removeTempDirs } from "../harness/pi-harness.ts";
import { Calibration, MAX_CALIBRATION_RATIO, promptTokensOf } from "../src/meter/calibration.ts";
import {
	billedParts,
	estimateRequest,
	estimateRequestDetail,
	IMAGE_TOKENS,
	type RequestEstimate,
	RequestMemo,
} from "../src/meter/estimate.ts";
import { commitNeed, modelKey, OccupancyMeter, occupancyOf } from "../src/meter/occupancy.ts";
import { RewriteRecorder } from "../src/meter/recorder.ts";
import { DEFAULT_THRESHOLDS, validateThresholds } from "../src/policy/thresholds.ts";
import { seededInts } from "./helpers/seeded-ints.ts";

const core = nodeCore();
afterAll(removeTempDirs);

/** One request as the extension saw it: estimates before it went out, the usage after. */
interface Observed {
	raw: number;
	calibrated: number;
	real?: number;
	messages: number;
}

/** An extension that meters every request (full transcript, system included) and calibrates on each reply. */
function meteringExtension(meter: OccupancyMeter, log: Observed[]) {
	return (pi: ExtensionAPI) => {
		pi.on("context_with_system", (e, ctx) => {
			const model = modelKey(ctx.model);
			const calibrated = meter.occupancy(e.messages, model, 1).tokens; // before this request's own usage
			const raw = meter.observeRequest(e.messages, model).total;
			log.push({ raw, calibrated, messages: e.messages.length });
		});
		pi.on("message_end", (e, ctx) => {
			if (e.message.role !== "assistant") return;
			const outcome = meter.calibrate(e.message.usage, modelKey(ctx.model));
			const last = log.at(-1);
			if (last && outcome.ok) last.real = outcome.real;
		});
	};
}

/** A multi-step turn whose tool output is all digits: the estimator and the faux provider's chars/4 disagree on it. */
function digitsWorkload(steps: number) {
	const script = [];
	for (let i = 0; i < steps; i++) {
		script.push(
			fauxAssistantMessage(fauxToolCall("bash", { command: `seq ${i * 1000} ${i * 1000 + 700}` }, { id: `c${i}` }), {
				stopReason: "toolUse",
			}),
		);
	}
	script.push(fauxAssistantMessage(fauxText("done")));
	return script;
}

describe("estimating and calibrating requests in an AgentSession", () => {
	it("calibration pulls each estimate toward the usage the provider then reports", async () => {
		const meter = new OccupancyMeter(core);
		const log: Observed[] = [];
		const h = await makeSession({ extensions: [meteringExtension(meter, log)] });
		try {
			h.script(digitsWorkload(8));
			// Digits from the first request on, so every request has the mix the next one has.
			await h.session.prompt(`continue this count: ${Array.from({ length: 1500 }, (_, i) => i).join(" ")}`);
			expect(h.extensionErrors).toEqual([]);
			expect(log).toHaveLength(h.captured.length);
			expect(log.every((o) => o.real !== undefined)).toBe(true);

			// The workload is chosen so the estimator is visibly off (digits tokenize densely;
			// the faux provider bills chars/4): calibration has something to correct.
			const first = log[0];
			expect(first.calibrated).toBe(first.raw); // nothing reported yet
			const last = log.at(-1) as Observed & { real: number };
			expect(Math.abs(last.raw - last.real) / last.real).toBeGreaterThan(0.1);

			// Every later request is the previous one plus appended messages of the same kind, so the
			// previous request's usage plus its ratio must bring the estimate closer to what is billed.
			for (const o of log.slice(1)) {
				const real = o.real as number;
				expect(Math.abs(o.calibrated - real)).toBeLessThan(Math.abs(o.raw - real));
			}
			// And close: the ratio of the last request applied to itself reproduces its usage.
			const again = meter.estimateRequest(h.captured.at(-1)?.context.messages ?? []);
			expect(again.total).toBe(last.raw);
			expect(meter.calibration.apply(again, modelKey(h.session.model))).toBe(last.real);
		} finally {
			h.dispose();
		}
	});

	it("the estimate counts the system prompt and tool declarations", async () => {
		const log: Observed[] = [];
		const h = await makeSession({ extensions: [meteringExtension(new OccupancyMeter(core), log)] });
		try {
			h.script([fauxAssistantMessage(fauxText("hi"))]);
			await h.session.prompt("hello");
			const messages = h.captured[0].context.messages;
			const system = messages.filter((m) => m.role === "system");
			expect(system.length).toBeGreaterThan(0);
			expect(billedParts(system[0]).text).toContain('"name":"bash"');
			expect(estimateRequest(core, messages)).toBeGreaterThan(
				estimateRequest(
					core,
					messages.filter((m) => m.role !== "system"),
				),
			);
		} finally {
			h.dispose();
		}
	});
});

/** A request estimate made by hand: one message per token count, distinct texts. */
function handEstimate(tokens: number[], texts = tokens.map((_, i) => `m${i}`)): RequestEstimate {
	return { texts, tokens: Uint32Array.from(tokens), total: tokens.reduce((a, b) => a + b, 0) };
}

describe("calibration", () => {
	it("anchors an appended request to the reported usage, and scales a rewritten one by the ratio", () => {
		const c = new Calibration();
		c.observeRequest(handEstimate([300, 500]), "p/m");
		expect(c.calibrate({ input: 0, cacheRead: 600, cacheWrite: 400 }, "p/m")).toMatchObject({ ok: true, ratio: 1.25 });
		// Same two messages, then 200 more estimated tokens: 1000 billed + 200 * 1.25.
		expect(c.apply(handEstimate([300, 500, 200]), "p/m")).toBe(1000 + 250);
		// The second message was rewritten (a commit): no anchor, the whole estimate is scaled.
		expect(c.apply(handEstimate([300, 40, 200], ["m0", "brief", "m2"]), "p/m")).toBe(Math.round(540 * 1.25));
		// Fewer messages than the calibrated request: not an extension either.
		expect(c.apply(handEstimate([300]), "p/m")).toBe(Math.round(300 * 1.25));
	});

	it("refuses usage it cannot attribute, and keeps the calibration it had", () => {
		const c = new Calibration();
		expect(c.calibrate({ input: 0, cacheRead: 900, cacheWrite: 100 }, "p/m")).toMatchObject({ ok: false }); // nothing observed
		c.observeRequest(handEstimate([800]), "p/m");
		expect(c.calibrate({ input: 0, cacheRead: 0, cacheWrite: 0 }, "p/m")).toMatchObject({ ok: false }); // an error reply
		expect(c.calibrate({ input: 1000 }, "p/other")).toMatchObject({
			ok: false,
			reason: expect.stringContaining("p/other"),
		});
		expect(c.calibrate({ input: 800 * (MAX_CALIBRATION_RATIO + 1) }, "p/m")).toMatchObject({
			ok: false,
			reason: expect.stringContaining("implausible"),
		});
		expect(c.ratioFor("p/m")).toBe(1);
		expect(c.calibrate({ input: 100, cacheRead: 800, cacheWrite: 100 }, "p/m")).toMatchObject({
			ok: true,
			ratio: 1.25,
		});
		expect(c.ratioFor("p/m")).toBe(1.25);
		expect(c.ratioFor("p/another-model")).toBe(1); // another tokenizer: no carry-over
		// An observation is used once: a second report for the same request changes nothing.
		expect(c.calibrate({ input: 2000 }, "p/m")).toMatchObject({ ok: false });
		expect(c.apply(handEstimate([1000], ["other"]), "p/m")).toBe(1250);
	});

	it("reads prompt tokens as input + cacheRead + cacheWrite", () => {
		expect(promptTokensOf({ input: 1, cacheRead: 20, cacheWrite: 300, output: 4000 })).toBe(321);
		expect(promptTokensOf({ input: -1, cacheRead: 20 })).toBeUndefined();
		expect(promptTokensOf(null)).toBeUndefined();
	});
});

describe("commit need", () => {
	it("is zero below maxTarget and frees down to minTarget at or above it", () => {
		const t = DEFAULT_THRESHOLDS;
		const budget = 10_000;
		const at = (share: number) => occupancyOf(Math.round(share * budget), budget);
		expect(commitNeed(at(0.79), t)).toBe(0);
		expect(commitNeed(at(t.maxTarget), t)).toBe(Math.round(t.maxTarget * budget) - t.minTarget * budget);
		expect(commitNeed(at(1.2), t)).toBe(1.2 * budget - t.minTarget * budget);
		expect(occupancyOf(5_000, budget).share).toBe(0.5);
	});
});

describe("thresholds", () => {
	it("defaults to the documented policy and merges a partial policy over them", () => {
		expect(validateThresholds(undefined)).toEqual({
			ok: true,
			thresholds: { maxTarget: 0.8, minTarget: 0.4, consolidateAfter: 10, minFoldChars: 8000, rawBatches: 3 },
		});
		expect(validateThresholds({ maxTarget: 0.9 })).toEqual({
			ok: true,
			thresholds: { ...DEFAULT_THRESHOLDS, maxTarget: 0.9 },
		});
	});

	it.each([
		[{ minTarget: 0.8 }, "thresholds.minTarget"],
		[{ minTarget: 0.9, maxTarget: 0.5 }, "must be below"],
		[{ maxTarget: 0 }, "thresholds.maxTarget"],
		[{ maxTarget: 1.2 }, "thresholds.maxTarget"],
		[{ minTarget: Number.NaN }, "thresholds.minTarget"],
		[{ consolidateAfter: 2.5 }, "thresholds.consolidateAfter"],
		[{ consolidateAfter: 0 }, "thresholds.consolidateAfter"],
		[{ minFoldChars: "8000" }, "thresholds.minFoldChars"],
		[{ rawBatches: 2 }, "thresholds.rawBatches must be an integer >= 3"],
		[{ freshTail: 3 }, "thresholds.freshTail"],
		[[0.8, 0.4], "an array"],
	])("refuses %j by name", (input, name) => {
		const r = validateThresholds(input);
		expect(r.ok).toBe(false);
		if (!r.ok) expect(r.problems.join("\n")).toContain(name);
	});

	it("reports every problem at once and never clamps", () => {
		const input = { maxTarget: 2, minFoldChars: -1 };
		const r = validateThresholds(input);
		expect(r).toMatchObject({ ok: false });
		if (!r.ok) expect(r.problems).toHaveLength(2);
		expect(input).toEqual({ maxTarget: 2, minFoldChars: -1 }); // untouched
	});
});

describe("RequestMemo (per-stream reuse of billed texts and tokens)", () => {
	const long = "export function f(x) { return x * 2; }\n".repeat(200);
	/** Messages of every kind the estimator reads differently. */
	const kinds = (r: (k: number) => number, i: number): unknown => {
		switch (r(8)) {
			case 0:
				return { role: "user", content: `task ${i} ${long.slice(0, r(400))}`, timestamp: i };
			case 1:
				return {
					role: "assistant",
					content: [
						{ type: "thinking", thinking: `hmm ${i}` },
						{ type: "text", text: `note ${i}` },
						{ type: "toolCall", id: `c${i}`, name: "read", arguments: { path: `f${i}.ts`, offset: r(50) } },
					],
					usage: { input: i, output: 1, cost: { total: 0 } },
					stopReason: "toolUse",
					timestamp: i,
				};
			case 2:
				return {
					role: "toolResult",
					toolCallId: `c${i}`,
					toolName: "read",
					content: [{ type: "text", text: long.slice(r(3000)) }],
					details: { lines: r(100), nested: { deeper: ["a", { text: "b".repeat(r(30)) }] } },
					isError: false,
					timestamp: i,
				};
			case 3:
				return {
					role: "system",
					content: "You are an agent.",
					sections: { preamble: "P", tools: `T${r(3)}`, rules: "R" },
					toolsAdded: [{ name: "read", parameters: { type: "object", properties: { path: { type: "string" } } } }],
					timestamp: 0,
				};
			case 4:
				return {
					role: "user",
					content: [
						{ type: "text", text: "look" },
						{ type: "image", data: "AAAA", mimeType: "image/png" },
					],
				};
			case 5:
				return { role: "bashExecution", command: "ls", output: `a\nb${i}`, exitCode: 0, timestamp: i };
			case 6:
				return { role: "custom", customType: "x", content: [{ type: "text", text: `c${i}` }], details: new Date(i) };
			default:
				return { role: "assistant", content: [{ type: "mystery", payload: { k: i } }], timestamp: i };
		}
	};
	/** A fresh clone, sometimes changed deep inside or with its keys (sections too) reordered. */
	const variant = (r: (k: number) => number, m: unknown): unknown => {
		const c = structuredClone(m) as Record<string, unknown>;
		const change = r(6);
		if (change === 0 && Array.isArray(c.content) && typeof (c.content[0] as { text?: unknown })?.text === "string") {
			const block = c.content[0] as { text: string };
			const mid = block.text.length >> 1;
			block.text = `${block.text.slice(0, mid)}#${block.text.slice(mid + 1)}`;
		} else if (change === 1) {
			return Object.fromEntries(Object.entries(c).reverse());
		} else if (change === 2 && typeof c.sections === "object" && c.sections !== null) {
			c.sections = Object.fromEntries(Object.entries(c.sections).reverse()); // billed text changes order
		} else if (change === 3 && typeof c.details === "object" && c.details !== null) {
			(c.details as Record<string, unknown>).lines = -1; // not billed: same text, same tokens
		}
		return c;
	};

	/** The session's own objects grow by appends; now and then something is rewritten or dropped. */
	const grown = (r: (k: number) => number, request: unknown[], step: number): unknown[] => {
		const act = r(10);
		if (act < 6) for (let k = 1 + r(3); k > 0; k--) request.push(kinds(r, step * 10 + k));
		else if (act === 6 && request.length > 0) request[r(request.length)] = kinds(r, step * 10);
		else if (act === 7) return request.slice(0, r(request.length + 1));
		else if (act === 8 && request.length > 0) request[r(request.length)] = variant(r, request[0]);
		return request;
	};

	it.each([1, 2, 3, 4, 5, 6, 7, 8])("answers what a fresh estimate answers, stream after stream (seed %i)", (seed) => {
		const r = seededInts(seed);
		const sent = new RequestMemo();
		const next = new RequestMemo();
		let request: unknown[] = [];
		for (let step = 0; step < 60; step++) {
			request = grown(r, request, step);
			// turn_end's preview hands over the objects themselves; the request as sent, fresh clones.
			const preview = [...request];
			const asSent = request.map((m) => (r(4) === 0 ? variant(r, m) : structuredClone(m)));
			for (const [memo, partner, messages] of [
				[next, sent, preview],
				[sent, next, asSent],
			] as const) {
				const got = memo.estimate(core, messages, partner);
				const want = estimateRequestDetail(core, messages);
				expect(got.texts).toEqual(want.texts);
				expect([...got.tokens]).toEqual([...want.tokens]);
				expect(got.total).toBe(want.total);
			}
		}
	});

	it.each([1, 2, 3, 4, 5, 6])(
		"with the rewrite recorder's proof, answers what a fresh estimate answers (seed %i)",
		(seed) => {
			// As in the runtime: the context event records the request (system messages travel apart),
			// then context_with_system estimates the same objects, system message first.
			const r = seededInts(seed);
			const recorder = new RewriteRecorder(core);
			const sent = new RequestMemo();
			const next = new RequestMemo();
			const system = kinds(() => 3, 0);
			let request: unknown[] = [];
			let reused = 0;
			for (let step = 0; step < 60; step++) {
				request = grown(r, request, step);
				next.estimate(core, [system, ...request], sent);
				const asSent = [system, ...request].map((m) => (r(4) === 0 ? variant(r, m) : structuredClone(m)));
				recorder.record(asSent.slice(1));
				// Now and then a later handler edits a message in place after the recorder saw it.
				const edited = r(3) === 0 ? asSent[1 + r(asSent.length - 1)] : undefined;
				const block = (edited as { content?: { text?: unknown }[] } | undefined)?.content?.[0];
				if (block && typeof block.text === "string") block.text = `${block.text}, edited`;
				const got = sent.estimate(core, asSent, next, (m) => {
					const same = recorder.sameAs(m);
					if (same !== undefined) reused++;
					return same;
				});
				const want = estimateRequestDetail(core, asSent);
				expect(got.texts).toEqual(want.texts);
				expect([...got.tokens]).toEqual([...want.tokens]);
			}
			expect(reused).toBeGreaterThan(0);
		},
	);

	it("counts an image once per request, however often the request repeats", () => {
		const memo = new RequestMemo();
		const request = [
			{
				role: "user",
				content: [
					{ type: "text", text: "look" },
					{ type: "image", data: "AAAA" },
				],
			},
		];
		const want = estimateRequestDetail(core, request).total;
		expect(want).toBeGreaterThan(IMAGE_TOKENS);
		for (let k = 0; k < 3; k++) expect(memo.estimate(core, structuredClone(request)).total).toBe(want);
	});

	it("re-reads a clone that differs by one character deep inside, and reuses the rest", () => {
		const memo = new RequestMemo();
		const result = (text: string) => ({ role: "toolResult", toolName: "read", content: [{ type: "text", text }] });
		const make = (text = long) => [{ role: "user", content: "task", timestamp: 1 }, result(text)];
		const first = memo.estimate(core, make());
		const changed = make(`${long.slice(0, 100)}~${long.slice(101)}`);
		const second = memo.estimate(core, changed);
		expect(second.texts[0]).toBe(first.texts[0]);
		expect(second.texts[1]).not.toBe(first.texts[1]);
		expect(second.texts[1]).toBe(estimateRequestDetail(core, changed).texts[1]);
	});
});
