// Who decides when pi-fold commits: the band the person set (options or the settings file), or,
// with none set, the cost model. A reset or unrelated thresholds leave the cost model in charge.
import { afterAll, describe, expect, it } from "vitest";
import { removeTempDirs } from "../harness/pi-harness.ts";
import { parseOptions } from "../src/host/options.ts";
import { DEFAULT_THRESHOLDS } from "../src/policy/thresholds.ts";
import { LiveSettings } from "../src/settings/live-settings.ts";
import { settingsText } from "../src/settings/settings-file.ts";
import { freshPath, runtimeSettings, withDefaults, writeRaw } from "./helpers/settings-files.ts";

afterAll(removeTempDirs);

describe("who decides commits: the band the person set, or the cost model", () => {
	it("a band in the settings file other than the defaults fixes it; the defaults (or a reset) leave the cost model", () => {
		const path = freshPath();
		writeRaw(path, settingsText({ thresholds: withDefaults({ maxTarget: 0.6, minTarget: 0.3 }) }));
		const settings = runtimeSettings();
		const live = new LiveSettings(settings, path, false);
		expect(settings.bandFixed).toBe(true);
		expect(live.reset()).toMatchObject({ ok: true, live: true });
		expect(settings.bandFixed).toBe(false);
		expect(live.edit({ thresholds: { consolidateAfter: 6 } })).toMatchObject({ ok: true });
		expect(settings.bandFixed).toBe(false);
		expect(live.edit({ thresholds: { minTarget: 0.2 } })).toMatchObject({ ok: true });
		expect(settings.bandFixed).toBe(true);
	});

	it("options that name maxTarget or minTarget fix the band, whatever the values; other thresholds do not", () => {
		const fixed = (thresholds: unknown) => {
			const r = parseOptions({ thresholds });
			if (!r.ok) throw new Error(r.problems.join("; "));
			return r.settings.bandFixed;
		};
		expect(fixed({ maxTarget: DEFAULT_THRESHOLDS.maxTarget })).toBe(true);
		expect(fixed({ minTarget: 0.3 })).toBe(true);
		expect(fixed({ rawBatches: 5 })).toBe(false);
		expect(fixed(undefined)).toBe(false);
	});
});
