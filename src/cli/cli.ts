// The `pi-fold` command: `replay`, `peek` and `unfold` (which read a session file without Pi), `view`.
// bin.ts checks the Node version first; `npm run replay -- <file>` from the repo. Exit codes: 0
// done, 1 the input cannot be used (a missing, empty, truncated or non-Pi file, a bad price card,
// an unknown model without --window, no Pi for the replay, an unknown or damaged fold) or the Node
// is too old, 2 bad usage, 3 an internal error. Bad input is told in one message naming the file
// and line, never with a stack trace (PI_FOLD_DEBUG=1 shows one for internal errors).
import { fileURLToPath } from "node:url";
import type { PiFoldCore } from "../../bindings/index.ts";
import { findHostLibrary, hostVersionProblem, NO_HOST_LIBRARY, useHostLibrary } from "../replay/host-library.ts";
import { ownVersion } from "../replay/launch-check.ts";
import { chartSvg, jsonReport, textReport, writeFileAtomic } from "../replay/output.ts";
import { outputProblem, statOf } from "../replay/output-guard.ts";
import { peekOutput } from "../replay/peek-command.ts";
import { progressBar } from "../replay/progress.ts";
import type { ReplayResult } from "../replay/replay.ts";
import { FoldReadError, readSessionFolds } from "../replay/session-folds.ts";
import { ReplayInputError, readSessionFile, skippedWarning } from "../replay/session-lines.ts";
import { appendToSession, hasWork, planUnfold, unfoldEntries, unfoldSummary } from "../replay/unfold-command.ts";
import { loadPriceCardFile, PriceCardError } from "../report/price-card.ts";
import { runView, type ViewArgs, ViewRefusal } from "../view/view-command.ts";
import { errorMessage } from "../vocabulary.ts";
import { type PeekArgs, parseArgs, type ReplayArgs, type UnfoldArgs, USAGE } from "./args.ts";

/**
 * The package's own Node entry, by its public name: Node resolves a package's name from inside the
 * package through its "exports", so the command loads the built entry and the core file beside it
 * the way any user of `pi-fold/node` does, wherever the command itself sits (src/replay in a clone,
 * dist/src/replay when built and installed). A string, so no compiler follows it into a second
 * build of the bindings.
 */
const NODE_ENTRY: string = "pi-fold/node";

/** The bindings' source, for this file run as source in a checkout never built (Pi's git install). */
const SOURCE_NODE_ENTRY: string = new URL("../../bindings/node.ts", import.meta.url).href;

async function loadCore(): Promise<PiFoldCore> {
	let entry: { nodeCore(): PiFoldCore };
	try {
		entry = await import(NODE_ENTRY);
	} catch (err) {
		if (!import.meta.url.endsWith(".ts") || (err as { code?: string }).code !== "ERR_MODULE_NOT_FOUND") throw err;
		entry = await import(SOURCE_NODE_ENTRY);
	}
	return entry.nodeCore();
}

class Refusal extends Error {
	readonly code: number;
	constructor(message: string, code: number) {
		super(message);
		this.code = code;
	}
}

/** Find the Pi the replay runs on and load it from there (host-library.ts), or refuse saying what to install. */
function useHost(quiet: boolean): void {
	const host = findHostLibrary();
	if (!host) throw new Refusal(NO_HOST_LIBRARY, 1);
	const old = hostVersionProblem(host);
	if (old) throw new Refusal(old, 1);
	useHostLibrary(host);
	if (host.via === "path" && !quiet) {
		process.stderr.write(`pi-fold replay: using Pi ${host.version} from ${host.dir} (the \`pi\` command on PATH)\n`);
	}
}

