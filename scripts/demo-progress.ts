// What `npm run demo` shows while its sessions run: one status line on stderr, redrawn in place
// (which run of which arm, which stage of the workload), and wiped before the results print. Only on
// a terminal: piped or redirected, stderr gets nothing, so a log or a test sees only the results.
import type { CompareProgress } from "../bench/lib/session-arms.ts";

export interface StatusSink {
	isTTY?: boolean;
	write(text: string): unknown;
}

export interface DemoProgress {
	update(p: CompareProgress): void;
	/** Wipe the line (before the results print). */
	done(): void;
}

/** The status line for one request of the comparison. */
export function progressLine(p: CompareProgress): string {
	const where =
		p.kind === "work"
			? p.count <= p.stages
				? `stage ${p.count}/${p.stages}`
				: "the workload's last answer"
			: p.kind === "summary"
				? "Pi's compaction summary"
				: `recall request ${p.count}`;
	return `pi-fold demo: run ${p.index}/${p.runs}, ${p.run}: ${where}`;
}

export function demoProgress(sink: StatusSink): DemoProgress {
	if (sink.isTTY !== true) return { update() {}, done() {} };
	let shown = 0;
	const draw = (text: string) => {
		sink.write(`\r${text}${" ".repeat(Math.max(0, shown - text.length))}`);
		shown = text.length;
	};
	draw("pi-fold demo: starting Pi for the first run");
	return {
		update: (p) => draw(progressLine(p)),
		done() {
			if (shown > 0) sink.write(`\r${" ".repeat(shown)}\r`);
			shown = 0;
		},
	};
}
