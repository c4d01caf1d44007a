// The `pi-fold` command line (replay, peek, unfold, view): parsed whole before anything runs, every
// problem named.
import type { ViewArgs } from "../view/view-command.ts";

export const USAGE = `Usage: pi-fold replay <session.jsonl> [options]
       pi-fold peek <session.jsonl> <fold id> [--raw]
       pi-fold unfold <session.jsonl> [--dry-run]
       pi-fold view [session.jsonl] [--out <view.html>] [--window <tokens>] [--model <provider/id>]

peek prints one fold's exact originals from the store beside the session file, verified by
SHA-256 (--raw: the session-file lines themselves). unfold gives every fold of the session's active
branch its original content back and takes pi-fold's notices out of the model's view, so the session
reads the same in a Pi without pi-fold (run it with Pi closed on that session). Neither needs Pi.

view shows a session in a browser (default: the current folder's most recent Pi session): each
request's window, native compaction beside it, the fold tree, search over every folded byte, and
each fold's originals verified in the page by the WebAssembly core. It serves on 127.0.0.1 only,
under a random token in the URL it prints, and reads without writing (the session may be open in
Pi); --out writes the same page as one self-contained file instead. Ctrl-C stops the server.
--window and --model are passed to the replay that draws native compaction and pi-fold beside the session.

Replays a recorded Pi session offline (no model is called) and shows, side by side, what pi-fold,
Pi's native compaction and no context management would have sent: tokens, cache reads, cost,
peak context, rewrites; optionally a chart of prompt size per request.

Options:
  --window <tokens>              the model's context window (default: Pi's catalog entry for the session's model)
  --budget <tokens>              pi-fold's serving budget (default: the one a pi-fold session's commit receipts
                                 record, else the window minus an output reservation)
  --model <provider/id>          replay as if the session ran on this model of Pi's catalog: its window,
                                 output reservation, price tiers (pi-fold's budget) and prices
  --price-card <file.json>       prices in $ per million tokens for every request (default: each request's
                                 model as Pi's catalog prices it, price tiers included; the benchmark's
                                 card for a model the catalog does not know)
  --json                         print the result as JSON on stdout, nothing else
  --svg <file>                   write the prompt-size-per-request chart as SVG
  --reserve-tokens <tokens>      native compaction: Pi's reserveTokens (default 16384)
  --keep-recent-tokens <tokens>  native compaction: Pi's keepRecentTokens (default 20000)
  --summary-chars <chars>        native compaction: summary size (default: the session's own, else 4000)
  --cache-ttl <seconds>          the prompt cache's lifetime: a request later than this after the one
                                 before (by the recorded timestamps) reads nothing back, for every policy
                                 (default: the model's short cache lifetime, else 300)
  --quiet                        no progress on stderr (shown when a replay takes more than a second)
  -V, --version                  print pi-fold's version
  -h, --help                     show this help

Runs on Pi's own code: the Pi installed beside pi-fold, else the one the \`pi\` command on PATH
leads to (it says which). Needs Node >= 22.19. Exit codes: 0 done, 1 the session (or price card) cannot be replayed,
2 bad usage, 3 an internal error.`;

export interface ReplayArgs {
	file: string;
	window?: number;
	budget?: number;
	priceCard?: string;
	/** A catalog model to replay as (--model provider/id). */
	model?: { provider: string; id: string };
	json: boolean;
	svg?: string;
	reserveTokens?: number;
	keepRecentTokens?: number;
	summaryChars?: number;
	cacheTtl?: number;
	/** No progress on stderr. */
	quiet: boolean;
}

export interface PeekArgs {
	file: string;
	id: string;
	raw: boolean;
}

export interface UnfoldArgs {
	file: string;
	dryRun: boolean;
}

export type ParsedArgs =
	| { kind: "help" }
	| { kind: "version" }
	| { kind: "replay"; args: ReplayArgs }
	| { kind: "peek"; args: PeekArgs }
	| { kind: "unfold"; args: UnfoldArgs }
	| { kind: "view"; args: ViewArgs }
	| { kind: "error"; message: string };

const NUMBER_FLAGS = {
	"--window": "window",
	"--budget": "budget",
	"--reserve-tokens": "reserveTokens",
	"--keep-recent-tokens": "keepRecentTokens",
	"--summary-chars": "summaryChars",
	"--cache-ttl": "cacheTtl",
} as const;
const STRING_FLAGS = { "--price-card": "priceCard", "--svg": "svg" } as const;

function positiveInt(flag: string, value: string): number | string {
	if (!/^\d+$/.test(value)) return `${flag} needs a positive whole number, got ${JSON.stringify(value)}`;
	const n = Number(value);
	if (!Number.isSafeInteger(n) || n < 1) return `${flag} needs a positive whole number, got ${value}`;
	return n;
}

interface Words {
	files: string[];
	options: { flag: string; value?: string }[];
}

/**
 * A command's words: the files, and each option with its value (after `=`, or the next word when
 * `takesValue` says the option has one; undefined at the end of the line).
 */
