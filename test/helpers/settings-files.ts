// Settings files for tests: a fresh config dir per test, raw writes, and the settings a runtime starts with.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { tempDir } from "../../harness/pi-harness.ts";
import { DEFAULT_THRESHOLDS } from "../../src/policy/thresholds.ts";
import { settingsPath } from "../../src/settings/settings-file.ts";
import type { RuntimeSettings, Thresholds } from "../../src/vocabulary.ts";

/** A fresh config dir and the settings path under it. */
export function freshPath(): string {
	return settingsPath({ env: { XDG_CONFIG_HOME: tempDir("xdg") } });
}

export function writeRaw(path: string, text: string): void {
	mkdirSync(dirname(path), { recursive: true });
	writeFileSync(path, text);
}

export const withDefaults = (t: Partial<Thresholds>): Thresholds => ({ ...DEFAULT_THRESHOLDS, ...t });
export const runtimeSettings = (): RuntimeSettings => ({
	thresholds: { ...DEFAULT_THRESHOLDS },
	blacklistAutoFoldTools: new Set(),
	bandFixed: false,
});
