// Wall time between the first and the last extension handler of each Pi event, as Pi runs them: two
// probe extensions, one registered before everything under test and one after it. Pi runs an event's
// handlers extension by extension, awaiting each and doing its own work between them, so last minus
// first is what the extensions in between cost the agent loop on that event, Pi's in-between work
// included, not only the handlers' own time.
//
// The turn boundary is timed differently: from the last probe of the turn's last message_end to the
// last probe of the next turn_start (or of agent_end after the last turn): everything Pi and the
// extensions do between two turns, a turn_end boundary included when an extension listens there.
// The probes themselves do not listen at turn_end: a listener there makes Pi rebuild the boundary's
// context from the whole branch at every turn, a cost a session without that listener never pays.
import type { ExtensionAPI, ExtensionFactory } from "@earendil-works/pi-coding-agent";

/** The events timed: everything pi-fold handles on the way of a request. */
const PROBED_EVENTS = ["message_end", "context", "context_with_system", "agent_before_settle"] as const;
/** `boundary`: from the turn's last message_end to the next turn_start (or agent_end). */
type ProbedEvent = (typeof PROBED_EVENTS)[number] | "boundary";

/** One event as the probes saw it: when the first and (if it got there) the last probe ran. */
interface ProbedSample {
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

interface HandlerProbe {
	/** Register first (before the extensions measured). */
	first: ExtensionFactory;
	/** Register last (after them). */
	last: ExtensionFactory;
	readonly samples: readonly ProbedSample[];
	/**
	 * Per request: the events from the previous request's context_with_system (exclusive) to this
	 * one's (inclusive): the turn's message_end events, the boundary after it, then the request's
	 * context and context_with_system.
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
	/** When the last probe saw the latest message_end: a boundary starts there. */
	let messageEnded: number | undefined;
	const lastProbe = (pi: ExtensionAPI) => {
		for (const event of PROBED_EVENTS) {
			pi.on(event as "turn_end", () => {
				const now = performance.now();
				const sample = open.get(event);
				if (sample && sample.last === undefined) sample.last = now;
				open.delete(event);
				if (event === "message_end") messageEnded = now;
				return undefined;
			});
		}
		const boundaryEnd = () => {
			if (messageEnded !== undefined) samples.push({ event: "boundary", first: messageEnded, last: performance.now() });
			messageEnded = undefined;
		};
		pi.on("turn_start", boundaryEnd);
		pi.on("agent_end", boundaryEnd);
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
