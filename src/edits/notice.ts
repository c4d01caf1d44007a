// The unbriefed-marks notice: when 3 or more staged marks wait without the agent's brief, one
// bounded message names them and says how to brief them. It rides on a batch that rewrites the
// window anyway (a commit), at its end, so it never causes a rewrite of its own. The text is pure
// and deterministic.
import type { CustomMessageEntryDraft } from "@earendil-works/pi-coding-agent";
import type { FoldLattice } from "../lattice/index.ts";
import type { ContextEntries } from "../session/context-entries.ts";
import { count, utf8Length } from "../values/text-fit.ts";
import {
	AUTOMATED_NOTICE_FRAME_BYTES,
	automatedNotice,
	type BriefProvenance,
	FOLD_TOOL_NAME,
	type FoldId,
	type FoldKind,
	type FoldState,
	UNBRIEFED_NOTICE_TYPE,
} from "../vocabulary.ts";

/** The notice's cap in UTF-8 bytes, its automated-notice framing included. */
export const NOTICE_MAX_BYTES = 1200 + AUTOMATED_NOTICE_FRAME_BYTES;

/** Fewer unbriefed marks than this: no notice. */
const NOTICE_MIN_MARKS = 3;

/** A staged mark as the notice sees it; `bytes` is the canonical size of its leaves. */
export interface NoticeFold {
	id: FoldId;
	kind: FoldKind;
	provenance: BriefProvenance;
	bytes: number;
	/** When given, only "pending" folds count. */
	state?: FoldState;
}

interface NoticeOptions {
	maxBytes?: number;
	minMarks?: number;
}

function size(bytes: number): string {
	if (!Number.isFinite(bytes) || bytes < 0) return "? B";
	return bytes >= 10_000 ? `${count(bytes / 1000)} kB` : `${count(bytes)} B`;
}

/**
 * The notice naming the pending marks that carry no supplied brief, or undefined when fewer than
 * `minMarks` wait. The list is cut with "and N more" so the whole text, framed as an automated notice,
 * stays within `maxBytes`.
 */
export function unbriefedNotice(pendingFolds: readonly NoticeFold[], opts: NoticeOptions = {}): string | undefined {
	const maxBytes = Math.max(400, Math.floor(opts.maxBytes ?? NOTICE_MAX_BYTES) - AUTOMATED_NOTICE_FRAME_BYTES);
	const minMarks = Math.max(1, Math.floor(opts.minMarks ?? NOTICE_MIN_MARKS));
	const waiting = pendingFolds.filter(
		(f) => f !== null && typeof f === "object" && f.provenance !== "supplied" && (f.state ?? "pending") === "pending",
	);
	if (waiting.length < minMarks) return undefined;
	const head =
		`${waiting.length} staged marks wait without your brief; each will fold under a generated one. ` +
		`To brief one: ${FOLD_TOOL_NAME} {"action":"brief","id":"<id>","text":"<one sentence>"}.`;
	const lines = waiting.map((f) => `- ${String(f.id)} ${String(f.kind)} ${size(f.bytes)}`);
	const render = (shown: number): string => {
		const more = waiting.length - shown;
		return [head, ...lines.slice(0, shown), ...(more > 0 ? [`and ${more} more`] : [])].join("\n");
	};
	// The longest list that fits: add lines while the text, with its "and N more" line, stays in budget.
	let shown = 0;
	let bytes = utf8Length(head);
	const moreBytes = (k: number) => (k < lines.length ? utf8Length(`\nand ${lines.length - k} more`) : 0);
	while (shown < lines.length && bytes + 1 + utf8Length(lines[shown]) + moreBytes(shown + 1) <= maxBytes) {
		bytes += 1 + utf8Length(lines[shown]);
		shown++;
	}
	return automatedNotice(render(shown));
}

/** The notice as a draft for a commit batch, naming the marks `lattice` still has pending; none under the minimum. */
export function unbriefedNoticeDraft(
	lattice: Pick<FoldLattice, "pending">,
	context: Pick<ContextEntries, "entries">,
): CustomMessageEntryDraft | undefined {
	const entries = context.entries;
	const text = unbriefedNotice(
		lattice.pending().map((f) => {
			let bytes = 0;
			for (let p = f.start; p < f.end; p++) bytes += entries[p].bytes;
			return { id: f.id, kind: f.kind, provenance: f.provenance, bytes, state: f.state };
		}),
	);
	return text === undefined
		? undefined
		: { type: "custom_message", customType: UNBRIEFED_NOTICE_TYPE, content: text, display: true };
}
