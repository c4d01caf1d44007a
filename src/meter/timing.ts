// What pi-fold's handlers cost each request: everything pi-fold spent between two requests,
// attributed to the later one. Kept for status, which copies it into a tool result Pi persists,
// so only the newest samples are kept.

/** Per-request handler timings kept for status (the newest). */
const MAX_TIMINGS = 256;

export class HandlerTiming {
	readonly #samples: number[] = [];
	#requests = 0;
	#pending = 0;

	/** Add handler time; `request` closes the sample (the context event of the request it preceded). */
	add(ms: number, request: boolean): void {
		this.#pending += ms;
		if (!request) return;
		this.#samples.push(this.#pending);
		if (this.#samples.length > MAX_TIMINGS) this.#samples.shift();
		this.#requests++;
		this.#pending = 0;
	}

	/** Requests timed so far, and the handler time of the newest MAX_TIMINGS of them (a copy). */
	status(): { requests: number; handlerMs: number[] } {
		return { requests: this.#requests, handlerMs: [...this.#samples] };
	}
}
