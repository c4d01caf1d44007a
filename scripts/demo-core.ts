// npm run demo:core — the core on a real Pi session file: every entry's persisted JSON line is
// hashed (its leaf identity) and token-estimated in one batch each, tool batches get fold
// identities, and everything is checked against node:crypto. Input: a path argument, else
// the shared real session fixture, else a short session recorded here and now by Pi itself
// (offline, scripted model, real tools over real files; `npm run demo:core -- --record` forces that).
// (`npm run demo` is the session comparison: scripts/demo.ts.)
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { DIGEST_BYTES, nodeCore, toHex } from "../bindings/node.ts";
import { removeTempDirs } from "../harness/pi-harness.ts";
import { recordDemoSession } from "./demo-session.ts";

const FIXTURE = fileURLToPath(
	new URL("../../shared/fixtures/sessions/pi-mono-before-compaction.jsonl", import.meta.url),
);

async function pickSession(): Promise<{ file: string; origin: string }> {
	const arg = process.argv[2];
	if (arg && arg !== "--record") {
		if (!existsSync(arg)) {
			console.error(`pi-fold demo:core: no such session file: ${arg}`);
			process.exit(2);
		}
		return { file: arg, origin: "given on the command line" };
	}
	if (arg !== "--record" && existsSync(FIXTURE))
		return { file: FIXTURE, origin: "the shared real Pi session fixture (MIT, from Pi's tests)" };
	return {
		file: await recordDemoSession(),
		origin: "recorded just now by Pi 1.6 offline (scripted model, real tools)",
	};
}

interface Entry {
	type: string;
	message?: { role?: string; content?: unknown; toolCallId?: string };
}

const { file, origin } = await pickSession();
const lines = readFileSync(file, "utf8")
	.split("\n")
	.filter((l) => l.length > 0);
const entries = lines.map((l, i) => {
	try {
		return JSON.parse(l) as Entry;
	} catch {
		throw new Error(`${file}:${i + 1} is not a JSON line`);
	}
});
removeTempDirs(); // a recorded session's temp dirs; the lines are in memory now
const core = nodeCore();
const t0 = performance.now();
const leaves = core.hashSpans(lines);
const t1 = performance.now();
const tokens = core.estimateTokensBatch(lines);
const t2 = performance.now();

// Leaf identities must equal node:crypto's SHA-256 of the same persisted bytes.
let mismatches = 0;
for (let i = 0; i < lines.length; i++) {
	if (createHash("sha256").update(lines[i]).digest("hex") !== toHex(leaves, i * 32, i * 32 + 32)) mismatches++;
}

// Complete tool batches: an assistant entry with tool calls followed by all of their results.
const batches: { first: number; last: number }[] = [];
for (let i = 0; i < entries.length; i++) {
	const m = entries[i].message;
	if (m?.role !== "assistant" || !Array.isArray(m.content)) continue;
	const calls = new Set(
		(m.content as { type?: string; id?: string }[]).filter((b) => b.type === "toolCall").map((b) => b.id),
	);
	let j = i + 1;
	while (calls.size > 0 && j < entries.length && entries[j].message?.role === "toolResult") {
		calls.delete(entries[j].message?.toolCallId);
		j++;
	}
	if (j > i + 1 && calls.size === 0) batches.push({ first: i, last: j - 1 });
}
const t3 = performance.now();
const identities = batches.map((b) => core.foldIdentity(leaves.subarray(b.first * 32, (b.last + 1) * 32)));
const t4 = performance.now();
const session = core.foldIdentity(leaves);

const bytes = lines.reduce((n, l) => n + Buffer.byteLength(l), 0);
const estimated = tokens.reduce((a, b) => a + b, 0);
const quarter = lines.reduce((n, l) => n + Math.ceil(l.length / 4), 0);
const batchTokens = batches.reduce((n, b) => {
	for (let i = b.first; i <= b.last; i++) n += tokens[i];
	return n;
}, 0);
const byType = new Map<string, number>();
for (const e of entries) {
	const k = e.message?.role ? `${e.type}:${e.message.role}` : e.type;
	byType.set(k, (byType.get(k) ?? 0) + 1);
}

console.log(`pi-fold core ${core.version} (self-check ${core.selfCheck().ok ? "ok" : "FAILED"})`);
console.log(`session: ${file}\n  ${origin}`);
console.log(
	`  ${entries.length} entries, ${(bytes / 1e6).toFixed(2)} MB: ${[...byType].map(([k, n]) => `${k} ${n}`).join(", ")}`,
);
console.log("");
console.log("| what | result |");
console.log("|---|---|");
console.log(
	`| leaf identities (SHA-256 of each persisted line) | ${lines.length} in ${(t1 - t0).toFixed(1)} ms, ${mismatches} mismatches vs node:crypto |`,
);
console.log(`| estimated tokens (core) | ${estimated.toLocaleString("en")} in ${(t2 - t1).toFixed(1)} ms |`);
console.log(`| chars/4 for comparison | ${quarter.toLocaleString("en")} |`);
console.log(
	`| complete tool batches (foldable units) | ${batches.length}, holding ${batchTokens.toLocaleString("en")} estimated tokens (${((100 * batchTokens) / estimated).toFixed(0)}%) |`,
);
console.log(`| fold identities of those batches | ${identities.length} in ${(t4 - t3).toFixed(2)} ms |`);
console.log(`| identity of the whole session as one fold | ${toHex(session).slice(0, 16)}... |`);
const biggest = [...tokens.keys()].sort((a, b) => tokens[b] - tokens[a]).slice(0, 3);
console.log("\nlargest entries (what a fold would take out of the window first):");
for (const i of biggest) {
	const m = entries[i].message;
	console.log(
		`  #${i} ${m?.role ?? entries[i].type}: ~${tokens[i]} tokens, sha256 ${toHex(leaves, i * DIGEST_BYTES, i * DIGEST_BYTES + 8)}...`,
	);
}
if (mismatches > 0) process.exitCode = 1;
