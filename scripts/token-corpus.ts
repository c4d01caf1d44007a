// The token-estimation corpus: real text from node_modules (pinned by package-lock.json,
// so every clean clone after `npm ci` builds the same corpus), cut into ~2 KB chunks and
// split train / held-out by a stable hash. Nothing is cached on disk.
//
// Categories:
//  - code: .js/.mjs/.cjs/.ts/.d.ts sources from a dozen packages (minified bundles skipped:
//    a transcript mostly shows source files, and one minified line is not a "chunk of code")
//  - json: package.json manifests, JSON data and schema files, plus synthesized Pi session
//    JSONL (tool calls and results carrying real file text, escaped as Pi persists it)
//  - prose: README.md and docs/*.md files (English; Markdown with its code blocks)
//  - non-ascii: localized text found in node_modules: Biome's translated READMEs (Hindi,
//    Russian, Ukrainian, Japanese, Korean, Chinese, Polish, French, Spanish, Portuguese),
//    the message strings of TypeBox's 33 non-English error locales (Arabic to Yoruba),
//    protobufjs' UTF-8 sample text (Greek, Thai, runes, Braille, box drawing), the Cyrillic
//    keyword lists of highlight.js' 1C and ISBL grammars, marked-cjk-friendly's README (CJK)
//    and the emoji in fast-check's README. Only chunks with at least 2% non-ASCII bytes stay.
// Platform-specific packages (…-linux-x64, …-darwin-arm64) are skipped: the corpus must not
// depend on the machine that ran npm ci.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { rng } from "../harness/reference/gen.ts";

export type TokenCategory = "code" | "json" | "prose" | "non-ascii";
export type TokenSplit = "train" | "heldout";

export interface CorpusChunk {
	category: TokenCategory;
	split: TokenSplit;
	text: string;
	/** Where it came from: a path under node_modules (or synth:...) and the chunk index. */
	source: string;
}

/** Chunk size target in UTF-8 bytes. */
export const CHUNK_BYTES = 2048;
/** One chunk in HELDOUT_EVERY is held out (by hash, not by position). */
export const HELDOUT_EVERY = 4;

const MAX_FILE_BYTES = 24 * 1024; // a prefix of each file: many files beat a few big ones
const utf8 = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** FNV-1a 32 over the UTF-16 units of `s`: stable, dependency-free. */
export function fnv1a(s: string): number {
	let h = 0x811c9dc5;
	for (let i = 0; i < s.length; i++) {
		h ^= s.charCodeAt(i);
		h = Math.imul(h, 0x01000193) >>> 0;
	}
	return h >>> 0;
}

export function splitOf(source: string, index: number): TokenSplit {
	return fnv1a(`${source}#${index}`) % HELDOUT_EVERY === 0 ? "heldout" : "train";
}

/** Cut UTF-8 bytes into ~CHUNK_BYTES pieces, preferring a line end in the second half of the window. */
export function chunkBytes(bytes: Uint8Array, size = CHUNK_BYTES): Uint8Array[] {
	const out: Uint8Array[] = [];
	let start = 0;
	while (bytes.length - start > size + size / 4) {
		let end = start + size;
		let nl = end;
		while (nl > start + size / 2 && bytes[nl - 1] !== 0x0a) nl--;
		if (nl > start + size / 2) end = nl;
		else while ((bytes[end] & 0xc0) === 0x80) end--; // never split a character
		out.push(bytes.subarray(start, end));
		start = end;
	}
	if (bytes.length - start >= 256) out.push(bytes.subarray(start));
	else if (out.length > 0) out[out.length - 1] = bytes.subarray(start - out[out.length - 1].length);
	return out;
}

