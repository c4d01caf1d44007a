// The shared real Pi session fixture (2.4 MB, legacy v1, MIT, from Pi's own tests). It lives in
// the workplace's shared/ folder beside the clone. Without it, tests that need it skip, saying so;
// in CI (CI=true) they run and fail instead, so a lost fixture cannot pass as green.
import { copyFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const FIXTURE_SESSION = fileURLToPath(
	new URL("../../shared/fixtures/sessions/pi-mono-before-compaction.jsonl", import.meta.url),
);

export const hasFixture = existsSync(FIXTURE_SESSION);

const NEEDS =
	"../shared/fixtures/sessions/pi-mono-before-compaction.jsonl beside the clone (the real Pi session fixture)";

export const FIXTURE_MISSING = `skipped: needs ${NEEDS}`;

/** Whether the fixture's tests skip: only outside CI, and only when the fixture is missing. */
export function skipsWithoutFixture(present: boolean, ci: string | undefined): boolean {
	return !present && ci !== "true" && ci !== "1";
}

/** `describe.skipIf(skipFixture)` for the tests that read the fixture. */
export const skipFixture = skipsWithoutFixture(hasFixture, process.env.CI);

/** The fixture's path; a missing fixture is named (in CI, where its tests do not skip). */
export function fixtureSession(): string {
	if (!existsSync(FIXTURE_SESSION)) throw new Error(`the fixture is missing: ${NEEDS}`);
	return FIXTURE_SESSION;
}

/** A private copy: Pi migrates the legacy file on open and rewrites it in place. */
export function copyFixture(dir: string): string {
	const file = join(dir, "session.jsonl");
	copyFileSync(fixtureSession(), file);
	return file;
}
