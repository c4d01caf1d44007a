// Wall time between the first and the last extension handler of each Pi event, as Pi runs them: two
// probe extensions, one registered before everything under test and one after it. Pi runs an event's
// handlers extension by extension, awaiting each and doing its own work between them (a boundary
// rebuilds its context after every handler), so last minus first is what the extensions in between
// cost the agent loop on that event, Pi's in-between work included, not only the handlers' own time.
import type { ExtensionAPI, ExtensionFactory } from "@earendil-works/pi-coding-agent";

/** The events timed: everything pi-fold handles on the way of a request. */
export const PROBED_EVENTS = [
	"message_end",
	"turn_end",
	"turn_start",
	"agent_end",
	"context",
	"context_with_system",
	"agent_before_settle",
] as const;
export type ProbedEvent = (typeof PROBED_EVENTS)[number];

/** One event as the probes saw it: when the first and (if it got there) the last probe ran. */
export interface ProbedSample {
	event: ProbedEvent;
	first: number;
	last?: number;
}

/** Wall time added to each request, from the probes' samples. */
export interface RequestCost {
	/** ms between first and last probe, summed over the events since the previous request. */
	ms: number;
	/** The same, per event type. */
	byEvent: Partial<Record<ProbedEvent, number>>;
}

export interface HandlerProbe {
	/** Register first (before the extensions measured). */
	first: ExtensionFactory;
	/** Register last (after them). */
	last: ExtensionFactory;
	readonly samples: readonly ProbedSample[];
	/**
	 * Per request: the events from the previous request's context_with_system (exclusive) to this
	 * one's (inclusive): the turn's message_end events, its turn_end, the next turn_start, then the
	 * request's context and context_with_system.
	 */
	perRequest(): RequestCost[];
}

export function handlerProbe(): HandlerProbe {
	const samples: ProbedSample[] = [];
	const open = new Map<ProbedEvent, ProbedSample>();
	const firstProbe = (pi: ExtensionAPI) => {
		for (const event of PROBED_EVENTS) {
			pi.on(event as "turn_end", () => {
				const sample: ProbedSample = { event, first: performance.now() };
				samples.push(sample);
				open.set(event, sample);
				return undefined;
			});
		}
	};
	const lastProbe = (pi: ExtensionAPI) => {
		for (const event of PROBED_EVENTS) {
			pi.on(event as "turn_end", () => {
				const sample = open.get(event);
				if (sample && sample.last === undefined) sample.last = performance.now();
				open.delete(event);
				return undefined;
			});
		}
	};
	return {
		first: firstProbe,
		last: lastProbe,
		samples,
		perRequest() {
			const out: RequestCost[] = [];
			let current: RequestCost = { ms: 0, byEvent: {} };
			for (const s of samples) {
				// An event the last probe never saw (a handler ended it early) counts as nothing added.
				const ms = s.last === undefined ? 0 : s.last - s.first;
				current.ms += ms;
				current.byEvent[s.event] = (current.byEvent[s.event] ?? 0) + ms;
				if (s.event === "context_with_system") {
					out.push(current);
					current = { ms: 0, byEvent: {} };
				}
			}
			return out;
		},
	};
}
