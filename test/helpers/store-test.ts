// Shared by the store tests: fresh stores in one scratch dir, and refusal assertions.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect } from "vitest";
import { nodeCore } from "../../bindings/node.ts";
import { FoldStore, StoreError, type StoreErrorCode, type StoreLayout } from "../../src/store/index.ts";
import { snapshot } from "../fixtures/store-data.ts";

export const core = nodeCore();
export const scratch = mkdtempSync(join(tmpdir(), "pi-fold-store-test-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let stores = 0;
/**
 * A new session's store. The loose layout (one file per object, what stores were before packs)
 * unless told otherwise: the tests of files under their final names use it.
 */
export function freshStore(
	sessionId = "0198c5a2-7f3e-7c2d-9b1a-3e4f5a6b7c8d",
	layout: StoreLayout = "loose",
): {
	store: FoldStore;
	sessionFile: string;
} {
	const dir = join(scratch, `session-${stores++}`);
	const sessionFile = join(dir, `2025-01-01T00-00-00_${sessionId}.jsonl`);
	return { store: FoldStore.forSession({ sessionFile, sessionDir: dir, sessionId }, core, { layout }), sessionFile };
}

/** The error `fn` throws, asserted to be a StoreError with `code`. */
export function refusal(fn: () => unknown, code: StoreErrorCode): StoreError {
	try {
		fn();
	} catch (err) {
		expect(err).toBeInstanceOf(StoreError);
		expect((err as StoreError).code, (err as Error).message).toBe(code);
		return err as StoreError;
	}
	throw new Error(`expected a ${code} refusal, but the call succeeded`);
}

/** Asserts `fn` is refused with `code` and that nothing under `dir` changed. */
export function refusedUntouched(dir: string, fn: () => unknown, code: StoreErrorCode): StoreError {
	const before = snapshot(dir);
	const err = refusal(fn, code);
	expect(snapshot(dir)).toEqual(before);
	return err;
}
