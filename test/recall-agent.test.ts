// The session benchmark's recall agent reads what a model reads by its meaning, not by this project's
// exact phrasing: the question may be worded otherwise, the planted line's separator and case may
// change, and the tool's answers are read by what they carry. Its figures are said to be an upper bound.
import { describe, expect, it } from "vitest";
import {
	messageTexts,
	plantValues,
	RECALL_CAVEAT,
	readQuestion,
	recallQuestion,
	stagesByFold,
	valuesIn,
} from "../bench/lib/recall-agent.ts";
import type { ArmRun } from "../bench/lib/session-arms.ts";
import { recallText } from "../bench/lib/session-recall.ts";
import { plantLogText } from "../harness/workload.ts";

describe("the recall agent's reading", () => {
	it("reads the words and stages of the bench's own question and of other wordings of it", () => {
		const values = plantValues(32, 4, 1);
		expect(readQuestion(recallQuestion(values))).toEqual({ words: "check value", stages: values.map((v) => v.stage) });
		expect(readQuestion("At stages 3, 9 and 12, bash printed a check value. Give them all.")).toEqual({
			words: "check value",
			stages: [3, 9, 12],
		});
		expect(readQuestion("Earlier the check value got printed at each of stages 5, 6.")).toEqual({
			words: "check value",
			stages: [5, 6],
		});
		expect(readQuestion("Bash logged one check-value in stage 4 and stage 8; what were they?")).toEqual({
			words: "check-value",
			stages: [4, 8],
		});
		expect(readQuestion("What did you do today?")).toBeUndefined();
	});

	it("finds a planted value on its line whatever the separator, spacing or case", () => {
		const log = plantLogText(12, "chk-0123456789abcdef");
		expect(valuesIn(log, "check value")).toEqual(new Map([[12, "chk-0123456789abcdef"]]));
		const variants = [
			"[Stage 13] CHECK VALUE = chk-13.",
			"stage #14 check-value is chk-14",
			"(stage: 15) check_value -> chk-15",
		].join("\n");
		expect(valuesIn(variants, "check value")).toEqual(
			new Map([
				[13, "chk-13"],
				[14, "chk-14"],
				[15, "chk-15"],
			]),
		);
		// A line without a stage, or without the words, gives nothing.
		expect(valuesIn('[pi-fold search] "check value" (literal)\n[stage 3] audit 1/61: ok', "check value").size).toBe(0);
	});

	it("ties stages to the fold named before them, in any case", () => {
		const texts = ["[pi-fold f0123456789] stage 3 … STAGE 4\nf9876543210 Stage 9"];
		expect(stagesByFold(texts)).toEqual(
			new Map([
				["f0123456789", new Set([3, 4])],
				["f9876543210", new Set([9])],
			]),
		);
	});

	it("reads a request's messages as text, blocks one per line", () => {
		const texts = messageTexts({
			messages: [
				{ role: "user", content: "plain", timestamp: 0 },
				{
					role: "user",
					content: [
						{ type: "text", text: "a" },
						{ type: "text", text: "b" },
					],
					timestamp: 0,
				},
			],
		} as never);
		expect(texts).toEqual(["plain", "a\nb"]);
	});

	it("the bench's recall section says its figures are an upper bound for a model", () => {
		const run = { values: [], recallCalls: { search: 0, peek: 0, tokens: 0 } } as unknown as ArmRun;
		expect(RECALL_CAVEAT).toMatch(/upper bound for a model/);
		expect(recallText(run, run, {})).toContain(RECALL_CAVEAT);
	});
});
