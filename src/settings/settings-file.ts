// The user's settings file: $XDG_CONFIG_HOME/pi-fold/settings.json, else
// ~/.config/pi-fold/settings.json. Its only key is `thresholds`, checked by the same validator as
// registerPiFold's option (validateThresholds): only a policy that would register is ever written.
// A stored file never stops the agent: an older file is migrated (values kept, new keys at their
// defaults, dropped keys removed) and rewritten whole; an invalid one is left byte-for-byte alone,
// the defaults apply, and the reason is kept for /fold-settings and status.
import { readFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { DELETED_OPTIONS } from "../host/options.ts";
import { DEFAULT_THRESHOLDS, validateThresholds } from "../policy/thresholds.ts";
import { fsCode } from "../store/errors.ts";
import { describeValue, errorMessage, THRESHOLD_KEYS, type Thresholds } from "../vocabulary.ts";
import { replaceTextFile } from "./atomic-text.ts";

export interface UserSettings {
	thresholds: Thresholds;
}

/** Where the file lives; both default to this process's. */
interface SettingsLocation {
	env?: Readonly<Record<string, string | undefined>>;
	home?: string;
}

/** Top-level keys older files carried, each with why it is dropped (the deleted options, plus one that moved). */
const DROPPED_KEYS: ReadonlyMap<string, string> = new Map([
	...DELETED_OPTIONS,
	["providerInputBudget", "a deployment's serving budget is a registerPiFold option, not a user setting"],
]);

/** Threshold keys older files carried. */
const DROPPED_THRESHOLD_KEYS: ReadonlyMap<string, string> = new Map([
	["freshTail", DELETED_OPTIONS.get("freshTail") ?? ""],
]);

export type SettingsLoad =
	/** No file: the defaults, nothing written. */
	| { state: "missing"; path: string; settings: UserSettings }
	/** A current file: its values. */
	| { state: "current"; path: string; settings: UserSettings }
	/** An older file: its values migrated; `rewrite` says whether the whole new file was written. */
	| {
			state: "migrated";
			path: string;
			settings: UserSettings;
			changes: string[];
			rewrite: { ok: true } | { ok: false; reason: string };
	  }
	/** Unreadable or invalid: left alone, the defaults apply. */
	| { state: "invalid"; path: string; settings: UserSettings; reason: string };

type SettingsCheck = { ok: true; settings: UserSettings } | { ok: false; problems: string[] };

export function defaultSettings(): UserSettings {
	return { thresholds: { ...DEFAULT_THRESHOLDS } };
}

/** The settings file's path: $XDG_CONFIG_HOME (when set to an absolute path, as the XDG spec asks) or ~/.config. */
export function settingsPath(where: SettingsLocation = {}): string {
	const env = where.env ?? process.env;
	const xdg = env.XDG_CONFIG_HOME;
	const base = xdg && isAbsolute(xdg) ? xdg : join(where.home ?? homedir(), ".config");
	return join(base, "pi-fold", "settings.json");
}

/** The file's bytes for these settings: the whole object, keys in their documented order. */
export function settingsText(settings: UserSettings): string {
	const thresholds = Object.fromEntries(THRESHOLD_KEYS.map((k) => [k, settings.thresholds[k]]));
	return `${JSON.stringify({ thresholds }, null, "\t")}\n`;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

type Parsed = { ok: true; settings: UserSettings; changes: string[] } | { ok: false; reason: string };

/**
 * Read a file's text: its settings and the migration steps it needs (none for a current file), or
 * why it is invalid. Pure. Dropped keys are removed only if everything else in the file is valid.
 */
function parseSettingsText(text: string): Parsed {
	let data: unknown;
	try {
		data = JSON.parse(text.replace(/^\uFEFF/, ""));
	} catch (err) {
		return { ok: false, reason: `not valid JSON: ${errorMessage(err)}` };
	}
	if (!isObject(data)) {
		return {
			ok: false,
			reason: `the file must hold a JSON object with a "thresholds" key, got ${describeValue(data)}`,
		};
	}
	const changes: string[] = [];
	const problems: string[] = [];
	for (const key of Object.keys(data)) {
		if (key === "thresholds") continue;
		const dropped = DROPPED_KEYS.get(key);
		if (dropped !== undefined) changes.push(`removed ${key} (${dropped})`);
		else problems.push(`unknown key ${JSON.stringify(key)} (the only key is "thresholds")`);
	}
	let given: Record<string, unknown> = {};
	if (data.thresholds !== undefined) {
		if (!isObject(data.thresholds)) {
			problems.push(`thresholds must be an object, got ${describeValue(data.thresholds)}`);
		} else {
			for (const [key, value] of Object.entries(data.thresholds)) {
				const dropped = DROPPED_THRESHOLD_KEYS.get(key);
				if (dropped !== undefined) changes.push(`removed thresholds.${key} (${dropped})`);
				else given[key] = value;
			}
		}
	}
	if (problems.length === 0) {
		const checked = validateThresholds(given);
		if (!checked.ok) problems.push(...checked.problems);
		else {
			for (const key of THRESHOLD_KEYS) {
				if (!(key in given)) changes.push(`added thresholds.${key} = ${DEFAULT_THRESHOLDS[key]} (the default)`);
			}
			given = checked.thresholds as unknown as Record<string, unknown>;
		}
	}
	if (problems.length > 0) return { ok: false, reason: problems.join("; ") };
	return { ok: true, settings: { thresholds: given as unknown as Thresholds }, changes };
}

/**
 * Load the file at `path`. A missing file gives the defaults; an older one is migrated and
 * rewritten whole (atomically); an invalid or unreadable one is not touched. Never throws.
 */
export function loadSettings(path: string): SettingsLoad {
	let text: string;
	try {
		text = readFileSync(path, "utf8");
	} catch (err) {
		if (fsCode(err) === "ENOENT") return { state: "missing", path, settings: defaultSettings() };
		const reason = errorMessage(err);
		return { state: "invalid", path, settings: defaultSettings(), reason: `cannot read it: ${reason}` };
	}
	const parsed = parseSettingsText(text);
	if (!parsed.ok) return { state: "invalid", path, settings: defaultSettings(), reason: parsed.reason };
	if (parsed.changes.length === 0) return { state: "current", path, settings: parsed.settings };
	return {
		state: "migrated",
		path,
		settings: parsed.settings,
		changes: parsed.changes,
		rewrite: saveSettings(path, parsed.settings),
	};
}

/**
 * Apply an edit (`{ thresholds: { ...some keys } }`) to the whole current object and validate the
 * result with the registration validator. Pure: a refused edit returns every problem and changes nothing.
 */
export function applySettingsEdit(current: UserSettings, edit: unknown): SettingsCheck {
	if (!isObject(edit))
		return { ok: false, problems: [`a settings edit must be an object, got ${describeValue(edit)}`] };
	const problems: string[] = [];
	for (const key of Object.keys(edit)) {
		if (key === "thresholds") continue;
		const dropped = DROPPED_KEYS.get(key);
		problems.push(
			dropped !== undefined
				? `${key} is no longer a setting: ${dropped}`
				: `${key} is not a setting (the only key is "thresholds")`,
		);
	}
	const checked = validateThresholds(edit.thresholds, current.thresholds);
	if (!checked.ok) problems.push(...checked.problems);
	if (problems.length > 0 || !checked.ok) return { ok: false, problems };
	return { ok: true, settings: { thresholds: checked.thresholds } };
}

/** Write the whole settings object, atomically. The settings must have passed applySettingsEdit or the defaults. */
export function saveSettings(path: string, settings: UserSettings): { ok: true } | { ok: false; reason: string } {
	try {
		replaceTextFile(path, settingsText(settings));
		return { ok: true };
	} catch (err) {
		return { ok: false, reason: errorMessage(err) };
	}
}
