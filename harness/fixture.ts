// The shared real Pi session fixture (2.4 MB, legacy v1, MIT, from Pi's own tests). It lives in
// the workplace's shared/ folder beside the clone; tests that need it skip, saying so, without it.
import { copyFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const FIXTURE_SESSION = fileURLToPath(
	new URL("../../shared/fixtures/sessions/pi-mono-before-compaction.jsonl", import.meta.url),
);

export const hasFixture = existsSync(FIXTURE_SESSION);

export const FIXTURE_MISSING =
	"skipped: needs ../shared/fixtures/sessions/pi-mono-before-compaction.jsonl beside the clone (the real Pi session fixture)";

/** A private copy: Pi migrates the legacy file on open and rewrites it in place. */
export function copyFixture(dir: string): string {
	const file = join(dir, "session.jsonl");
	copyFileSync(FIXTURE_SESSION, file);
	return file;
}
