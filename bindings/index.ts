// pi-fold core bindings: one API for every host (Node, browsers, edge workers).
// Host-neutral: give it the .wasm bytes or a compiled WebAssembly.Module. The
// Node-only entry (node.ts) adds reading the shipped file.
import { type CoreExports, CoreInstance } from "./instance.ts";
import { type LatticeApi, latticeApi } from "./lattice.ts";
import { type SelectApi, selectApi } from "./select.ts";
import { type Sha256Api, sha256Api } from "./sha256.ts";
import { type TokensApi, tokensApi } from "./tokens.ts";

export { fromHex, fromHexInto, toHex } from "./hex.ts";
export type { Span } from "./instance.ts";
export * from "./lattice.ts";
export * from "./select.ts";
export { DIGEST_BYTES, type Sha256Api, type Sha256Stream } from "./sha256.ts";
export * from "./tokens.ts";

/** Self-check bits of assembly/index.ts, by name. */
const SELF_CHECKS = ["sha256", "tokens", "lattice", "select"] as const;

export interface SelfCheck {
	ok: boolean;
	/** Hot paths whose known-answer check failed inside the module. */
	failed: string[];
}

export type PiFoldCore = Sha256Api &
	TokensApi &
	LatticeApi &
	SelectApi & {
		/** Core ABI version, "major.minor.patch". */
		readonly version: string;
		/** Runs the known-answer checks compiled into the module. */
		selfCheck(): SelfCheck;
		/** The underlying instance, for advanced embedding (raw exports, memory). */
		readonly instance: CoreInstance;
	};

export type CoreSource = BufferSource | WebAssembly.Module;

function fromInstance(instance: WebAssembly.Instance): PiFoldCore {
	const core = new CoreInstance(instance.exports as unknown as CoreExports);
	const v = core.exports.coreVersion() >>> 0;
	return {
		...sha256Api(core),
		...tokensApi(core),
		...latticeApi(core),
		...selectApi(core),
		version: `${v >>> 16}.${(v >>> 8) & 0xff}.${v & 0xff}`,
		selfCheck() {
			const bits = core.exports.selfCheck() >>> 0;
			const failed = SELF_CHECKS.filter((_, i) => bits & (1 << i));
			return { ok: failed.length === 0, failed };
		},
		instance: core,
	};
}

/**
 * Load the core synchronously. Works everywhere for a compiled Module; for bytes, browsers
 * refuse synchronous compiles of modules over 8 MB on the main thread (ours is a few KB).
 */
export function loadCore(source: CoreSource): PiFoldCore {
	const mod = source instanceof WebAssembly.Module ? source : new WebAssembly.Module(source);
	return fromInstance(new WebAssembly.Instance(mod, {}));
}

/** Load the core asynchronously: bytes, a Module, or a fetch Response (streaming compile). */
export async function loadCoreAsync(source: CoreSource | Response | PromiseLike<Response>): Promise<PiFoldCore> {
	const resolved = await source;
	if (resolved instanceof WebAssembly.Module) return loadCore(resolved);
	if (typeof Response !== "undefined" && resolved instanceof Response) {
		const mod =
			typeof WebAssembly.compileStreaming === "function"
				? await WebAssembly.compileStreaming(resolved)
				: await WebAssembly.compile(await resolved.arrayBuffer());
		return loadCore(mod);
	}
	return loadCore(await WebAssembly.compile(resolved as BufferSource));
}
