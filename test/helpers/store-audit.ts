// What is on disk in a store's objects directory, and the crash-safety audit of it: every final
// name is an expected object that verifies, read-only, under its fan-out directory; everything
// else is a temp file headed for an expected object.
import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { expect } from "vitest";
import { type FoldStore, finalNameOfTemp, isHexHash, isTempName } from "../../src/store/index.ts";
import { sha256Hex } from "../fixtures/store-data.ts";

/** Every name under the objects fan-out dirs, split into final names and the rest. */
export function storeNames(store: FoldStore): { finals: string[]; temps: string[]; fans: string[] } {
	const finals: string[] = [];
	const temps: string[] = [];
	let fans: string[] = [];
	try {
		fans = readdirSync(store.objects.dir);
	} catch {
		return { finals, temps, fans };
	}
	for (const fan of fans) {
		for (const name of readdirSync(join(store.objects.dir, fan))) (isHexHash(name) ? finals : temps).push(name);
	}
	return { finals, temps, fans };
}

export function auditStore(store: FoldStore, expected: ReadonlySet<string>): { finals: string[]; temps: string[] } {
	const { finals, temps, fans } = storeNames(store);
	for (const fan of fans) expect(fan).toMatch(/^[0-9a-f]{2}$/);
	for (const name of finals) {
		expect(expected.has(name), `unexpected final ${name}`).toBe(true);
		expect(sha256Hex(store.objects.read(name))).toBe(name); // read() verifies too
		expect(lstatSync(store.objects.pathOf(name)).mode & 0o777).toBe(0o444);
	}
	for (const name of temps) {
		expect(isTempName(name), `stray file ${name}`).toBe(true);
		expect(expected.has(finalNameOfTemp(name) ?? ""), `temp ${name} for an unknown object`).toBe(true);
	}
	return { finals, temps };
}
