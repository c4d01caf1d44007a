// Where the page's data comes from: the local server that printed its URL (every path relative to
// the page's, which carries the access token), or the data embedded in a saved view.html. Either
// way the page gets the same things: the view, native compaction's curve, the core and objects by
// address, which it verifies itself.
import type { NativeAnswer, ViewData } from "../view-data.ts";

export type ObjectKind = "object" | "record";

export interface ViewSource {
	view(): Promise<ViewData>;
	native(): Promise<NativeAnswer>;
	/** An object's bytes as the store holds them (unverified), or undefined when it has none. */
	bytes(kind: ObjectKind, hash: string): Promise<Uint8Array | undefined>;
	wasm(): Promise<Response | Uint8Array>;
}

/** What a saved view.html carries: everything, base64 for bytes. */
export interface EmbeddedBoot {
	mode: "file";
	view: ViewData;
	native: NativeAnswer;
	wasm: string;
	objects: Record<string, string>;
	records: Record<string, string>;
}

export type Boot = { mode: "server" } | EmbeddedBoot;

function fromBase64(b64: string): Uint8Array {
	const bin = atob(b64);
	const out = new Uint8Array(bin.length);
	for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
	return out;
}

async function json<T>(path: string): Promise<T> {
	const res = await fetch(path, { cache: "no-store" });
	if (!res.ok) throw new Error(`${path}: the server answered ${res.status} ${await res.text()}`);
	return (await res.json()) as T;
}

export function serverSource(): ViewSource {
	return {
		view: () => json<ViewData>("./api/view"),
		native: () => json<NativeAnswer>("./api/native"),
		async bytes(kind, hash) {
			const res = await fetch(`./${kind}/${hash}`);
			if (res.status === 404) return undefined;
			if (!res.ok) throw new Error(`${kind} ${hash}: the server answered ${res.status}`);
			return new Uint8Array(await res.arrayBuffer());
		},
		wasm: () => fetch("./core.wasm"),
	};
}

export function embeddedSource(boot: EmbeddedBoot): ViewSource {
	return {
		view: async () => boot.view,
		native: async () => boot.native,
		async bytes(kind, hash) {
			const b64 = (kind === "object" ? boot.objects : boot.records)[hash];
			return b64 === undefined ? undefined : fromBase64(b64);
		},
		wasm: async () => fromBase64(boot.wasm),
	};
}
