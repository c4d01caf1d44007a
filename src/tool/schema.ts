// The pi_fold_context tool's arguments: the TypeBox schema the model sees, and our own parser.
// Pi validates against the schema before execute; the parser re-checks so every caller (also
// ones that skip Pi's validation) gets a specific refusal rather than an exception.
import { type Static, Type } from "typebox";

export const FOLD_TOOL_NAME = "pi_fold_context";

/** Every action the tool accepts; each one is implemented by one module in src/tool/. */
export const ACTIONS = ["status"] as const;
export type ActionName = (typeof ACTIONS)[number];

export const foldToolParameters = Type.Object({
	// A plain string enum (what pi-ai's StringEnum emits, which every provider accepts), typed for TypeBox.
	action: Type.Unsafe<ActionName>({
		type: "string",
		enum: [...ACTIONS],
		description: "status: pi-fold's version, its WebAssembly core, the core's self-check and the Pi host version",
	}),
});

export type FoldToolArgs = Static<typeof foldToolParameters>;

export type ParsedArgs = { ok: true; args: FoldToolArgs } | { ok: false; action: string | null; reason: string };

const KNOWN_KEYS = new Set(Object.keys(foldToolParameters.properties));

function describe(value: unknown): string {
	if (value === null) return "null";
	if (Array.isArray(value)) return "an array";
	if (typeof value === "string") return `the string ${JSON.stringify(value)}`;
	return `${typeof value} ${typeof value === "object" ? "" : JSON.stringify(value)}`.trim();
}

/** Check raw tool arguments; the reason names the argument, what was given and what is allowed. */
export function parseFoldArgs(raw: unknown): ParsedArgs {
	if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
		return { ok: false, action: null, reason: `arguments must be an object with an "action", got ${describe(raw)}` };
	}
	const record = raw as Record<string, unknown>;
	const action = record.action;
	const allowed = ACTIONS.map((a) => JSON.stringify(a)).join(", ");
	if (action === undefined) return { ok: false, action: null, reason: `"action" is missing; use one of ${allowed}` };
	if (typeof action !== "string") {
		return {
			ok: false,
			action: null,
			reason: `"action" must be a string, got ${describe(action)}; use one of ${allowed}`,
		};
	}
	if (!(ACTIONS as readonly string[]).includes(action)) {
		return { ok: false, action, reason: `unknown action ${JSON.stringify(action)}; use one of ${allowed}` };
	}
	const unknown = Object.keys(record).filter((k) => !KNOWN_KEYS.has(k));
	if (unknown.length > 0) {
		const names = unknown.map((k) => JSON.stringify(k)).join(", ");
		return { ok: false, action, reason: `unknown argument ${names} for action ${JSON.stringify(action)}` };
	}
	return { ok: true, args: { action: action as ActionName } };
}
