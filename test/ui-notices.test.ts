// pi-fold's messages in the chat, as a person sees them: the commit receipt, the unbriefed-marks
// notice and the overflow notice each draw as one short line (Pi's custom message renderer), with
// the shares written by the function every display uses; expanded, the full text the model got.
import type { MessageRenderer, MessageRenderOptions, Theme } from "@earendil-works/pi-coding-agent";
import { stripTerminalSequences } from "@earendil-works/pi-tui";
import { afterAll, describe, expect, it } from "vitest";
import { makeSession, removeTempDirs } from "../harness/pi-harness.ts";
import { unbriefedNotice } from "../src/edits/notice.ts";
import { overflowNoticeDraft } from "../src/edits/overflow-notice.ts";
import { receiptDraft } from "../src/edits/receipt.ts";
import { registerPiFold } from "../src/index.ts";
import { noticeLine } from "../src/ui/notice-renderers.ts";
import { formatTokens, percentOf } from "../src/ui/window-figure.ts";
import { OVERFLOW_NOTICE_TYPE, RECEIPT_TYPE, UNBRIEFED_NOTICE_TYPE } from "../src/vocabulary.ts";

afterAll(removeTempDirs);

const FACTS = {
	committed: ["f0123456789", "f1123456789", "f2123456789"],
	consolidated: ["f3123456789"],
	before: 11_480,
	after: 5_310,
	budget: 14_000,
};

describe("one line per pi-fold message", () => {
	it("the receipt: spans folded, the window before and after as shares of the budget, what it freed", () => {
		const draft = receiptDraft(FACTS);
		expect(noticeLine(RECEIPT_TYPE, draft.content, draft.details)).toEqual({
			glyph: "⊟",
			colour: "success",
			text: `pi-fold folded 3 spans (+1 consolidation): window ${percentOf(11_480, 14_000)} → ${percentOf(5_310, 14_000)} of 14k tokens, ~${formatTokens(6_170)} freed; originals kept on disk`,
		});
		expect(percentOf(11_480, 14_000)).toBe("82%");
		// A receipt without usable details (an older session): its own first line, without the tag.
		expect(noticeLine(RECEIPT_TYPE, "[pi-fold] commit: 2 folds", undefined)?.text).toBe("pi-fold: commit: 2 folds");
	});

	it("the unbriefed-marks notice and the overflow notice", () => {
		const text = unbriefedNotice(
			["f0123456789", "f1123456789", "f2123456789"].map((id) => ({
				id,
				kind: "tool-batch" as const,
				provenance: "deterministic" as const,
				bytes: 9_000,
			})),
		);
		expect(noticeLine(UNBRIEFED_NOTICE_TYPE, text, undefined)?.text).toBe(
			"pi-fold: 3 marks wait for the agent's brief (without one, each folds under a generated brief)",
		);
		const overflow = overflowNoticeDraft({
			report: { tokens: 21_000, maximum: 16_000 },
			folds: 2,
			after: 6_000,
			budget: 14_000,
		});
		expect(noticeLine(OVERFLOW_NOTICE_TYPE, overflow.content, overflow.details)?.text).toBe(
			"pi-fold: the provider refused the request as too long; folded 2 spans and retried once at ~6k of 14k tokens",
		);
		expect(noticeLine("someone-else", "x", undefined)).toBeUndefined();
	});

	it("registered with Pi for all three types: one line collapsed, the model's full text expanded", async () => {
		const h = await makeSession({ extensions: [(pi) => void registerPiFold(pi, { providerInputBudget: 14_000 })] });
		try {
			const draft = receiptDraft(FACTS);
			const message = {
				role: "custom",
				customType: RECEIPT_TYPE,
				content: draft.content,
				display: true,
				details: draft.details,
				timestamp: 0,
			} as Parameters<MessageRenderer>[0];
			const plainTheme = { fg: (_c: string, t: string) => t } as unknown as Theme;
			const options = (expanded: boolean): MessageRenderOptions => ({
				expanded,
				outputPad: 1,
				keyText: () => "ctrl+o",
				keyHint: (_k, d) => `ctrl+o ${d}`,
			});
			for (const type of [RECEIPT_TYPE, UNBRIEFED_NOTICE_TYPE, OVERFLOW_NOTICE_TYPE]) {
				expect(h.session.extensionRunner.getMessageRenderer(type), type).toBeDefined();
			}
			const render = h.session.extensionRunner.getMessageRenderer(RECEIPT_TYPE);
			const collapsed = render?.(message, options(false), plainTheme)?.render(160).map(stripTerminalSequences) ?? [];
			expect(collapsed.filter((l) => l.trim() !== "")).toHaveLength(1);
			expect(collapsed.join("")).toContain("⊟ pi-fold folded 3 spans");
			expect(collapsed.join("")).toContain("(ctrl+o for the full text)");
			const expanded = render?.(message, options(true), plainTheme)?.render(160).map(stripTerminalSequences) ?? [];
			expect(expanded.join(" ").replace(/\s+/g, " ")).toContain("Originals are kept byte for byte");
		} finally {
			h.dispose();
		}
	});
});
