// Progress on stderr for replays that take a while: silent for the first second (a short replay
// prints nothing extra), then on a terminal one bar redrawn in place at most every REDRAW_MS, and
// elsewhere (a pipe, a CI log) one plain line at most every LINE_MS. `quiet` turns it off. stdout is
// never touched, so --json output stays clean.

const SHOW_AFTER_MS = 1000;
const REDRAW_MS = 100;
const LINE_MS = 1000;
const WIDTH = 30;

interface ProgressSink {
	isTTY?: boolean;
	write(text: string): unknown;
}

export interface Progress {
	update(done: number, total: number): void;
	/** Clear the bar (a terminal); a log keeps its lines. */
	finish(): void;
}

export function progressBar(sink: ProgressSink, opts: { quiet?: boolean; now?: () => number } = {}): Progress {
	const now = opts.now ?? (() => performance.now());
	const tty = sink.isTTY === true;
	const every = tty ? REDRAW_MS : LINE_MS;
	const started = now();
	let drawn = false;
	let last = Number.NEGATIVE_INFINITY;
	let lastLength = 0;
	const line = (done: number, total: number) => {
		const share = total > 0 ? Math.min(1, done / total) : 1;
		const filled = Math.round(share * WIDTH);
		return `replaying [${"#".repeat(filled)}${"-".repeat(WIDTH - filled)}] ${done}/${total} requests`;
	};
	const draw = (done: number, total: number) => {
		const text = line(done, total);
		sink.write(tty ? `\r${text}${" ".repeat(Math.max(0, lastLength - text.length))}` : `${text}\n`);
		lastLength = text.length;
		drawn = true;
	};
	return {
		update(done, total) {
			if (opts.quiet) return;
			const t = now();
			if (t - started < SHOW_AFTER_MS || (t - last < every && done < total)) return;
			last = t;
			draw(done, total);
		},
		finish() {
			if (!drawn) return;
			if (tty) sink.write(`\r${" ".repeat(lastLength)}\r`);
			drawn = false;
		},
	};
}
