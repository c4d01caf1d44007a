// Store bytes for the view, as found (the page verifies them itself), from inside the store only:
// a symlink among the store's own folders (objects/ab, records/, packs/ linked elsewhere) is never
// followed, as a symlinked object file never is, so nothing outside the store can be served.
import { lstatSync } from "node:fs";
import { join } from "node:path";
import type { FoldStore } from "../store/index.ts";
import { errorMessage } from "../vocabulary.ts";

export type StoreKind = "object" | "record";

export type FoundBytes = { bytes: Uint8Array; verified: boolean } | { problem: string; missing?: true };

/** Why a folder the read would pass through is not one of the store's own, or undefined. */
function linkedFolder(store: FoldStore, kind: StoreKind, hash: string): string | undefined {
	const own = join(store.root, `${kind}s`);
	for (const dir of [store.root, own, join(own, hash.slice(0, 2)), join(store.root, "packs")]) {
		try {
			const stat = lstatSync(dir);
			if (stat.isSymbolicLink()) return `${dir} is a symlink (a store's folders are never followed out of it)`;
			if (!stat.isDirectory()) return `${dir} is not a folder`;
		} catch (err) {
			const code = (err as { code?: string }).code;
			if (code === "ENOENT") continue;
			return `${dir}: cannot be looked at (${code ?? errorMessage(err)})`;
		}
	}
	return undefined;
}

/** The bytes the store holds for `hash`, as found, or why there are none to show. */
export function storeBytes(store: FoldStore, kind: StoreKind, hash: string): FoundBytes {
	const linked = linkedFolder(store, kind, hash);
	if (linked !== undefined) return { problem: `${kind} ${hash} is not read: ${linked}` };
	try {
		const found = (kind === "object" ? store.objects : store.records).readAsFound(hash);
		return found ?? { problem: `${kind} ${hash} is missing from ${store.root}`, missing: true };
	} catch (err) {
		return { problem: `${kind} ${hash} cannot be read: ${errorMessage(err)}` };
	}
}
