// A progress bar on stderr for replays that take a while: silent for the first second (a short
// replay prints nothing extra), then redrawn at most every REDRAW_MS. Only on a terminal unless
// forced; stdout is never touched, so --json output stays clean.

export const SHOW_AFTER_MS = 1000;
const REDRAW_MS = 100;
const WIDTH = 30;

export interface ProgressSink {
	isTTY?: boolean;
	write(text: string): unknown;
}

export interface Progress {
	update(done: number, total: number): void;
	/** Clear the bar (a terminal) or end its line. */
	finish(): void;
}

export function progressBar(sink: ProgressSink, opts: { force?: boolean; now?: () => number } = {}): Progress {
	const now = opts.now ?? (() => performance.now());
	const enabled = opts.force === true || sink.isTTY === true;
	const started = now();
	let drawn = false;
	let last = Number.NEGATIVE_INFINITY;
	let lastLength = 0;
	return {
		update(done, total) {
			if (!enabled) return;
			const t = now();
			if (t - started < SHOW_AFTER_MS || (t - last < REDRAW_MS && done < total)) return;
			last = t;
			const share = total > 0 ? Math.min(1, done / total) : 1;
			const filled = Math.round(share * WIDTH);
			const line = `replaying [${"#".repeat(filled)}${"-".repeat(WIDTH - filled)}] ${done}/${total} requests`;
			sink.write(`\r${line}${" ".repeat(Math.max(0, lastLength - line.length))}`);
			lastLength = line.length;
			drawn = true;
		},
		finish() {
			if (!drawn) return;
			sink.write(sink.isTTY ? `\r${" ".repeat(lastLength)}\r` : "\n");
			drawn = false;
		},
	};
}