function walk(dir: string, keep: (path: string) => boolean, acc: string[] = []): string[] {
	let entries: import("node:fs").Dirent[];
	try {
		entries = readdirSync(dir, { withFileTypes: true });
	} catch {
		return acc;
	}
	entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
	for (const e of entries) {
		const p = join(dir, e.name);
		if (e.isDirectory()) {
			if (e.name !== "node_modules" && e.name !== "test" && e.name !== "tests" && e.name !== "__tests__")
				walk(p, keep, acc);
		} else if (e.isFile() && keep(p)) acc.push(p);
	}
	return acc;
}

function readText(path: string): Uint8Array | undefined {
	let bytes: Uint8Array;
	try {
		if (statSync(path).size < 64) return undefined;
		bytes = readFileSync(path);
	} catch {
		return undefined;
	}
	try {
		utf8.decode(bytes);
	} catch {
		return undefined; // not UTF-8
	}
	return bytes;
}

/** Minified or generated one-liners: a very long line, or lines averaging over 200 bytes. */
function looksMinified(bytes: Uint8Array): boolean {
	let lines = 1;
	let run = 0;
	for (let i = 0; i < bytes.length; i++) {
		if (bytes[i] === 0x0a) {
			lines++;
			run = 0;
		} else if (++run > 1000) return true;
	}
	return bytes.length / lines > 200;
}

/** Cut a prefix of at most `max` bytes at a line end (or a character boundary). */
function prefix(bytes: Uint8Array, max: number): Uint8Array {
	if (bytes.length <= max) return bytes;
	let end = max;
	while (end > max / 2 && bytes[end - 1] !== 0x0a) end--;
	if (end <= max / 2) for (end = max; (bytes[end] & 0xc0) === 0x80; ) end--;
	return bytes.subarray(0, end);
}

interface Source {
	/** Directory or file under node_modules. */
	path: string;
	keep: (path: string) => boolean;
	/** Byte budget for this source; files are taken in hash order so the budget spreads. */
	budget: number;
	/** Optional: keep only part of a file's text (e.g. the localized strings of a locale module). */
	extract?: (text: string) => string;
}

const CODE_EXT = /\.(js|mjs|cjs|ts|mts|cts)$/;
const isCode = (p: string) => CODE_EXT.test(p) && !/\.min\.js$/.test(p);
const isMd = (p: string) => /\.md$/i.test(p);
const isJson = (p: string) => /\.json$/.test(p);

const CODE: Source[] = [
	{ path: "@earendil-works/pi-coding-agent/dist", keep: isCode, budget: 320_000 },
	{ path: "@earendil-works/pi-coding-agent/examples", keep: isCode, budget: 200_000 },
	{ path: "@earendil-works/pi-ai/dist", keep: isCode, budget: 200_000 },
	{ path: "@earendil-works/pi-agent-core/dist", keep: isCode, budget: 120_000 },
	{ path: "@earendil-works/pi-tui/dist", keep: isCode, budget: 160_000 },
	{ path: "typebox/build", keep: (p) => isCode(p) && !p.includes("/locale/"), budget: 160_000 },
	{ path: "assemblyscript/std/assembly", keep: isCode, budget: 200_000 },
	{ path: "vitest/dist", keep: isCode, budget: 160_000 },
	{ path: "undici/lib", keep: isCode, budget: 200_000 },
	{ path: "yaml/dist", keep: isCode, budget: 120_000 },
	{ path: "@types/node", keep: isCode, budget: 200_000 },
	{ path: "msgpackr", keep: (p) => isCode(p) && !p.includes("/dist/"), budget: 100_000 },
	{ path: "protobufjs/src", keep: isCode, budget: 100_000 },
	{ path: "semver", keep: isCode, budget: 60_000 },
	{ path: "ws/lib", keep: isCode, budget: 80_000 },
	{ path: "highlight.js/lib/languages", keep: (p) => isCode(p) && !/\/(1c|isbl)\.js$/.test(p), budget: 100_000 },
];

