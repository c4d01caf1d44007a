// What the provider would have counted for a replayed request, learned from the recorded usage.
//
// Per message. Before each turn, the request the recorded session really sent (its own compactions
// and edits applied) and the prompt tokens it reported are taken in: the messages of that request
// not seen before get the reported tokens that the known ones do not explain, shared in proportion
// to their estimates (between two plain appends that is exactly what the turn added). A replayed
// request then counts, per message, the provider's tokens where the recording taught them and the
// estimate times a calibration ratio for text it never sent (briefs, receipts, summaries). That
// ratio is the runtime's own Calibration, anchored on each recorded request as pi-fold anchors it
// on each real one. A request that extends the recorded one costs exactly the reported tokens plus
// what it appends. A ratio alone would not do: it varies with the mix of content (code, prose,
// thinking) by 10-30% over a long session, and one measured on a small window would mis-scale a
// large one.
//
// Hidden prefix. A session that records no system message (legacy files) still paid for a system
// prompt and tool definitions on every request. Their size is fitted once from the recorded usage
// (least squares, real = a + b × estimate: a tokens, a/b in estimator units) and counted in every
// request of every policy alike, always a cache read (it never changes).
import type { PiFoldCore } from "../../bindings/index.ts";
import { Calibration, MAX_CALIBRATION_RATIO, promptTokensOf } from "../meter/calibration.ts";
import type { RequestEstimate } from "../meter/estimate.ts";
import type { Estimate, RequestMeter } from "./measure.ts";
import { modelKeyOf, type Turn } from "./transcript.ts";

/** The billed text standing for a hidden prefix in the calibration (never a real message's text). */
const HIDDEN_TEXT = "\u0000(system prompt and tools, not recorded)";

/** Fewest turns with usage a hidden-prefix fit is made from. */
const MIN_FIT_POINTS = 3;

interface HiddenPrefix {
	/** Provider tokens. */
	real: number;
	/** Estimator tokens. */
	estimate: number;
}

/** The least-squares line real = a + b × estimate over the points: the prefix every request carried unseen. */
export function fitHiddenPrefix(points: readonly { estimate: number; real: number }[]): HiddenPrefix {
	const none = { real: 0, estimate: 0 };
	if (points.length < MIN_FIT_POINTS) return none;
	let mx = 0;
	let my = 0;
	for (const p of points) {
		mx += p.estimate;
		my += p.real;
	}
	mx /= points.length;
	my /= points.length;
	let sxy = 0;
	let sxx = 0;
	for (const p of points) {
		sxy += (p.estimate - mx) * (p.real - my);
		sxx += (p.estimate - mx) ** 2;
	}
	if (sxx === 0) return none;
	const b = sxy / sxx;
	const a = my - b * mx;
	return b > 0 && a > 0 ? { real: Math.round(a), estimate: Math.round(a / b) } : none;
}

const within = (ratio: number) => ratio <= MAX_CALIBRATION_RATIO && ratio >= 1 / MAX_CALIBRATION_RATIO;

export class ProviderTokens {
	readonly #meter: RequestMeter;
	/** The ratio for text the recording never sent (the runtime's Calibration, on recorded requests). */
	readonly calibration = new Calibration();
	/** Provider tokens per billed text (by key, fold ids masked: measure.ts), as learned from the recording. */
	readonly #learned = new Map<string, number>();
	#anchor: { keys: readonly string[]; real: number; model: string } | undefined;
	hidden: HiddenPrefix = { real: 0, estimate: 0 };

	constructor(meter: RequestMeter) {
		this.#meter = meter;
	}

	get core(): PiFoldCore {
		return this.#meter.core;
	}

	/** Fit the hidden prefix when no recorded request carries a system message. */
	fitHidden(turns: readonly Turn[]): void {
		this.hidden = { real: 0, estimate: 0 };
		if (turns.some((t) => t.recorded.some((m) => m.role === "system"))) return;
		const points: { estimate: number; real: number }[] = [];
		for (const t of turns) {
			const real = promptTokensOf(t.assistant.usage);
			if (real !== undefined) points.push({ estimate: this.#meter.estimate(t.recorded).total, real });
		}
		this.hidden = fitHiddenPrefix(points);
	}

	/** The estimate the calibration sees: the hidden prefix first, when there is one. */
	#withHidden(e: RequestEstimate): RequestEstimate {
		if (this.hidden.estimate === 0) return e;
		const tokens = new Uint32Array(e.tokens.length + 1);
		tokens[0] = this.hidden.estimate;
		tokens.set(e.tokens, 1);
		return { texts: [HIDDEN_TEXT, ...e.texts], tokens, total: e.total + this.hidden.estimate };
	}

	/** Take in the turn's recorded request and its reported usage (a turn without usage teaches nothing). */
	learn(turn: Turn): void {
		const real = promptTokensOf(turn.assistant.usage);
		if (real === undefined) return;
		const model = modelKeyOf(turn.model);
		const estimate = this.#meter.estimate(turn.recorded);
		this.calibration.observeRequest(this.#withHidden(estimate), model);
		this.calibration.calibrate(turn.assistant.usage, model);
		let residual = real - this.hidden.real;
		const unknown: number[] = [];
		let unknownEstimate = 0;
		estimate.keys.forEach((key, i) => {
			const known = this.#learned.get(key);
			if (known !== undefined) residual -= known;
			else {
				unknown.push(i);
				unknownEstimate += estimate.tokens[i];
			}
		});
		if (unknown.length > 0 && unknownEstimate > 0 && residual > 0 && within(residual / unknownEstimate)) {
			for (const i of unknown) this.#learned.set(estimate.keys[i], (residual * estimate.tokens[i]) / unknownEstimate);
		}
		this.#anchor = { keys: estimate.keys, real, model };
	}

	/** The ratio for text the recording never sent. */
	ratio(model: string): number {
		return this.calibration.ratioFor(model);
	}

	/** Provider tokens of each message of a request to `model` (fractional). */
	perMessage(estimate: Estimate, model: string): Float64Array {
		const ratio = this.ratio(model);
		const out = new Float64Array(estimate.keys.length);
		estimate.keys.forEach((key, i) => {
			out[i] = this.#learned.get(key) ?? estimate.tokens[i] * ratio;
		});
		return out;
	}

	/** Provider tokens of a whole request (the hidden prefix included). */
	request(estimate: Estimate, perMessage: Float64Array, model: string): number {
		const a = this.#anchor;
		let from = 0;
		let total = this.hidden.real;
		if (a && a.model === model && extends_(a.keys, estimate.keys)) {
			from = a.keys.length;
			total = a.real;
		}
		for (let i = from; i < perMessage.length; i++) total += perMessage[i];
		return Math.round(total);
	}

	/** Provider tokens of one text billed on its own (a summarization prompt or answer). */
	text(role: "user" | "assistant", text: string, model: string): number {
		return Math.round(this.#meter.estimateText(role, text) * this.ratio(model));
	}

	/** Output tokens of the turn's answer: as recorded, else its calibrated estimate. */
	output(turn: Turn): number {
		const reported = turn.assistant.usage?.output;
		if (typeof reported === "number" && Number.isFinite(reported) && reported > 0) return reported;
		const estimate = this.#meter.estimate([{ role: "assistant", content: turn.assistant.content }]).total;
		return Math.round(estimate * this.ratio(modelKeyOf(turn.model)));
	}
}

function extends_(base: readonly string[], next: readonly string[]): boolean {
	if (base.length > next.length) return false;
	for (let i = 0; i < base.length; i++) if (base[i] !== next[i]) return false;
	return true;
}
