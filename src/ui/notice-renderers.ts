// How pi-fold's messages in the chat look to a person: the commit receipt, the unbriefed-marks notice
// and the overflow notice are custom messages (the model reads their full text), drawn in the TUI
// through Pi's custom message renderer as one short styled line each, with the full text when the
// person expands the row. The receipt's shares come from window-figure.ts, like every other display.
import type { ExtensionAPI, Theme, ThemeColor } from "@earendil-works/pi-coding-agent";
import { Text } from "@earendil-works/pi-tui";
import {
	automatedNoticeBody,
	OVERFLOW_NOTICE_TYPE,
	RECEIPT_TYPE,
	type ReceiptDetails,
	UNBRIEFED_NOTICE_TYPE,
} from "../vocabulary.ts";
import { formatTokens, percentOf } from "./window-figure.ts";

interface NoticeLine {
	glyph: string;
	colour: ThemeColor;
	text: string;
}

const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
const isCount = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v) && v >= 0;

/** The first line of a message's body: without the automated-notice framing, or an older session's "[pi-fold]" tag. */
function firstLine(content: unknown): string {
	const text =
		typeof content === "string"
			? content
			: Array.isArray(content)
				? content.map((b: { type?: string; text?: string }) => (b?.type === "text" ? (b.text ?? "") : "")).join("\n")
				: "";
	return (automatedNoticeBody(text).split("\n", 1)[0] ?? "").replace(/^\[pi-fold\]\s*/, "").slice(0, 200);
}

function receiptLine(details: unknown, content: unknown): NoticeLine {
	const d = details as Partial<ReceiptDetails> | undefined;
	if (
		!d ||
		!Array.isArray(d.committed) ||
		!isCount(d.before) ||
		!isCount(d.after) ||
		!isCount(d.budget) ||
		d.budget === 0
	) {
		return { glyph: "⊟", colour: "success", text: `pi-fold: ${firstLine(content)}` };
	}
	const consolidated = Array.isArray(d.consolidated) ? d.consolidated.length : 0;
	const freed = Math.max(0, d.before - d.after);
	return {
		glyph: "⊟",
		colour: "success",
		text:
			`pi-fold folded ${plural(d.committed.length, "span")}${consolidated > 0 ? ` (+${plural(consolidated, "consolidation")})` : ""}: ` +
			`window ${percentOf(d.before, d.budget)} → ${percentOf(d.after, d.budget)} of ${formatTokens(d.budget)} tokens, ` +
			`~${formatTokens(freed)} freed; originals kept on disk`,
	};
}

function unbriefedLine(content: unknown): NoticeLine {
	const n = /^(\d+) staged marks/.exec(firstLine(content))?.[1];
	return {
		glyph: "◇",
		colour: "warning",
		text: n
			? `pi-fold: ${n} marks wait for the agent's brief (without one, each folds under a generated brief)`
			: `pi-fold: ${firstLine(content)}`,
	};
}

function overflowLine(details: unknown, content: unknown): NoticeLine {
	const d = details as { folds?: unknown; after?: unknown; budget?: unknown } | undefined;
	if (!d || !isCount(d.folds) || !isCount(d.after) || !isCount(d.budget)) {
		return { glyph: "⚠", colour: "warning", text: `pi-fold: ${firstLine(content)}` };
	}
	return {
		glyph: "⚠",
		colour: "warning",
		text:
			`pi-fold: the provider refused the request as too long; folded ${plural(d.folds, "span")} and retried once ` +
			`at ~${formatTokens(d.after)} of ${formatTokens(d.budget)} tokens`,
	};
}

/** The one line for a pi-fold message, or undefined for a type that is not pi-fold's. */
export function noticeLine(customType: string, content: unknown, details: unknown): NoticeLine | undefined {
	if (customType === RECEIPT_TYPE) return receiptLine(details, content);
	if (customType === UNBRIEFED_NOTICE_TYPE) return unbriefedLine(content);
	if (customType === OVERFLOW_NOTICE_TYPE) return overflowLine(details, content);
	return undefined;
}

function fullText(content: unknown): string {
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	return content.map((b: { type?: string; text?: string }) => (b?.type === "text" ? (b.text ?? "") : "")).join("\n");
}

export function registerNoticeRenderers(pi: ExtensionAPI): void {
	for (const type of [RECEIPT_TYPE, UNBRIEFED_NOTICE_TYPE, OVERFLOW_NOTICE_TYPE]) {
		pi.registerMessageRenderer(type, (message, options, theme: Theme) => {
			try {
				const line = noticeLine(message.customType, message.content, message.details);
				if (!line) return undefined;
				let text = `${theme.fg(line.colour, line.glyph)} ${theme.fg("muted", line.text)}`;
				if (options.expanded) text += `\n${theme.fg("dim", fullText(message.content))}`;
				else text += ` ${theme.fg("dim", `(${options.keyHint("app.tools.expand", "for the full text")})`)}`;
				return new Text(text, options.outputPad, 0);
			} catch {
				// Pi draws the message its own way.
				return undefined;
			}
		});
	}
}
