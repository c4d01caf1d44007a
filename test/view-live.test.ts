// A session Pi is still writing, served by the view: native compaction's curve comes from a replay
// that takes seconds, so a change while one runs queues one more (never more than one), and the last
// finished curve stands meanwhile. Counted, not timed: appends seen while the first replay runs
// start nothing, and the one queued replay reads the file as it ends up.
import { appendFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { removeTempDirs } from "../harness/pi-harness.ts";
import { CLI } from "../harness/view-server.ts";
import { LiveSession } from "../src/view/live-session.ts";
import { type CurveRun, replayCurve } from "../src/view/native-curve.ts";
import { sessionView } from "../src/view/session-view.ts";
import { fileEntries } from "./helpers/fixture-entries.ts";
import { copySession, FOLD_WINDOW, recordedFold } from "./helpers/replay-recordings.ts";

afterAll(removeTempDirs);
const core = nodeCore();

/** What Pi appends for one more turn: a user message and the assistant's answer, chained to the last entry. */
function appendTurn(file: string, n: number): void {
	const entries = fileEntries(file);
	const last = entries[entries.length - 1];
	const answer = [...entries]
		.reverse()
		.find((e) => e.type === "message" && (e.message as { role: string }).role === "assistant");
	const user = {
		type: "message",
		id: `more-u${n}`,
		parentId: last.id,
		timestamp: answer?.timestamp,
		message: { role: "user", content: `more ${n}`, timestamp: 1 },
	};
	const reply = { ...answer, id: `more-a${n}`, parentId: user.id };
	appendFileSync(file, `${JSON.stringify(user)}\n${JSON.stringify(reply)}\n`);
}

const requestsOf = (file: string) =>
	fileEntries(file).filter((e) => e.type === "message" && (e.message as { role: string }).role === "assistant").length;

describe("the live view of a session being written", () => {
	it("runs one replay at a time, queues one more for any number of changes, and keeps the last curve", async () => {
		const file = copySession((await recordedFold()).file, "view-live");
		let started = 0;
		let running = 0;
		let most = 0;
		const replay = (): CurveRun => {
			started++;
			running++;
			most = Math.max(most, running);
			const run = replayCurve(file, CLI, ["--window", String(FOLD_WINDOW)]);
			void run.answer.then(() => running--);
			return run;
		};
		const live = new LiveSession(file, sessionView(file, core), () => sessionView(file, core), replay);
		try {
			// Pi appends 20 turns, each seen by a request of the page, while the first replay runs.
			for (let n = 0; n < 20; n++) {
				appendTurn(file, n);
				expect(live.current().view.data.requests).toHaveLength(requestsOf(file));
			}
			expect(started).toBe(1);
			await live.settled();
			// The first, and the one queued: it read the file as it ended up.
			expect(started).toBe(2);
			expect(most).toBe(1);
			const first = live.current().native;
			expect(first.state).toBe("ready");
			if (first.state !== "ready") return;
			expect(first.native.prompts).toHaveLength(requestsOf(file));
			// One more change: its replay starts, and the finished curve stands until it is done.
			appendTurn(file, 20);
			expect(live.current().native).toBe(first);
			expect(started).toBe(3);
			await live.settled();
			const next = live.current().native;
			expect(next.state === "ready" && next.native.prompts.length).toBe(requestsOf(file));
		} finally {
			live.close();
		}
	}, 600_000);
});
