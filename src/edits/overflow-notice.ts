// The overflow notice: the provider refused a request as too long, pi-fold folded instead of a
// lossy compaction, and the retry is the folded window. Pure: reading the provider's error from
// the failed attempt, and the one bounded message the agent gets.
import type { CustomMessageEntryDraft, SessionEntry } from "@earendil-works/pi-coding-agent";
import { clip, utf8Length } from "../values/text-fit.ts";
import { AUTOMATED_NOTICE_FRAME_BYTES, automatedNotice, OVERFLOW_NOTICE_TYPE } from "../vocabulary.ts";

/** The notice's cap in UTF-8 bytes, its automated-notice framing included. */
export const OVERFLOW_NOTICE_MAX_BYTES = 600 + AUTOMATED_NOTICE_FRAME_BYTES;
const BODY_MAX_BYTES = OVERFLOW_NOTICE_MAX_BYTES - AUTOMATED_NOTICE_FRAME_BYTES;

interface OverflowReport {
	/** The provider's error text, if the failed attempt is on the branch. */
	message?: string;
	/** Tokens the provider said the request had, when it said so. */
	tokens?: number;
	/** The provider's limit, when it said so. */
	maximum?: number;
}

/** Code points of the provider's error quoted in the notice. */
const QUOTE_MAX = 60;

const number = (s: string) => Number.parseInt(s.replace(/[,_\s]/g, ""), 10);

/** "prompt is too long: 210000 tokens > 200000 maximum" and similar: the two numbers, when present. */
export function parseOverflowMessage(message: string): OverflowReport {
	const out: OverflowReport = { message };
	const m =
		/(\d[\d,_]*)\s*(?:input\s+)?tokens?\s*(?:>|exceeds?|is more than)\s*(?:the\s+)?(?:maximum\s+(?:of\s+)?)?(\d[\d,_]*)/i.exec(
			message,
		);
	if (m) {
		const tokens = number(m[1]);
		const maximum = number(m[2]);
		if (Number.isSafeInteger(tokens) && tokens > 0) out.tokens = tokens;
		if (Number.isSafeInteger(maximum) && maximum > 0) out.maximum = maximum;
	}
	return out;
}

/** The newest failed assistant attempt on the branch (Pi omits it from context, but it stays an entry). */
export function lastOverflowReport(branch: readonly SessionEntry[]): OverflowReport {
	for (let i = branch.length - 1; i >= 0; i--) {
		const e = branch[i];
		if (e.type !== "message" || e.message.role !== "assistant") continue;
		if (e.message.stopReason !== "error") return {};
		return parseOverflowMessage(e.message.errorMessage ?? "");
	}
	return {};
}

interface OverflowFacts {
	report: OverflowReport;
	/** Folds committed and consolidated by the recovery. */
	folds: number;
	/** Calibrated tokens of the retried request, estimated. */
	after: number;
	budget: number;
}

/** The one notice the agent gets, framed as an automated notice: what happened and that the retry is the folded window. */
function overflowNoticeText(f: OverflowFacts): string {
	const said =
		f.report.tokens !== undefined && f.report.maximum !== undefined
			? ` (${f.report.tokens} tokens > ${f.report.maximum} maximum)`
			: f.report.message
				? ` ("${clip(f.report.message, QUOTE_MAX)}")`
				: "";
	const text =
		`The provider refused the last request as too long${said}. ` +
		`Instead of a lossy compaction, pi-fold folded ${f.folds} span${f.folds === 1 ? "" : "s"} ` +
		`(see the receipt; originals are kept byte for byte) and retries once with ~${f.after} of ${f.budget} tokens.`;
	// QUOTE_MAX code points are at most 4 * QUOTE_MAX bytes, which leaves room for the rest; the
	// clip below only guards the arithmetic.
	return automatedNotice(utf8Length(text) <= BODY_MAX_BYTES ? text : clip(text, BODY_MAX_BYTES / 4));
}

export function overflowNoticeDraft(f: OverflowFacts): CustomMessageEntryDraft {
	return {
		type: "custom_message",
		customType: OVERFLOW_NOTICE_TYPE,
		content: overflowNoticeText(f),
		display: true,
		details: { v: 1, ...f.report, folds: f.folds, after: f.after, budget: f.budget },
	};
}
