// Damage for the tests that must see it: a stored object or record with one byte flipped in every
// copy the store holds, so no copy verifies.
import { readFileSync, writeFileSync } from "node:fs";
import { expect } from "vitest";
import { nodeCore } from "../../bindings/node.ts";
import { FoldStore } from "../../src/store/index.ts";

/** Flip one byte of every stored copy of a leaf object or a record (pack entries): it no longer verifies. */
export function damageStored(file: string, sessionId: string, kind: "object" | "record", hash: string): void {
	const store = FoldStore.forSession({ sessionFile: file, sessionId }, nodeCore());
	const copies = store.packs?.copies(kind, hash) ?? [];
	expect(copies.length).toBeGreaterThan(0);
	for (const c of copies) {
		const bytes = readFileSync(c.pack.path);
		bytes[c.offset + 5] ^= 0x20;
		writeFileSync(c.pack.path, bytes);
	}
}
