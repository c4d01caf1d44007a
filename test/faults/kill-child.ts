// A child process for the kill sweep: runs the workload in a persisted Pi session with pi-fold and
// SIGKILLs itself right after the session file reaches KILL_AT_LINES lines (a real kill -9, at an
// exact append: Pi appends one line per entry with appendFileSync). Without KILL_AT_LINES it runs
// to the end. Env: SESSION_DIR (where the session file goes), STAGES, BUDGET.
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const killAt = Number(process.env.KILL_AT_LINES ?? "-1");
if (killAt >= 0) {
	const append = fs.appendFileSync;
	let lines = -1;
	fs.appendFileSync = ((path: fs.PathOrFileDescriptor, data: string | Uint8Array, options?: fs.WriteFileOptions) => {
		append(path, data, options);
		if (typeof path === "string" && path.endsWith(".jsonl")) {
			// The first append follows Pi's initial write of the whole file: count it once, then add.
			lines = lines < 0 ? fs.readFileSync(path, "utf8").split("\n").length - 1 : lines + 1;
			if (lines >= killAt) process.kill(process.pid, "SIGKILL");
		}
	}) as typeof fs.appendFileSync;
	syncBuiltinESMExports(); // Pi imports `appendFileSync` from "fs" by name: hand it this one
}

const { foldedSession, runWorkload } = await import("./fault-session.ts");
const s = await foldedSession({
	budget: Number(process.env.BUDGET ?? "14000"),
	session: { sessionDir: process.env.SESSION_DIR },
});
await runWorkload(s, Number(process.env.STAGES ?? "8"), { seed: 21 });
const status = s.rt().status();
process.stdout.write(`${JSON.stringify({ commits: status.commits.length, problems: status.problems })}\n`);
s.h.dispose();
