// One original session entry as a person reads it: who spoke, the text, the tool calls with their
// arguments, the tool's output; thinking folded away. The bytes are the store's, shown as text.
import { h } from "./dom.ts";

type Loose = Record<string, unknown>;
const asLoose = (v: unknown): Loose | undefined =>
	typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Loose) : undefined;

function blocks(content: unknown): HTMLElement[] {
	if (typeof content === "string") return [h("pre", { class: "text" }, content)];
	if (!Array.isArray(content)) return [];
	return content.flatMap((raw): HTMLElement[] => {
		const b = asLoose(raw);
		if (!b) return [];
		if (b.type === "text") return [h("pre", { class: "text" }, String(b.text ?? ""))];
		if (b.type === "thinking")
			return [
				h("details", { class: "thinking" }, h("summary", {}, "thinking"), h("pre", {}, String(b.thinking ?? ""))),
			];
		if (b.type === "toolCall") {
			const args = JSON.stringify(b.arguments ?? {}, null, 1);
			return [
				h("div", { class: "call" }, h("span", { class: "call-name" }, `→ ${String(b.name)}`), h("pre", {}, args)),
			];
		}
		if (b.type === "image") return [h("div", { class: "image" }, "[image]")];
		return [];
	});
}

/** What kind of entry, in a few words. */
function heading(e: Loose): string {
	const m = asLoose(e.message);
	if (e.type === "message" && m) {
		if (m.role === "toolResult") return `tool result · ${String(m.toolName)}${m.isError === true ? " (error)" : ""}`;
		return String(m.role);
	}
	if (e.type === "custom_message") return `custom · ${String(e.customType)}`;
	return String(e.type);
}

export function entryView(text: string, entryId: string): HTMLElement {
	let e: Loose | undefined;
	try {
		e = asLoose(JSON.parse(text));
	} catch {
		e = undefined;
	}
	if (!e)
		return h(
			"div",
			{ class: "entry" },
			h("div", { class: "entry-head" }, `entry ${entryId}`),
			h("pre", { class: "text" }, text),
		);
	const m = asLoose(e.message);
	const body =
		e.type === "message" && m
			? blocks(m.content)
			: e.type === "custom_message"
				? blocks(e.content)
				: [h("pre", {}, JSON.stringify(e, null, 1))];
	return h(
		"div",
		{ class: `entry role-${m ? String(m.role) : e.type}` },
		h("div", { class: "entry-head" }, heading(e), h("span", { class: "entry-id" }, ` entry ${entryId}`)),
		...body,
	);
}
