// npm run bench:search — `search` over ~50 MB of folded text: a real session file of tool batches
// whose results are Pi's own dist/ sources (about 30 KB each), every batch folded into the store
// and consolidated (harness/fold-fixture.ts, as the runtime's commits do). Timed: the first
// search (every fold read from the store and verified by SHA-256, text views built), then searches
// on the built views: a rare literal, a frequent literal (every matching line counted), a regex,
// and a pattern that backtracking engines take exponential time on, over a 1 MB run of `a`. Beside
// each, JavaScript's own RegExp over the same texts (no fold structure, no offsets, and no guard
// against such patterns: it is not run on the last one). Writes bench/results/search.json.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { nodeCore } from "../bindings/node.ts";
import { foldEverything } from "../harness/fold-fixture.ts";
import { assistantMessage } from "../harness/synthetic-session.ts";
import { WORKLOAD_ROOT } from "../harness/workload.ts";
import { FoldTexts } from "../src/search/fold-texts.ts";
import { checkQuery, type SearchAnswer, searchFolds } from "../src/search/search.ts";
import { contextEntriesOf } from "../src/session/context-entries.ts";
import { machineNotes } from "./lib/harness.ts";
import { median } from "./lib/stats.ts";

const TARGET_BYTES = 50 * 1024 * 1024;
const CHUNK = 30_000;
const RUNS = 7;

function sources(): string {
	const parts: string[] = [];
	const walk = (dir: string) => {
		for (const e of readdirSync(dir, { withFileTypes: true })) {
			const full = join(dir, e.name);
			if (e.isDirectory()) walk(full);
			else if (e.name.endsWith(".js")) parts.push(readFileSync(full, "utf8"));
		}
	};
	walk(WORKLOAD_ROOT);
	return parts.join("\n");
}

const core = nodeCore();
const dir = mkdtempSync(join(tmpdir(), "pi-fold-bench-search-"));
try {
	const body = sources();
	const sm = SessionManager.create(dir, dir);
	sm.appendMessage({ role: "user", content: "Survey the package.", timestamp: 1 });
	let bytes = 0;
	let k = 0;
	const rare = "needle-7f3a9c";
	while (bytes < TARGET_BYTES) {
		const start = (k * 7919 * 13) % Math.max(1, body.length - CHUNK);
		let text = `chunk ${k}\n${body.slice(start, start + CHUNK)}`;
		if (k % 600 === 17) text = text.replace("\n", `\nrelease checksum: ${rare}-${k}\n`);
		if (k === 5) text += `\n${"a".repeat(1_000_000)}!\n`;
		const id = `c${k}`;
		sm.appendMessage(
			assistantMessage([
				{ type: "text", text: `Step ${k}` },
				{ type: "toolCall", id, name: "read", arguments: { path: `f${k}.js` } },
			]),
		);
		sm.appendMessage({
			role: "toolResult",
			toolCallId: id,
			toolName: "read",
			content: [{ type: "text", text }],
			isError: false,
			timestamp: 1,
		} as never);
		bytes += text.length;
		k++;
	}
	const tFold = performance.now();
	const folded = foldEverything(sm, core);
	const foldMs = performance.now() - tFold;
	const raw = sm.buildContextEntries();
	const open = {
		lattice: folded.lattice,
		context: contextEntriesOf(raw, core),
		raw: [...raw],
		store: folded.store,
		records: folded.records,
		sessionId: sm.getSessionId(),
		damaged: new Map(),
		aliases: new Map(),
		unstorable: new Map(),
		markBriefs: new Map(),
	};
	const texts = new FoldTexts();
	const run = (query: string, regex = false): SearchAnswer => {
		const checked = checkQuery(query, regex);
		if (!checked.ok) throw new Error(checked.reason);
		return searchFolds(open, texts, core, { query, regex }, checked);
	};
	const t0 = performance.now();
	const cold = run(rare);
	const coldMs = performance.now() - t0;
	const viewBytes = texts.bytes;

	const cases = [
		{ name: "rare literal", query: rare, regex: false, native: new RegExp(rare, "gi") },
		{ name: "frequent literal", query: "function", regex: false, native: /function/gi },
		{
			name: "regex",
			query: "export (async )?function \\w+\\(",
			regex: true,
			native: /export (async )?function \w+\(/gi,
		},
		{ name: "exponential for backtracking: (a+)+$", query: "(a+)+$", regex: true, native: undefined },
	];
	const allTexts = open.context.entries.map((e) => texts.entry(e.hash)?.text ?? "");
	const rows = cases.map((c) => {
		const ms: number[] = [];
		let answer: SearchAnswer | undefined;
		for (let r = 0; r < RUNS; r++) {
			const t = performance.now();
			answer = run(c.query, c.regex);
			ms.push(performance.now() - t);
		}
		const nativeMs: number[] = [];
		if (c.native) {
			for (let r = 0; r < RUNS; r++) {
				const t = performance.now();
				for (const text of allTexts) {
					c.native.lastIndex = 0;
					while (c.native.exec(text)) {}
				}
				nativeMs.push(performance.now() - t);
			}
		}
		const m = median(ms);
		return {
			case: c.name,
			query: c.query,
			regex: c.regex,
			matchingLines: answer?.total ?? 0,
			medianMs: Number(m.toFixed(1)),
			mbPerS: Number((viewBytes / 1024 / 1024 / (m / 1000)).toFixed(0)),
			nativeRegExpMedianMs: c.native ? Number(median(nativeMs).toFixed(1)) : null,
			stopped: answer?.stopped ?? null,
		};
	});
	const result = {
		machine: machineNotes(),
		command: "node bench/search.bench.ts",
		setup: {
			entries: open.context.entries.length,
			folds: open.lattice.folds().length,
			textViewBytes: viewBytes,
			foldAndStoreMs: Number(foldMs.toFixed(0)),
		},
		firstSearch: {
			what: "every fold read from the store and verified, text views built, then searched (rare literal)",
			ms: Number(coldMs.toFixed(0)),
			matchingLines: cold.total,
			problems: cold.problems.length,
		},
		searches: rows,
		targets: [
			{
				what: "search 50 MB of folded text (built views, rare literal)",
				measured: rows[0].medianMs,
				needed: "< 1000 ms",
				met: rows[0].medianMs < 1000,
			},
		],
	};
	console.log(`# pi-fold search benchmark (${result.machine.date})`);
	console.log(
		`${result.setup.entries} entries in ${result.setup.folds} folds, ${(viewBytes / 1024 / 1024).toFixed(1)} MB of text views`,
	);
	console.log(
		`first search (read + verify every fold from the store, build views): ${result.firstSearch.ms} ms, ${cold.total} matching lines`,
	);
	console.log("| search | query | matching lines | median ms | MB/s | JS RegExp, same texts (ms) |");
	console.log("|---|---|---:|---:|---:|---:|");
	for (const r of rows) {
		console.log(
			`| ${r.case} | \`${r.query}\` | ${r.matchingLines} | ${r.medianMs} | ${r.mbPerS} | ${r.nativeRegExpMedianMs ?? "not run (backtracking)"} |`,
		);
	}
	const out = new URL("./results/search.json", import.meta.url);
	writeFileSync(out, `${JSON.stringify(result, null, 2)}\n`);
	console.log(`\nwrote ${out.pathname}`);
} finally {
	rmSync(dir, { recursive: true, force: true });
}
