// Every byte the page shows is checked here, in the browser, by the Wasm core: an object against
// the SHA-256 its address names, a fold against the identity its record states (SHA-256 over its
// children's hashes in order).
import { fromHexInto, type PiFoldCore, toHex } from "../../../bindings/index.ts";
import type { ChildRef } from "../view-data.ts";
import type { ObjectKind, ViewSource } from "./source.ts";

export type Verdict = { ok: true; bytes: Uint8Array } | { ok: false; bytes?: Uint8Array; why: string };

export async function fetchVerified(
	source: ViewSource,
	core: PiFoldCore,
	kind: ObjectKind,
	hash: string,
): Promise<Verdict> {
	let bytes: Uint8Array | undefined;
	try {
		bytes = await source.bytes(kind, hash);
	} catch (err) {
		return { ok: false, why: `could not be fetched: ${(err as Error).message}` };
	}
	if (bytes === undefined) return { ok: false, why: "is missing from the store" };
	const actual = toHex(core.sha256(bytes));
	return actual === hash
		? { ok: true, bytes }
		: { ok: false, bytes, why: `does not verify: its bytes hash to ${actual}` };
}

/** The identity a fold's children give (leaf hashes and child identities, in order). */
export function identityOf(core: PiFoldCore, children: readonly ChildRef[]): string {
	const packed = new Uint8Array(children.length * 32);
	children.forEach((c, i) => {
		fromHexInto(c.type === "leaf" ? c.hash : c.identity, packed, i * 32);
	});
	return toHex(core.foldIdentity(packed));
}