const JSON_SOURCES: Source[] = [
	{ path: ".", keep: (p) => p.endsWith("/package.json"), budget: 600_000 },
	{ path: "@earendil-works/pi-ai/dist/providers/data", keep: isJson, budget: 200_000 },
	{ path: "@earendil-works/pi-coding-agent/schemas", keep: isJson, budget: 100_000 },
	{ path: "@biomejs/biome/configuration_schema.json", keep: isJson, budget: 60_000 },
	{ path: "protobufjs/google", keep: isJson, budget: 60_000 },
	{ path: "playwright-core/lib/tools/cli-client/help.json", keep: isJson, budget: 40_000 },
	{ path: "@anthropic-ai/sdk/bin/migration-config.json", keep: isJson, budget: 24_000 },
	{ path: "@earendil-works/pi-coding-agent/examples/tsconfig.json", keep: isJson, budget: 8_000 },
	{ path: "undici/docs/docs", keep: isJson, budget: 12_000 },
];

const LOCALIZED_README = /README\.[a-z]{2}(-[A-Za-z]{2})?\.md$/;
const PROSE: Source[] = [
	{ path: "@earendil-works/pi-coding-agent/docs", keep: isMd, budget: 400_000 },
	{ path: "@earendil-works/pi-coding-agent/README.md", keep: isMd, budget: 40_000 },
	{ path: "@earendil-works/pi-coding-agent/CHANGELOG.md", keep: isMd, budget: 24_000 },
	{ path: "@earendil-works/pi-coding-agent/examples", keep: isMd, budget: 60_000 },
	{ path: "undici/docs", keep: isMd, budget: 200_000 },
	{ path: ".", keep: (p) => /\/readme\.md$/i.test(p) && !p.includes("/docs/"), budget: 900_000 },
	{ path: "assemblyscript/std", keep: isMd, budget: 20_000 },
];

const NON_ASCII: Source[] = [
	{ path: "@biomejs/biome", keep: (p) => LOCALIZED_README.test(p), budget: 200_000 },
	{
		path: "typebox/build/system/locale",
		keep: (p) => /\/[a-z]{2,3}_[A-Za-z0-9]+\.mjs$/.test(p) && !p.endsWith("/en_US.mjs"),
		budget: 200_000,
		extract: localizedStrings,
	},
	{ path: "@protobufjs/utf8/tests/data/utf8.txt", keep: () => true, budget: 20_000 },
	{ path: "highlight.js/lib/languages/1c.js", keep: () => true, budget: 24_000 },
	{ path: "highlight.js/lib/languages/isbl.js", keep: () => true, budget: 24_000 },
	{ path: "marked-cjk-friendly/README.md", keep: () => true, budget: 24_000 },
	{ path: "fast-check/README.md", keep: () => true, budget: 48_000 },
];

/** A platform-specific optional dependency: its package differs from machine to machine. */
const PLATFORM_PACKAGE = /^(@[^/]+\/)?[^/]*(linux|darwin|win32|windows|freebsd|openbsd|android|sunos|aix)[^/]*\//;

/** Minimum share of non-ASCII bytes for a chunk to count as non-ASCII text (accented Latin is ~2-4%). */
const NON_ASCII_MIN = 0.02;

