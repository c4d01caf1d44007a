// `pi-fold view --out view.html`: the whole view in one file, for a machine without the server or
// to keep: the page, the view, native compaction's curve, the core and every object and record the
// folds name, as found in the store (the page still verifies each one when it is opened).
import { readFileSync } from "node:fs";
import { CORE_WASM_URL } from "../../bindings/node.ts";
import type { EmbeddedBoot } from "./page/source.ts";
import { pageHtml } from "./page-html.ts";
import type { SessionView } from "./session-view.ts";
import { storeBytes } from "./store-bytes.ts";
import type { NativeAnswer } from "./view-data.ts";

const b64 = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");

export function viewFileHtml(view: SessionView, native: NativeAnswer): string {
	const objects: Record<string, string> = {};
	const records: Record<string, string> = {};
	for (const fold of view.data.folds) {
		if (fold.record && !(fold.record in records)) {
			const found = storeBytes(view.store, "record", fold.record);
			if ("bytes" in found) records[fold.record] = b64(found.bytes);
		}
		for (const c of fold.children) {
			if (c.type !== "leaf" || c.hash in objects) continue;
			const found = storeBytes(view.store, "object", c.hash);
			if ("bytes" in found) objects[c.hash] = b64(found.bytes);
		}
	}
	const boot: EmbeddedBoot = {
		mode: "file",
		view: view.data,
		native,
		wasm: b64(readFileSync(CORE_WASM_URL)),
		objects,
		records,
	};
	return pageHtml(boot);
}
