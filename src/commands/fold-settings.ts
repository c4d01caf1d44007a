// /fold-settings: show or edit the user's settings file. Headless-safe: everything is
// said through say.ts (the UI, or the terminal in print mode).
//   /fold-settings                              path, values in force and their source, the file's state
//   /fold-settings maxTarget=0.75 minTarget=0.35  one edit, validated whole, written atomically, put in force
//   /fold-settings reset                        write the defaults

import type { ExtensionAPI, ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { AutocompleteItem } from "@earendil-works/pi-tui";
import type { FoldHandle } from "../operations/view.ts";
import type { LiveSettings, ThresholdSource } from "../settings/live-settings.ts";
import type { SettingsLoad } from "../settings/settings-file.ts";
import { errorMessage, THRESHOLD_KEYS, type Thresholds } from "../vocabulary.ts";
import { say } from "./say.ts";

const FOLD_SETTINGS_COMMAND = "fold-settings";

interface FoldSettingsDeps {
	live: LiveSettings;
	/** Where a settings problem is also recorded, so the tool's status shows it. */
	runtime?: FoldHandle;
}

type Notify = (message: string, type?: "info" | "warning" | "error") => void;

const SOURCE_TEXT: Record<ThresholdSource, string> = {
	defaults: "the defaults",
	file: "the settings file",
	options: "registerPiFold options",
};

const USAGE = `usage: /fold-settings | /fold-settings ${THRESHOLD_KEYS.map((k) => `${k}=<value>`).join(" ")} (any of them) | /fold-settings reset`;

function formatThresholds(t: Readonly<Thresholds>): string {
	return THRESHOLD_KEYS.map((k) => `${k}=${t[k]}`).join(" ");
}

export type ParsedArgs =
	| { kind: "show" }
	| { kind: "reset" }
	| { kind: "edit"; edit: { thresholds: Record<string, unknown> } }
	| { kind: "refused"; problems: string[] };

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i;

/**
 * Parse the command's arguments. A value that is not a plain number stays a string, so the
 * validator names it ("must be a number, got ...") instead of it turning into NaN or 0 here.
 */
export function parseSettingsArgs(args: string): ParsedArgs {
	const words = args.trim().split(/\s+/).filter(Boolean);
	if (words.length === 0) return { kind: "show" };
	if (words.length === 1 && words[0] === "reset") return { kind: "reset" };
	const thresholds: Record<string, unknown> = {};
	const problems: string[] = [];
	for (const word of words) {
		const eq = word.indexOf("=");
		if (eq <= 0) {
			problems.push(`${JSON.stringify(word)} is not key=value`);
			continue;
		}
		const key = word.slice(0, eq);
		const raw = word.slice(eq + 1);
		if (Object.hasOwn(thresholds, key)) problems.push(`${key} is given twice`);
		thresholds[key] = NUMBER.test(raw) ? Number(raw) : raw;
	}
	if (problems.length > 0) return { kind: "refused", problems: [...problems, USAGE] };
	return { kind: "edit", edit: { thresholds } };
}

function fileState(load: SettingsLoad | undefined): string {
	if (!load) return "not read (registerPiFold options fix the thresholds)";
	switch (load.state) {
		case "missing":
			return "none yet (an edit creates it)";
		case "current":
			return `valid: ${formatThresholds(load.settings.thresholds)}`;
		case "migrated": {
			const written = load.rewrite.ok
				? "rewritten whole"
				: `NOT rewritten (${load.rewrite.reason}); the migrated values apply`;
			return `migrated from an older version (${load.changes.join("; ")}); ${written}`;
		}
		case "invalid":
			return `INVALID, left as it is, defaults apply: ${load.reason}`;
	}
}

/** The no-argument answer: where the file is, what is in force and why. */
function settingsReport(live: LiveSettings): string {
	const load = live.lastLoad;
	const lines = [
		`pi-fold settings file: ${live.path}`,
		`in force (from ${SOURCE_TEXT[live.source]}): ${formatThresholds(live.settings.thresholds)}`,
		`file: ${fileState(load)}`,
	];
	if (live.fixedByOptions) {
		lines.push("registerPiFold options fix the thresholds in this session; file edits are saved for other sessions");
	} else if (
		(load?.state === "current" || load?.state === "migrated") &&
		formatThresholds(load.settings.thresholds) !== formatThresholds(live.settings.thresholds)
	) {
		lines.push("the file changed since it was read; its values take effect at the next edit or the next start");
	}
	lines.push(USAGE);
	return lines.join("\n");
}

function confirmation(live: LiveSettings, thresholds: Thresholds, livePut: boolean, what: string): string {
	const saved = `${what} saved to ${live.path}: ${formatThresholds(thresholds)}`;
	return livePut
		? `${saved}; in force now`
		: `${saved}; registerPiFold options win for this session (in force: ${formatThresholds(live.settings.thresholds)})`;
}

/** Run one /fold-settings invocation; every answer goes to `notify`. Never throws. */
function runFoldSettings(args: string, live: LiveSettings, notify: Notify): void {
	const parsed = parseSettingsArgs(args);
	switch (parsed.kind) {
		case "show":
			live.load();
			notify(settingsReport(live), live.fileProblem ? "warning" : "info");
			return;
		case "refused":
			notify(`/fold-settings refused, nothing changed: ${parsed.problems.join("; ")}`, "error");
			return;
		case "reset":
		case "edit": {
			const out = parsed.kind === "reset" ? live.reset() : live.edit(parsed.edit);
			if (!out.ok) {
				notify(`/fold-settings refused, nothing changed: ${out.problems.join("; ")}`, "error");
				return;
			}
			notify(confirmation(live, out.settings.thresholds, out.live, parsed.kind === "reset" ? "defaults" : "settings"));
			return;
		}
	}
}

/** Completes the last word: a threshold key (`maxTarget=`), or `reset` as the only word. */
export function settingsCompletions(prefix: string): AutocompleteItem[] | null {
	const head = prefix.slice(0, prefix.length - (prefix.split(/\s+/).pop() ?? "").length);
	const last = prefix.slice(head.length);
	const options = [...THRESHOLD_KEYS.map((k) => `${k}=`), ...(head.trim() === "" ? ["reset"] : [])];
	const items = options.filter((o) => o.startsWith(last)).map((o) => ({ value: `${head}${o}`, label: o }));
	return items.length > 0 ? items : null;
}

export function registerFoldSettingsCommand(pi: ExtensionAPI, deps: FoldSettingsDeps): void {
	const { live } = deps;
	pi.registerCommand(FOLD_SETTINGS_COMMAND, {
		description: "Show or edit pi-fold's thresholds (~/.config/pi-fold/settings.json): key=value pairs, or reset",
		getArgumentCompletions: settingsCompletions,
		handler: async (args, ctx) => {
			const notify: Notify = (message, type) => say(ctx, message, type);
			try {
				runFoldSettings(args, live, notify);
			} catch (err) {
				// Nothing may escape into Pi's loop; the edit paths already return their failures.
				notify(`/fold-settings failed: ${errorMessage(err)}`, "error");
			}
		},
	});

	// A settings file problem found at registration is said once: to the user, and in status.
	let told = false;
	pi.on("session_start", (_e, ctx: ExtensionContext) => {
		if (told) return;
		const problem = registrationProblem(live);
		if (!problem) return;
		told = true;
		try {
			deps.runtime?.get()?.problem("settings", problem);
			ctx.ui.notify(`pi-fold: ${problem}. /fold-settings shows it.`, "warning");
		} catch {
			// A UI without notify, a runtime that did not load: the problem stays visible in /fold-settings.
		}
	});
}

/** What went wrong reading the file at registration, if anything. */
function registrationProblem(live: LiveSettings): string | undefined {
	const load = live.lastLoad;
	if (load?.state === "invalid")
		return `${load.path} is invalid and was left as it is; defaults apply (${load.reason})`;
	if (load?.state === "migrated" && !load.rewrite.ok) {
		return `${load.path} was migrated in memory but could not be rewritten (${load.rewrite.reason})`;
	}
	return undefined;
}
