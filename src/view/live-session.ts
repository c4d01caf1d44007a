// The session the server shows, kept current: Pi may have it open and go on appending, so each time
// the page asks, the file is looked at (size and modification time) and, when it changed, read again
// and its native-compaction replay started over. Nothing is written and no lock is taken.
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
	#run: CurveRun;
	#native: NativeAnswer = { state: "pending" };

	/** `view` is the session as already read (its refusals were given before the server started). */
	constructor(file: string, view: SessionView, read: () => SessionView, replay: () => CurveRun) {
		this.file = file;
		this.#read = read;
		this.#replay = replay;
		this.#stamp = this.#stampNow();
		this.#view = view;
		this.#run = this.#start();
	}

	/** The view as the file is now (read again when it changed; kept as it was when it cannot be read). */
	current(): LiveView {
		const stamp = this.#stampNow();
		if (stamp !== this.#stamp) {
			try {
				this.#view = this.#read();
				this.#stamp = stamp;
				this.#run.cancel();
				this.#run = this.#start();
			} catch {
				// Mid-write or gone for a moment: the last good reading stands until the next ask.
			}
		}
		return { view: this.#view, native: this.#native };
	}

	close(): void {
		this.#run.cancel();
	}

	#start(): CurveRun {
		this.#native = { state: "pending" };
		const run = this.#replay();
		void run.answer.then((answer) => {
			if (this.#run === run) this.#native = answer;
		});
		return run;
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
