// What went wrong, for status: every handler catches, and what it caught is kept here as one line
// ("where: reason"), the newest only. A problem pi-fold repaired (a damaged file written again, a
// window repair made durable) stays listed, said to be repaired, so status tells what happened
// apart from what still needs action.

/** Problems kept for status (the newest). */
const MAX_PROBLEMS = 50;

import type { ProblemState } from "../vocabulary.ts";

/** Said after the line of a problem that was repaired. */
const REPAIRED_SUFFIX = " (repaired)";

interface Problem {
	line: string;
	repaired: boolean;
	until?: string;
}

export class ProblemLog {
	readonly #problems: Problem[] = [];

	add(where: string, reason: string, state: ProblemState = "open"): void {
		const line = `${where}: ${reason}`;
		if (typeof state === "object") this.#problems.push({ line, repaired: false, until: state.until });
		else this.#problems.push({ line, repaired: state === "repaired" });
		if (this.#problems.length > MAX_PROBLEMS) this.#problems.splice(0, this.#problems.length - MAX_PROBLEMS);
	}

	/** What `until` waited for is done: the problems reported with it are repaired. */
	settle(until: string): void {
		for (const p of this.#problems) {
			if (p.until !== until) continue;
			p.repaired = true;
			p.until = undefined;
		}
	}

	/** A copy, oldest first; a repaired problem's line ends with REPAIRED_SUFFIX. */
	list(): string[] {
		return this.#problems.map((p) => (p.repaired ? `${p.line}${REPAIRED_SUFFIX}` : p.line));
	}

	/** How many of the listed problems still need action. */
	get open(): number {
		return this.#problems.reduce((n, p) => n + (p.repaired ? 0 : 1), 0);
	}
}
