// Version facts for status reports: pi-fold's own package version and the Pi host's.
import { readFileSync } from "node:fs";
import * as piHost from "@earendil-works/pi-coding-agent";

/** pi-fold's version from its package.json, or "unknown" if the file cannot be read. */
export function packageVersion(): string {
	try {
		// Read at run time (not imported): jiti and vitest both resolve this relative to the .ts file.
		const pkg: unknown = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8"));
		const version = (pkg as { version?: unknown }).version;
		return typeof version === "string" ? version : "unknown";
	} catch {
		return "unknown";
	}
}

/**
 * The Pi version this extension runs in. Pi maps `@earendil-works/pi-coding-agent` to the host's own
 * module for extensions, so its `VERSION` export is the running Pi's. A namespace read (rather than a
 * named import) keeps a host without that export loading: it reports undefined instead.
 */
export function hostPiVersion(): string | undefined {
	const version: unknown = (piHost as Record<string, unknown>).VERSION;
	return typeof version === "string" ? version : undefined;
}