function wordsOf(rest: readonly string[], takesValue: (flag: string) => boolean): Words {
	const words: Words = { files: [], options: [] };
	for (let i = 0; i < rest.length; i++) {
		const arg = rest[i];
		if (!arg.startsWith("--")) {
			words.files.push(arg);
			continue;
		}
		const eq = arg.indexOf("=");
		const flag = eq < 0 ? arg : arg.slice(0, eq);
		const value = eq >= 0 ? arg.slice(eq + 1) : takesValue(flag) ? rest[++i] : undefined;
		words.options.push(value === undefined ? { flag } : { flag, value });
	}
	return words;
}

/** Parse `argv` (without node and the script): `replay <file> [options]`. */
export function parseArgs(argv: readonly string[]): ParsedArgs {
	if (argv.length === 0 || argv.includes("-h") || argv.includes("--help")) {
		return argv.length === 0 ? { kind: "error", message: "no command given" } : { kind: "help" };
	}
	if (argv.includes("--version") || argv.includes("-V")) return { kind: "version" };
	const [command, ...rest] = argv;
	if (command === "peek" || command === "unfold") return parseLeaveArgs(command, rest);
	if (command === "view") return parseViewArgs(rest);
	if (command !== "replay")
		return { kind: "error", message: `unknown command ${JSON.stringify(command)} (known: replay, peek, unfold, view)` };
	const out: Partial<ReplayArgs> & { json: boolean; quiet: boolean } = { json: false, quiet: false };
	const words = wordsOf(rest, (flag) => flag !== "--json" && flag !== "--quiet");
	const { files } = words;
	for (const { flag, value } of words.options) {
		if (flag === "--json" || flag === "--quiet") {
			if (value !== undefined) return { kind: "error", message: `${flag} takes no value` };
			out[flag === "--json" ? "json" : "quiet"] = true;
			continue;
		}
		if (flag === "--model") {
			const slash = value?.indexOf("/") ?? -1;
			if (value === undefined || slash < 1 || slash === value.length - 1 || /\s/.test(value)) {
				return { kind: "error", message: `--model needs provider/id, got ${JSON.stringify(value ?? "")}` };
			}
			out.model = { provider: value.slice(0, slash), id: value.slice(slash + 1) };
			continue;
		}
		const numberKey = NUMBER_FLAGS[flag as keyof typeof NUMBER_FLAGS];
		const stringKey = STRING_FLAGS[flag as keyof typeof STRING_FLAGS];
		if (!numberKey && !stringKey) return { kind: "error", message: `unknown option ${flag}` };
		if (value === undefined || value === "") return { kind: "error", message: `${flag} needs a value` };
		if (numberKey) {
			const n = positiveInt(flag, value);
			if (typeof n === "string") return { kind: "error", message: n };
			out[numberKey] = n;
		} else out[stringKey] = value;
	}
	if (files.length === 0) return { kind: "error", message: "no session file given" };
	if (files.length > 1) return { kind: "error", message: `one session file at a time, got ${files.length}` };
	return { kind: "replay", args: { ...out, file: files[0] } };
}

/** `peek <file> <id> [--raw]` and `unfold <file> [--dry-run]`. */
function parseLeaveArgs(command: "peek" | "unfold", rest: readonly string[]): ParsedArgs {
	const flag = command === "peek" ? "--raw" : "--dry-run";
	const unknown = rest.find((a) => a.startsWith("--") && a !== flag);
	if (unknown !== undefined) return { kind: "error", message: `unknown option ${unknown} for ${command}` };
	const on = rest.includes(flag);
	const words = rest.filter((a) => a !== flag);
	const want = command === "peek" ? 2 : 1;
	if (words.length !== want) {
		const shape = command === "peek" ? "a session file and a fold id" : "one session file";
		return {
			kind: "error",
			message: `${command} needs ${shape}, got ${words.length} argument${words.length === 1 ? "" : "s"}`,
		};
	}
	return command === "peek"
		? { kind: "peek", args: { file: words[0], id: words[1], raw: on } }
		: { kind: "unfold", args: { file: words[0], dryRun: on } };
}

/** `view [file] [--out file] [--window n] [--model provider/id]` (the last two go to the replay). */
function parseViewArgs(rest: readonly string[]): ParsedArgs {
	const args: ViewArgs = { replay: [] };
	const words = wordsOf(rest, () => true);
	const { files } = words;
	for (const { flag, value } of words.options) {
		if (flag !== "--out" && flag !== "--window" && flag !== "--model") {
			return { kind: "error", message: `unknown option ${flag} for view` };
		}
		if (value === undefined || value === "") return { kind: "error", message: `${flag} needs a value` };
		if (flag === "--out") args.out = value;
		else args.replay.push(flag, value);
	}
	if (files.length > 1) return { kind: "error", message: `view takes one session file, got ${files.length}` };
	// The replay's own parser checks --window and --model, so a bad one is refused before anything runs.
	const replay = parseArgs(["replay", "session.jsonl", ...args.replay]);
	if (replay.kind === "error") return replay;
	return { kind: "view", args: files.length === 1 ? { ...args, file: files[0] } : args };
}
