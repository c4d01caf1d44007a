// The session the server shows, kept current: Pi may have it open and go on appending, so each time
// the page asks, the file is looked at (size and modification time) and, when it changed, read again.
// Native compaction's curve comes from a replay in a child process that takes seconds: at most one
// runs at a time, a change while it runs queues one more (never more than one), and the page keeps
// the last finished curve meanwhile, so a session written every second still gets one. Nothing is
// written and no lock is taken.
import { statOf } from "../replay/output-guard.ts";
import { type CurveRun, replayCurve } from "./native-curve.ts";
import type { SessionView } from "./session-view.ts";
import type { NativeAnswer } from "./view-data.ts";

export interface LiveView {
	view: SessionView;
	native: NativeAnswer;
}

export class LiveSession {
	readonly file: string;
	readonly #read: () => SessionView;
	readonly #replay: () => CurveRun;
	#stamp: string;
	#view: SessionView;
	#running: CurveRun | undefined;
	/** The file changed while a replay ran: one more is due when it ends. */
	#queued = false;
	#closed = false;
	#native: NativeAnswer = { state: "pending" };
	#settled: (() => void)[] = [];

	/** `view` is the session as already read (its refusals were given before the server started). */
	constructor(file: string, view: SessionView, read: () => SessionView, replay: () => CurveRun) {
		this.file = file;
		this.#read = read;
		this.#replay = replay;
		this.#stamp = this.#stampNow();
		this.#view = view;
		this.#start();
	}

	/** The view as the file is now (read again when it changed; kept as it was when it cannot be read). */
	current(): LiveView {
		const stamp = this.#stampNow();
		if (stamp !== this.#stamp) {
			try {
				this.#view = this.#read();
				this.#stamp = stamp;
				if (this.#running) this.#queued = true;
				else this.#start();
			} catch {
				// Mid-write or gone for a moment: the last good reading stands until the next ask.
			}
		}
		return { view: this.#view, native: this.#native };
	}

	/** Resolves once no replay runs and none is queued. */
	settled(): Promise<void> {
		if (!this.#running) return Promise.resolve();
		return new Promise((resolve) => this.#settled.push(resolve));
	}

	close(): void {
		this.#closed = true;
		this.#queued = false;
		this.#running?.cancel();
	}

	#start(): void {
		const run = this.#replay();
		this.#running = run;
		void run.answer.then((answer) => {
			// A curve stands until a newer one is ready; a replay that failed replaces only a missing one.
			if (answer.state === "ready" || this.#native.state !== "ready") this.#native = answer;
			this.#running = undefined;
			if (this.#queued && !this.#closed) {
				this.#queued = false;
				this.#start();
				return;
			}
			for (const resolve of this.#settled.splice(0)) resolve();
		});
	}

	#stampNow(): string {
		const s = statOf(this.file);
		return s ? `${s.size}:${s.mtimeMs}` : "gone";
	}
}

export function liveSession(
	file: string,
	view: SessionView,
	read: () => SessionView,
	cli: string,
	replayArgs: readonly string[],
): LiveSession {
	return new LiveSession(file, view, read, () => replayCurve(file, cli, replayArgs));
}
