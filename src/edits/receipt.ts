// The commit receipt: one bounded message appended after a commit, saying what folded and what it
// freed. It is a `custom_message`, so it reaches the model too (Pi has no display-only message): it
// lands at the end of the very request the commit rewrites, so it adds no rewrite of its own, and
// it tells the agent which fold ids it can read back. It reaches the model as a user-role message
// in the middle of a turn, so it is framed as an automated notice (vocabulary.ts). `display: true`
// so a person sees the commit in the transcript as well.
import type { CustomMessageEntryDraft } from "@earendil-works/pi-coding-agent";
import { utf8Length } from "../values/text-fit.ts";
import {
	AUTOMATED_NOTICE_FRAME_BYTES,
	automatedNotice,
	FOLD_TOOL_NAME,
	RECEIPT_TYPE,
	type ReceiptDetails,
	type ReceiptFacts,
} from "../vocabulary.ts";

/** The receipt's cap in UTF-8 bytes, its automated-notice framing included. */
export const RECEIPT_MAX_BYTES = 600 + AUTOMATED_NOTICE_FRAME_BYTES;
const BODY_MAX_BYTES = RECEIPT_MAX_BYTES - AUTOMATED_NOTICE_FRAME_BYTES;

const pct = (tokens: number, budget: number) => `${Math.round((100 * tokens) / Math.max(1, budget))}%`;

/** The receipt text, framed as an automated notice: ids listed while they fit, then "and N more"; always within RECEIPT_MAX_BYTES. */
function receiptText(f: ReceiptFacts): string {
	const freed = Math.max(0, f.before - f.after);
	const head =
		`commit: ${f.committed.length} fold${f.committed.length === 1 ? "" : "s"}` +
		(f.consolidated.length > 0
			? `, ${f.consolidated.length} consolidation${f.consolidated.length === 1 ? "" : "s"}`
			: "") +
		`; ~${freed} tokens freed, window ${pct(f.before, f.budget)} -> ${pct(f.after, f.budget)} of ${f.budget}.`;
	const tail = ` Originals are kept byte for byte: ${FOLD_TOOL_NAME} {"action":"peek","id":"<id>"}.`;
	const ids = [...f.consolidated, ...f.committed];
	let list = "";
	for (let i = 0; i < ids.length; i++) {
		const more = ids.length - i - 1;
		const next = `${list === "" ? " Folds:" : ","} ${ids[i]}`;
		const suffix = more > 0 ? ` and ${more} more.` : ".";
		if (utf8Length(head + list + next + suffix + tail) > BODY_MAX_BYTES) {
			list += ` and ${ids.length - i} more.`;
			break;
		}
		list += next;
		if (more === 0) list += ".";
	}
	return automatedNotice(head + list + tail);
}

/** The receipt draft for the commit batch. */
export function receiptDraft(f: ReceiptFacts): CustomMessageEntryDraft {
	const details: ReceiptDetails = { v: 1, ...f, committed: [...f.committed], consolidated: [...f.consolidated] };
	return { type: "custom_message", customType: RECEIPT_TYPE, content: receiptText(f), display: true, details };
}
