// Node side of the host tests; never served to a host. It says what every host must produce:
// the checks run in Node through dist/, and node:crypto digests of the same inputs computed here,
// independently of the core and of TextEncoder (Node encodes strings itself).
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { expect } from "vitest";
import type * as CoreApi from "../../bindings/index.ts";
import type { Span } from "../../bindings/index.ts";
import type * as NodeApi from "../../bindings/node.ts";
import {
	type CoreCheckResults,
	foldCases,
	interleavedStreams,
	runCoreChecks,
	sha256Cases,
	spanBatches,
	streamCases,
} from "./core-checks.js";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
export const HOSTS_DIR = fileURLToPath(new URL(".", import.meta.url));
export const DIST_DIR = join(ROOT, "dist", "bindings");
export const WASM_FILE = join(ROOT, "wasm", "pi-fold-core.wasm");

/** Fail early, naming the fix, when the build outputs the hosts load are missing. */
export function requireBuilt(): void {
	for (const file of [WASM_FILE, join(DIST_DIR, "index.js"), join(DIST_DIR, "node.js")]) {
		if (!existsSync(file)) throw new Error(`${file} is missing: run \`npm run build\` first (npm test does)`);
	}
}

/** The host-neutral dist modules, by file name: everything but the Node entry. */
export function hostNeutralDist(): string[] {
	return readdirSync(DIST_DIR).filter((f) => f.endsWith(".js") && f !== "node.js");
}

const sha = (...parts: Span[]) => {
	const h = createHash("sha256");
	for (const p of parts) h.update(p);
	return h.digest();
};

type CryptoSections = Pick<CoreCheckResults, "sha256" | "hashSpans" | "foldIdentity" | "stream">;

/** The sections of the checks that node:crypto can compute on its own. */
export function cryptoSections(): CryptoSections {
	const foldIdentity: Record<string, string> = {};
	for (const [name, spans] of foldCases()) {
		const id = sha(...spans.map((s) => sha(s))).toString("hex");
		foldIdentity[`${name}/array`] = id;
		foldIdentity[`${name}/packed`] = id;
	}
	const streams = [...streamCases(), ...interleavedStreams()];
	return {
		sha256: Object.fromEntries(sha256Cases().map(([name, input]) => [name, sha(input).toString("hex")])),
		hashSpans: Object.fromEntries(
			spanBatches().map(([name, spans]) => [name, spans.map((s) => sha(s).toString("hex"))]),
		),
		foldIdentity,
		stream: Object.fromEntries(streams.map(([name, pieces]) => [name, sha(...pieces).toString("hex")])),
	};
}

export interface Expected {
	/** The checks in Node through the host-neutral entry dist/index.js, on the pure Wasm path. */
	index: CoreCheckResults;
	/** The same through dist/node.js, which routes large spans to node:crypto. */
	node: CoreCheckResults;
	crypto: CryptoSections;
}

export async function expected(): Promise<Expected> {
	requireBuilt();
	const api: typeof CoreApi = await import(pathToFileURL(join(DIST_DIR, "index.js")).href);
	const nodeApi: typeof NodeApi = await import(pathToFileURL(join(DIST_DIR, "node.js")).href);
	return {
		index: runCoreChecks(api.loadCore(readFileSync(WASM_FILE))),
		node: runCoreChecks(nodeApi.loadCoreFile(WASM_FILE)),
		crypto: cryptoSections(),
	};
}

/** Assert a host's results equal node:crypto where it applies, and Node's run of the same checks throughout. */
export function expectSameAsNode(got: CoreCheckResults, want: Expected, host: string): void {
	const { sha256, hashSpans, foldIdentity, stream } = got;
	expect({ sha256, hashSpans, foldIdentity, stream }, `${host} vs node:crypto`).toEqual(want.crypto);
	expect(got, `${host} vs Node dist/index.js`).toEqual(want.index);
	expect(want.node, "Node dist/node.js vs Node dist/index.js").toEqual(want.index);
}

// The lattice and token APIs are part of the core every host gets: missing is a failure, not a skip.

/** Every "valid-*" lattice passes and every "invalid-*" one fails, the same in every host. */
export function expectLatticeVerdicts(got: CoreCheckResults): void {
	expect(got.lattice.missing, "validateLattice (bindings/lattice.ts) is missing").toBeUndefined();
	for (const [name, verdict] of Object.entries(got.lattice) as [string, { ok?: boolean; threw?: string }][]) {
		// Malformed input (columns of different lengths) is refused with an error rather than a verdict.
		const refused = name.startsWith("invalid-") && verdict.threw !== undefined;
		if (!refused)
			expect(verdict.ok, `validateLattice ${name}: ${JSON.stringify(verdict)}`).toBe(name.startsWith("valid-"));
	}
}

export function expectTokenEstimates(got: CoreCheckResults): void {
	expect(got.tokens.missing, "estimateTokens (bindings/tokens.ts) is missing").toBeUndefined();
	expect(got.tokensBatch.all, "estimateTokensBatch agrees with estimateTokens one by one").toEqual(
		Object.values(got.tokens),
	);
	for (const [name, n] of Object.entries(got.tokens)) {
		expect(Number.isFinite(n) && (n as number) >= 0, `estimateTokens ${name}: ${JSON.stringify(n)}`).toBe(true);
	}
	expect(
		got.tokens.long as number,
		"a 90 000-character text estimates to more tokens than 'hello world'",
	).toBeGreaterThan(got.tokens.hello as number);
}
