// Types for core-checks.js, which stays plain JS so browsers and workerd load it as it is.
import type { PiFoldCore, Span } from "../../bindings/index.ts";

export type Cases<T> = [name: string, input: T][];

export function xorshift32(seed: number): () => number;
export function xorshiftBytes(n: number, seed: number): Uint8Array;
export function sha256Cases(): Cases<Span>;
export function spanBatches(): Cases<Span[]>;
export function foldCases(): Cases<Span[]>;
export function streamCases(): Cases<Span[]>;
export function interleavedStreams(): Cases<Span[]>;
export interface LatticeInput {
	start: number[];
	end: number[];
	parent: number[];
	depth: number[];
	leafCount: number;
}
export function latticeCases(): Cases<LatticeInput>;
export function tokenSpans(): Cases<Span>;
export function digestList(packed: Uint8Array): string[];

/** An optional API's results by case, or a note that the core lacks it. */
export type OptionalSection = Record<string, unknown> & { missing?: string };

export interface CoreCheckResults {
	version: string;
	selfCheck: { ok: boolean; failed: string[] };
	sha256: Record<string, string>;
	hashSpans: Record<string, string[]>;
	foldIdentity: Record<string, string>;
	stream: Record<string, string>;
	errors: Record<string, unknown>;
	lattice: OptionalSection;
	tokens: OptionalSection;
	/** estimateTokensBatch over all of tokenSpans(), as the case "all". */
	tokensBatch: OptionalSection;
}

export function runCoreChecks(core: PiFoldCore): CoreCheckResults;
