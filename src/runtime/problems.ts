// What went wrong, for status: every handler catches, and what it caught is kept here as one line
// ("where: reason"), the newest only.

/** Problems kept for status (the newest). */
export const MAX_PROBLEMS = 50;

export class ProblemLog {
	readonly #lines: string[] = [];

	add(where: string, reason: string): void {
		this.#lines.push(`${where}: ${reason}`);
		if (this.#lines.length > MAX_PROBLEMS) this.#lines.splice(0, this.#lines.length - MAX_PROBLEMS);
	}

	/** A copy, oldest first. */
	list(): string[] {
		return [...this.#lines];
	}
}