async function run(args: ReplayArgs): Promise<void> {
	let priceCard: Awaited<ReturnType<typeof loadPriceCardFile>> | undefined;
	if (args.priceCard !== undefined) {
		try {
			priceCard = await loadPriceCardFile(args.priceCard);
		} catch (err) {
			if (err instanceof PriceCardError) throw new Refusal(err.message, 1);
			throw err;
		}
	}
	if (args.svg !== undefined) {
		const problem = outputProblem(args.svg, args.file, "chart");
		if (problem !== undefined) throw new Refusal(problem, 1);
	}
	const progress = progressBar(process.stderr, { quiet: args.quiet });
	let result: ReplayResult;
	try {
		// The file is checked before Pi and the runtime load (a second or so): a bad one is refused at once.
		const checked = readSessionFile(args.file);
		const skipped = skippedWarning(checked);
		if (skipped !== undefined) process.stderr.write(`pi-fold replay: ${skipped}\n`);
		useHost(args.quiet);
		const { replayChecked } = await import("../replay/replay.ts");
		result = await replayChecked(checked, await loadCore(), {
			...(args.window === undefined ? {} : { window: args.window }),
			...(args.budget === undefined ? {} : { budget: args.budget }),
			...(args.reserveTokens === undefined ? {} : { reserveTokens: args.reserveTokens }),
			...(args.keepRecentTokens === undefined ? {} : { keepRecentTokens: args.keepRecentTokens }),
			...(args.summaryChars === undefined ? {} : { summaryChars: args.summaryChars }),
			...(args.cacheTtl === undefined ? {} : { cacheTtl: args.cacheTtl }),
			...(priceCard === undefined ? {} : { priceCard }),
			...(args.model === undefined ? {} : { model: args.model }),
			onProgress: (done, total) => progress.update(done, total),
		});
	} catch (err) {
		if (err instanceof ReplayInputError) throw new Refusal(err.message, 1);
		throw err;
	} finally {
		progress.finish();
	}
	if (args.svg !== undefined) {
		try {
			writeFileAtomic(args.svg, chartSvg(result));
		} catch (err) {
			throw new Refusal(`${args.svg}: cannot write the chart (${(err as { code?: string }).code ?? String(err)})`, 1);
		}
	}
	process.stdout.write(`${args.json ? jsonReport(result) : textReport(result)}\n`);
	if (args.svg !== undefined && !args.json) process.stdout.write(`chart written to ${args.svg}\n`);
}

/** `peek` and `unfold`: read (and for unfold, append to) a session file without Pi. */
async function leave(parsed: { kind: "peek"; args: PeekArgs } | { kind: "unfold"; args: UnfoldArgs }): Promise<void> {
	const { file } = parsed.args;
	try {
		// Taken before the read, so a write in between is seen; a path that cannot be stat'ed is refused by the read.
		const before = statOf(file);
		const session = readSessionFolds(file, await loadCore());
		if (parsed.kind === "peek") {
			process.stdout.write(`${peekOutput(session, parsed.args)}\n`);
			return;
		}
		const plan = planUnfold(session);
		const write = hasWork(plan) && !parsed.args.dryRun;
		if (write && before) appendToSession(file, unfoldEntries(session, plan), before);
		process.stdout.write(`${unfoldSummary(session, plan, write)}\n`);
	} catch (err) {
		if (err instanceof ReplayInputError || err instanceof FoldReadError) throw new Refusal(err.message, 1);
		throw err;
	}
}

/** `view`: serve the session's page until Ctrl-C (or write it to --out). */
async function view(args: ViewArgs): Promise<void> {
	const stopped = new Promise((resolve) => {
		process.once("SIGINT", resolve);
		process.once("SIGTERM", resolve);
	});
	try {
		await runView(args, {
			core: await loadCore(),
			cli: fileURLToPath(import.meta.url),
			stdout: process.stdout,
			stopped,
		});
	} catch (err) {
		if (err instanceof ViewRefusal) throw new Refusal(err.message, 1);
		throw err;
	}
}

async function main(argv: readonly string[]): Promise<number> {
	const parsed = parseArgs(argv);
	if (parsed.kind === "help") {
		process.stdout.write(`${USAGE}\n`);
		return 0;
	}
	if (parsed.kind === "version") {
		process.stdout.write(`pi-fold ${ownVersion()}\n`);
		return 0;
	}
	if (parsed.kind === "error") {
		process.stderr.write(`pi-fold: ${parsed.message}\n\n${USAGE}\n`);
		return 2;
	}
	try {
		if (parsed.kind === "replay") await run(parsed.args);
		else if (parsed.kind === "view") await view(parsed.args);
		else await leave(parsed);
		return 0;
	} catch (err) {
		if (err instanceof Refusal) {
			process.stderr.write(`pi-fold ${parsed.kind}: ${err.message}\n`);
			return err.code;
		}
		const message = errorMessage(err);
		process.stderr.write(`pi-fold ${parsed.kind}: internal error: ${message}\n`);
		if (process.env.PI_FOLD_DEBUG === "1" && err instanceof Error) process.stderr.write(`${err.stack}\n`);
		return 3;
	}
}

process.exitCode = await main(process.argv.slice(2));
