// `pi-fold view`: find the session (given, or the current folder's most recent), read it, start the
// native-compaction replay beside it, then either serve the page until interrupted or write it to
// one file. Errors a person can fix are thrown as ViewRefusal with the sentence to show.
import type { Writable } from "node:stream";
import type { PiFoldCore } from "../../bindings/index.ts";
import { writeFileAtomic } from "../replay/output.ts";
import { outputProblem } from "../replay/output-guard.ts";
import { ReplayInputError } from "../replay/session-lines.ts";
import { liveSession } from "./live-session.ts";
import { replayCurve } from "./native-curve.ts";
import { recentSession } from "./recent-session.ts";
import { sessionView } from "./session-view.ts";
import { viewFileHtml } from "./view-file.ts";
import { startViewServer } from "./view-server.ts";

export interface ViewArgs {
	/** The session file; undefined: the current folder's most recent. */
	file?: string;
	out?: string;
	/** Options for the replay behind native compaction's curve (--window, --model). */
	replay: string[];
}

export class ViewRefusal extends Error {
	override name = "ViewRefusal";
}

export interface ViewDeps {
	core: PiFoldCore;
	/** The `pi-fold` command's script, run again for the replay. */
	cli: string;
	stdout: Writable;
	/** Resolves when the server should stop (Ctrl-C). */
	stopped: Promise<unknown>;
}

/** The file given, or the current folder's most recent session. */
function sessionFile(args: ViewArgs): string {
	if (args.file !== undefined) return args.file;
	const recent = recentSession(process.cwd());
	if ("problem" in recent) throw new ViewRefusal(recent.problem);
	return recent.file;
}

export async function runView(args: ViewArgs, deps: ViewDeps): Promise<void> {
	const file = sessionFile(args);
	if (args.out !== undefined) {
		const problem = outputProblem(args.out, file, "page");
		if (problem !== undefined) throw new ViewRefusal(problem);
	}
	const read = () => sessionView(file, deps.core);
	let view: ReturnType<typeof sessionView>;
	try {
		view = read();
	} catch (err) {
		if (err instanceof ReplayInputError) throw new ViewRefusal(err.message);
		throw err;
	}
	if (args.out !== undefined) {
		const html = viewFileHtml(view, await replayCurve(file, deps.cli, args.replay).answer);
		try {
			writeFileAtomic(args.out, html);
		} catch (err) {
			throw new ViewRefusal(`${args.out}: cannot write the page (${(err as { code?: string }).code ?? String(err)})`);
		}
		deps.stdout.write(
			`wrote ${args.out} (${Buffer.byteLength(html).toLocaleString("en-US")} bytes): open it in a browser\n`,
		);
		return;
	}
	const live = liveSession(file, view, read, deps.cli, args.replay);
	const server = await startViewServer(live);
	deps.stdout.write(
		`${server.url}\nserving ${file} read-only on 127.0.0.1 (open the URL above; it holds the access token). Ctrl-C stops.\n`,
	);
	await deps.stopped;
	live.close();
	await server.close();
}