/** The messages of a TypeBox locale module (`return '...'` / `return \`...\``), one per line. */
function localizedStrings(text: string): string {
	const out: string[] = [];
	for (const m of text.matchAll(/return\s+(['`])((?:\\.|(?!\1)[^\\])*)\1/g)) out.push(m[2]);
	return out.join("\n");
}

function nonAsciiShare(bytes: Uint8Array): number {
	let n = 0;
	for (let i = 0; i < bytes.length; i++) if (bytes[i] >= 0x80) n++;
	return bytes.length === 0 ? 0 : n / bytes.length;
}

function collect(nm: string, sources: Source[], category: TokenCategory, out: CorpusChunk[], seen: Set<string>): void {
	for (const src of sources) {
		const root = join(nm, src.path);
		let files: string[];
		try {
			files = statSync(root).isDirectory() ? walk(root, src.keep) : [root];
		} catch {
			continue; // a package that moved in a later version: the corpus just shrinks
		}
		// Hash order, so a budget samples the whole package rather than its first folder.
		const ordered = files
			.map((f) => relative(nm, f).split("\\").join("/"))
			.sort((a, b) => fnv1a(a) - fnv1a(b) || (a < b ? -1 : 1));
		let left = src.budget;
		for (const rel of ordered) {
			if (left <= 0) break;
			if (seen.has(rel) || PLATFORM_PACKAGE.test(rel)) continue;
			let bytes = readText(join(nm, rel));
			if (!bytes) continue;
			if (src.extract) bytes = encoder.encode(src.extract(utf8.decode(bytes)));
			if (category === "code" && looksMinified(bytes)) continue;
			seen.add(rel);
			const body = prefix(bytes, Math.min(MAX_FILE_BYTES, Math.max(left, 256)));
			left -= body.length;
			addChunks(rel, body, category, out);
		}
	}
}

function addChunks(source: string, body: Uint8Array, category: TokenCategory, out: CorpusChunk[]): void {
	chunkBytes(body).forEach((chunk, index) => {
		if (category === "non-ascii" && nonAsciiShare(chunk) < NON_ASCII_MIN) return;
		out.push({ category, split: splitOf(source, index), text: utf8.decode(chunk), source: `${source}#${index}` });
	});
}

/**
 * The corpus, in a fixed order. `nodeModules` defaults to the repo's node_modules.
 * Synthesized session JSON draws its text from the code and prose files already read.
 */
export function buildTokenCorpus(nodeModules?: string): CorpusChunk[] {
	const nm = nodeModules ?? fileURLToPath(new URL("../node_modules", import.meta.url));
	const out: CorpusChunk[] = [];
	const seen = new Set<string>();
	collect(nm, CODE, "code", out, seen);
	collect(nm, JSON_SOURCES, "json", out, seen);
	collect(nm, NON_ASCII, "non-ascii", out, seen); // before prose: it claims two READMEs
	collect(nm, PROSE, "prose", out, seen);
	const code = out.filter((c) => c.category === "code").map((c) => c.text);
	const prose = out.filter((c) => c.category === "prose").map((c) => c.text);
	synthSessions(code, prose).forEach((jsonl, i) => {
		addChunks(`synth:session-${i}.jsonl`, encoder.encode(jsonl), "json", out);
	});
	return out;
}

// ---------------------------------------------------------------- synthesized sessions

const hex8 = (r: () => number) =>
	Math.floor(r() * 0x1_0000_0000)
		.toString(16)
		.padStart(8, "0");

/** Pi session JSONL (docs/session-format.md): assistant tool calls and their results carry real text. */
function synthSessions(code: string[], prose: string[]): string[] {
	const sessions: string[] = [];
	const r = rng(0x5eed).next;
	const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
	const lines = (s: string, n: number) => {
		const all = s.split("\n");
		const at = Math.floor(r() * Math.max(1, all.length - n));
		return all.slice(at, at + n).join("\n");
	};
	for (let s = 0; s < 24; s++) {
		let t = Date.UTC(2026, 0, 5 + s, 9, 0, 0);
		let parent: string | null = null;
		const rows: string[] = [];
		const entry = (body: Record<string, unknown>) => {
			const id = hex8(r);
			t += 1000 + Math.floor(r() * 20_000);
			rows.push(JSON.stringify({ ...body, id, parentId: parent, timestamp: new Date(t).toISOString() }));
			parent = id;
		};
		entry({ type: "message", message: { role: "user", content: lines(pick(prose), 3), timestamp: t } });
		for (let turn = 0; turn < 8; turn++) {
			const callId = `call_${hex8(r)}${hex8(r)}`;
			const kind = Math.floor(r() * 4);
			const file = `src/${pick(["runtime", "store", "tool", "ui"])}/${hex8(r).slice(0, 5)}.ts`;
			const source = pick(code);
			const args =
				kind === 0
					? { path: file, offset: Math.floor(r() * 200), limit: 120 }
					: kind === 1
						? { command: `grep -rn "${lines(source, 1).trim().slice(0, 24)}" src test | head -40` }
						: kind === 2
							? { path: file, oldText: lines(source, 4), newText: lines(source, 5) }
							: { command: "npm test -- --reporter=dot", timeout: 120 };
			const name = ["read", "bash", "edit", "bash"][kind];
			entry({
				type: "message",
				message: {
					role: "assistant",
					content: [
						{ type: "text", text: lines(pick(prose), 2) },
						{ type: "toolCall", id: callId, name, arguments: args },
					],
					api: "anthropic-messages",
					provider: "anthropic",
					model: "claude-sonnet-4-5",
					usage: {
						input: Math.floor(r() * 4000),
						output: Math.floor(r() * 900),
						cacheRead: Math.floor(r() * 90_000),
						cacheWrite: Math.floor(r() * 3000),
						totalTokens: Math.floor(r() * 100_000),
						cost: { input: r() * 0.01, output: r() * 0.02, cacheRead: r() * 0.03, cacheWrite: 0, total: r() * 0.06 },
					},
					stopReason: "toolUse",
					timestamp: t,
				},
			});
			const result = kind === 2 ? `Successfully replaced text in ${file}.` : lines(source, 10 + Math.floor(r() * 40));
			entry({
				type: "message",
				message: {
					role: "toolResult",
					toolCallId: callId,
					toolName: name,
					content: [{ type: "text", text: result }],
					isError: r() < 0.1,
					timestamp: t,
				},
			});
		}
		sessions.push(`${rows.join("\n")}\n`);
	}
	return sessions;
}

// ---------------------------------------------------------------- evaluation helpers

/** Median of a list (the upper middle for even counts); NaN when empty. */
export function median(values: readonly number[]): number {
	if (values.length === 0) return Number.NaN;
	const s = [...values].sort((a, b) => a - b);
	return s[Math.floor(s.length / 2)];
}

export type Script = "cjk" | "cyrillic" | "latin" | "symbols" | "other";

/** The dominant script among the non-ASCII characters of `text` (for reporting non-ASCII figures). */
export function scriptOf(text: string): Script {
	const n: Record<Script, number> = { cjk: 0, cyrillic: 0, latin: 0, symbols: 0, other: 0 };
	for (const ch of text) {
		const cp = ch.codePointAt(0)!;
		if (cp < 0x80) continue;
		if ((cp >= 0x2e80 && cp <= 0x9fff) || (cp >= 0xac00 && cp <= 0xd7af) || (cp >= 0xff00 && cp <= 0xffef)) n.cjk++;
		else if (cp >= 0x400 && cp <= 0x52f) n.cyrillic++;
		else if ((cp >= 0xc0 && cp <= 0x24f) || (cp >= 0x1e00 && cp <= 0x1eff)) n.latin++;
		else if ((cp >= 0x2000 && cp <= 0x2bff) || cp >= 0x1f000 || (cp >= 0x80 && cp < 0xc0)) n.symbols++;
		else n.other++;
	}
	let best: Script = "other";
	for (const k of Object.keys(n) as Script[]) if (n[k] > n[best]) best = k;
	return best;
}

/** Print a summary when run directly: node scripts/token-corpus.ts */
if (import.meta.url === `file://${process.argv[1]}`) {
	const corpus = buildTokenCorpus();
	const rows = new Map<string, { chunks: number; bytes: number; heldout: number }>();
	for (const c of corpus) {
		const row = rows.get(c.category) ?? { chunks: 0, bytes: 0, heldout: 0 };
		row.chunks++;
		row.bytes += encoder.encode(c.text).length;
		if (c.split === "heldout") row.heldout++;
		rows.set(c.category, row);
	}
	for (const [category, row] of rows) {
		console.log(
			`${category.padEnd(10)} ${String(row.chunks).padStart(5)} chunks (${row.heldout} held out), ${row.bytes} bytes`,
		);
	}
}
