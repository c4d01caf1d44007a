// npm run demo — pi-fold's main job, side by side: one real offline Pi session per arm (pi-fold, Pi's
// native compaction, no management) over the bundled workload, at the session benchmark's defaults
// (bench/lib/session-compare.ts runs it, exactly as `npm run bench:session` does). Prints three plain
// lines first (kept, what native lost, cost against native), then the table and the planted-value
// outcomes; writes session.json and session.svg into demo-output/ (git-ignored), with each arm's
// session (pi-fold's with its fold store) under sessions/, and ends with the command that shows
// pi-fold's session in a browser (`pi-fold view`). Targets and their verdicts are the benchmark's
// business, not the demo's.
// While the sessions run, a terminal shows which arm and stage (scripts/demo-progress.ts).
// Accepts the benchmark's flags, e.g. `npm run demo -- --stages 16` or `--out-dir DIR`.
// The core-only demo (hashing a session file) is `npm run demo:core` (scripts/demo-core.ts).
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseSessionArgs, runSessionCompare, SessionArgsError } from "../bench/lib/session-compare.ts";
import { leadLines } from "../bench/lib/session-lead.ts";
import { headerText, healthText, tableText, valuesText, writeSessionFiles } from "../bench/lib/session-output.ts";
import { removeTempDirs } from "../harness/pi-harness.ts";
import { tableTerms } from "../src/report/table.ts";
import { demoProgress } from "./demo-progress.ts";

const OUT = fileURLToPath(new URL("../demo-output/", import.meta.url));

const WHAT_IS_REAL =
	"What is simulated and what is real: only the model is simulated. A scripted faux provider (pi-ai's) " +
	"plays the agent and makes the same read/bash/ls calls in every arm; its token counts are the faux " +
	"provider's cache model (4 characters a token; the part of a prompt shared with that session's previous " +
	"request is read from the cache, the rest is written fresh), priced with the card above. Everything else is real: Pi 1.6's " +
	"AgentSession runs every turn, its read, bash and ls tools run over the real files of Pi's own dist/ as " +
	"installed from npm, Pi's own compaction summarises in the native arm, and in the pi-fold arm pi-fold's " +
	"runtime, its fold store on disk and its WebAssembly core fold, hash and verify the session. The faux " +
	"model takes requests larger than the window, so the none arm can run to the end; a real provider " +
	"would refuse them.";

async function main(): Promise<void> {
	const { options: given, outDir } = await parseSessionArgs(process.argv.slice(2));
	const options = { ...given, keepSessions: given.keepSessions ?? join(outDir ?? OUT, "sessions") };
	// On a terminal, one status line on stderr says which arm and stage run; wiped before the results.
	const progress = demoProgress(process.stderr);
	let result: Awaited<ReturnType<typeof runSessionCompare>>;
	try {
		result = await runSessionCompare(options, (p) => progress.update(p));
	} finally {
		progress.done();
	}
	const files = writeSessionFiles(
		result,
		outDir ?? OUT,
		`node scripts/demo.ts ${process.argv.slice(2).join(" ")}`.trim(),
	);
	const sections = [
		leadLines(result).join("\n"),
		healthText(result),
		headerText(result),
		tableText(result, { targets: false }),
		termsText(result),
		valuesText(result),
		WHAT_IS_REAL,
		"docs/RESULTS.md explains every term of the table and the chart. `npm run bench:session` runs the same comparison and checks it against its targets.",
		`chart: ${files.svg}\njson:  ${files.json}`,
		viewLine(join(options.keepSessions, `${options.scenario}-pi-fold.jsonl`), options.window),
	];
	console.log(sections.filter(Boolean).join("\n\n"));
	if (result.health.length > 0) process.exitCode = 1;
}

/** The table's less obvious terms, under it. */
function termsText(result: Awaited<ReturnType<typeof runSessionCompare>>): string {
	return ["The table's terms:", ...tableTerms(tableText(result, { targets: false }))].join("\n");
}

/** How to see pi-fold's session of the run in a browser. */
function viewLine(file: string, window: number): string {
	const shown = relative(process.cwd(), file);
	const path = shown.startsWith("..") ? file : shown;
	return (
		"See what pi-fold folded, request by request, each fold's originals verified in the page:\n" +
		`  npm run view -- ${path} --window ${window}\n` +
		"(a local page on 127.0.0.1; `--out view.html` writes it to one file instead)"
	);
}

try {
	await main();
} catch (e) {
	if (!(e instanceof SessionArgsError)) throw e;
	console.error(`pi-fold demo: ${e.message}`);
	process.exitCode = 2;
} finally {
	removeTempDirs();
}
