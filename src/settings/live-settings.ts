// The thresholds one registration runs with, tied to the settings file. Precedence: explicit
// registerPiFold({ thresholds }) options win over the file, the file over the defaults. The
// runtime reads `settings.thresholds` on every decision, so an accepted edit takes effect by
// replacing that field on the very object the runtime holds (never a copy).
import { bandDiffers } from "../policy/thresholds.ts";
import type { RuntimeSettings, Thresholds } from "../vocabulary.ts";
import {
	applySettingsEdit,
	defaultSettings,
	loadSettings,
	type SettingsLoad,
	saveSettings,
	type UserSettings,
} from "./settings-file.ts";

/** Where the thresholds in force came from. */
export type ThresholdSource = "defaults" | "file" | "options";

type EditOutcome =
	| { ok: true; settings: UserSettings; live: boolean }
	| { ok: false; problems: string[]; settings?: undefined };

export class LiveSettings {
	readonly path: string;
	/** The object the runtime reads; only `thresholds` is ever replaced here. */
	readonly settings: RuntimeSettings;
	readonly fixedByOptions: boolean;
	#source: ThresholdSource;
	#lastLoad: SettingsLoad | undefined;

	/**
	 * Bind `settings` (already holding the options' or default thresholds) to the file at `path`.
	 * Unless the options fixed the thresholds, the file is loaded now (and migrated if older) and
	 * its values are put in force.
	 */
	constructor(settings: RuntimeSettings, path: string, fixedByOptions: boolean) {
		this.settings = settings;
		this.path = path;
		this.fixedByOptions = fixedByOptions;
		this.#source = fixedByOptions ? "options" : "defaults";
		if (!fixedByOptions) {
			const load = this.load();
			if (load.state === "current" || load.state === "migrated") this.#put(load.settings.thresholds);
		}
	}

	get source(): ThresholdSource {
		return this.#source;
	}

	/** The newest load of the file (undefined until one ran: options fixed the thresholds and nothing asked yet). */
	get lastLoad(): SettingsLoad | undefined {
		return this.#lastLoad;
	}

	/** Why the file is not used, when it is invalid. */
	get fileProblem(): string | undefined {
		return this.#lastLoad?.state === "invalid" ? this.#lastLoad.reason : undefined;
	}

	/** Read the file again (migrating an older one); the values in force do not change. */
	load(): SettingsLoad {
		this.#lastLoad = loadSettings(this.path);
		return this.#lastLoad;
	}

	/**
	 * Apply an edit to the file's current object: validate the whole result, write it atomically,
	 * then put it in force unless the options fixed the thresholds. A refused edit, an invalid file
	 * or a failed write changes nothing (neither the file nor the values in force).
	 */
	edit(edit: unknown): EditOutcome {
		const load = this.load();
		if (load.state === "invalid") {
			return {
				ok: false,
				problems: [
					`${this.path} is invalid and was left as it is (${load.reason}); fix it by hand or run /fold-settings reset`,
				],
			};
		}
		const next = applySettingsEdit(load.settings, edit);
		if (!next.ok) return next;
		return this.#write(next.settings);
	}

	/** Write the defaults (replacing whatever file is there, invalid or not) and put them in force. */
	reset(): EditOutcome {
		return this.#write(defaultSettings());
	}

	#write(settings: UserSettings): EditOutcome {
		const saved = saveSettings(this.path, settings);
		if (!saved.ok) return { ok: false, problems: [saved.reason] };
		this.#lastLoad = { state: "current", path: this.path, settings };
		if (this.fixedByOptions) return { ok: true, settings, live: false };
		this.#put(settings.thresholds);
		return { ok: true, settings, live: true };
	}

	#put(thresholds: Thresholds): void {
		this.settings.thresholds = { ...thresholds };
		this.settings.bandFixed = bandDiffers(thresholds);
		this.#source = "file";
	}
}
