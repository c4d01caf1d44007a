// npm run bench:session — pi-fold against Pi's native compaction and against no management at all,
// over one long scripted session (bench/lib/session-compare.ts runs it, session-output.ts shows it).
//
// Three arms in one process, same script, same window, same provider accounting: Pi 1.6 with pi-fold
// (registerPiFold(pi, {})), Pi 1.6 with its own compaction, and Pi 1.6 with compaction off ("none": the
// fresh-input floor). The workload is the runtime benchmark's (harness/workload.ts: one agentic
// turn of real read/bash/ls calls over Pi's dist/ from npm), 64 stages, with 8 seeded values planted in
// tool results; at the end one user message asks for them (bench/lib/recall-agent.ts). Every request's
// usage is what the faux provider reports (its common-prefix cache model); cost comes from a price card.
//
// Three scenarios (bench/lib/session-scenarios.ts), all by default (--scenario equal|tiered|idle|all): an
// equal window with no price tier, a 400,000 window with a 2x price tier above 272,000, and the equal
// window's session over 8 prompts with idle gaps past the prompt cache's lifetime, and (longrun) with
// three tool runs longer than the prompt cache's lifetime (simulated).
// Prints Markdown; writes bench/results/session.json and .svg, session-tiered.json and .svg (or --out-dir).
// Flags (all optional): --scenario S --stages N --seed N --window N --max-tokens N --reserve-tokens N
// --keep-recent-tokens N --read-lines MIN-MAX --root DIR --summary-chars N --price-card FILE --out-dir DIR
// --keep-sessions DIR --no-warmup. Defaults are all of Pi's and pi-fold's, per scenario.
import { fileURLToPath } from "node:url";
import { removeTempDirs } from "../harness/pi-harness.ts";
import { parseSessionArgs, runSessionCompare, SessionArgsError } from "./lib/session-compare.ts";
import {
	cacheText,
	costText,
	headerText,
	healthText,
	policiesText,
	referText,
	tableText,
	targetsText,
	valuesText,
	writeSessionFiles,
} from "./lib/session-output.ts";

const RESULTS = fileURLToPath(new URL("./results/", import.meta.url));

async function main(): Promise<void> {
	const { scenarios, optionsFor, outDir } = await parseSessionArgs(process.argv.slice(2));
	const command = `node bench/session.bench.ts ${process.argv.slice(2).join(" ")}`.trim();
	for (const scenario of scenarios) {
		const result = await runSessionCompare({ ...optionsFor(scenario), comparePolicies: true });
		const sections = [
			headerText(result),
			tableText(result),
			valuesText(result),
			costText(result),
			cacheText(result),
			referText(result),
			policiesText(result),
			targetsText(result),
			healthText(result),
		];
		console.log(sections.filter(Boolean).join("\n\n"));
		const files = writeSessionFiles(result, outDir ?? RESULTS, command);
		console.log(`\nwrote ${files.json}\nwrote ${files.svg}\n`);
	}
}

try {
	await main();
} catch (e) {
	if (!(e instanceof SessionArgsError)) throw e;
	console.error(`bench:session: ${e.message}`);
	process.exitCode = 2;
} finally {
	removeTempDirs();
}
