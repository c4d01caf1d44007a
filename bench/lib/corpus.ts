// Deterministic benchmark inputs from real text shipped in node_modules (pinned by the
// lockfile): code, Markdown docs and JSON, cut into spans with a seeded generator.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { rng } from "../../harness/reference/gen.ts";

const ROOT = new URL("../../node_modules/", import.meta.url).pathname;

function walk(dir: string, exts: string[], out: string[], limit: number): void {
	for (const name of readdirSync(dir).sort()) {
		if (out.length >= limit) return;
		const p = join(dir, name);
		const st = statSync(p);
		if (st.isDirectory()) walk(p, exts, out, limit);
		else if (exts.some((e) => name.endsWith(e)) && st.size > 4096) out.push(p);
	}
}

let text: string | undefined;

/** About 3 MB of mixed real text: Pi's JS, its docs and package manifests. */
function realText(): string {
	if (text) return text;
	const files: string[] = [];
	walk(join(ROOT, "@earendil-works/pi-coding-agent/dist/core"), [".js"], files, 60);
	walk(join(ROOT, "@earendil-works/pi-coding-agent/docs"), [".md"], files, 90);
	walk(join(ROOT, "typescript/lib"), [".json"], files, 100);
	text = files.map((f) => readFileSync(f, "utf8")).join("\n");
	return text;
}

/**
 * `count` strings of `min`..`max` UTF-16 units cut from the real text at seeded positions.
 * Each goes through JSON, as transcript text does when Pi reads a session line: a slice would
 * share the whole corpus's two-byte representation, which no real session string has.
 */
export function mixedStrings(count: number, min: number, max: number, seed = 1): string[] {
	const src = realText();
	const r = rng(seed).next;
	return Array.from({ length: count }, () => {
		const len = min + Math.floor(r() * (max - min + 1));
		const at = Math.floor(r() * (src.length - len));
		return JSON.parse(JSON.stringify(src.slice(at, at + len))) as string;
	});
}
