// The rewrite recorder: every request Pi sends is compared with the previous request message by
// message (by value, and by SHA-256 digest of each message's canonical JSON where the values
// differ; see digestIncrementally). Between commits a request may only append; a rewrite is fine
// when the runtime announced it (commit, expand, /fold, overflow recovery, repair) and a bug
// otherwise. Fed from Pi's `context` event, read-only.
import { DIGEST_BYTES, type PiFoldCore, toHex } from "../../bindings/index.ts";
import { canonicalJson } from "../values/canonical-json.ts";
import { NOT_PLAIN, plainCopy, samePlainValue } from "../values/plain-value.ts";
import { errorMessage } from "../vocabulary.ts";

/** The runtime's own, deliberate rewrites of the window. */
const REWRITE_REASONS = ["commit", "expand", "fold", "overflow", "repair"] as const;
type RewriteReason = (typeof REWRITE_REASONS)[number];

export interface RewriteCounters {
	/** Requests recorded. requests = baselines + pureAppends + Σ attributed + unattributed. */
	requests: number;
	/** Requests with nothing to compare with: the first one, and the first after rebase(). */
	baselines: number;
	/** The previous request's messages are a prefix of this one's (identical counts too). */
	pureAppends: number;
	attributed: Record<RewriteReason, number>;
	/** Rewrites nobody announced: a bug, must stay 0. */
	unattributed: number;
	/** Announcements whose next request turned out to be a pure append (e.g. Pi rejected the batch). */
	lapsedAnnouncements: number;
}

export type RequestKind = "baseline" | "append" | "attributed" | "unattributed";

export type RecordOutcome =
	| {
			ok: true;
			kind: RequestKind;
			/** The announced reason, for an attributed rewrite. */
			reason?: RewriteReason;
			/** First message index that differs from the previous request, for a rewrite. */
			firstChanged?: number;
			messages: number;
	  }
	| { ok: false; reason: string };

interface LastRewrite {
	/** 1-based number of the request that carried it. */
	request: number;
	firstChanged: number;
	reason: RewriteReason | "unattributed";
}

/** SHA-256 of each message's canonical JSON, packed (digest i at bytes [32i, 32i + 32)). */
export function digestMessages(core: PiFoldCore, messages: readonly unknown[]): Uint8Array {
	return core.hashSpans(messages.map(canonicalJson));
}

/**
 * One recorded request: a private copy of each message (plainCopy; NOT_PLAIN when it could not be
 * copied), and each message's digest, taken when it is first needed. The copy is exactly the value
 * the message had when recorded, so its canonical JSON, hence its digest, can be taken from the
 * copy at any later time: a message appended at the end is not serialized or hashed until
 * something asks for its digest (a later request that changed it, or status). A message without a
 * copy is digested at once, from the message itself.
 */
export class Recorded {
	readonly snapshots: readonly unknown[];
	/** The messages as they were handed over (the objects, not copies): what `sameAs` answers with. */
	readonly live: readonly unknown[];
	/** Digest i at bytes [32i, 32i + 32), valid where known[i] is 1. */
	readonly #digests: Uint8Array;
	readonly #known: Uint8Array;

	constructor(snapshots: readonly unknown[], digests: Uint8Array, known: Uint8Array, live: readonly unknown[] = []) {
		this.snapshots = snapshots;
		this.live = live;
		this.#digests = digests;
		this.#known = known;
	}

	get count(): number {
		return this.snapshots.length;
	}

	/** Whether digest i has been taken (a deferred one is taken by digest or digests). */
	known(i: number): boolean {
		return this.#known[i] === 1;
	}

	/** Digest i (32 bytes, a view: do not change it), taken now if it was deferred. */
	digest(core: PiFoldCore, i: number): Uint8Array {
		if (this.#known[i] !== 1) this.#take(core, [i]);
		return this.#digests.subarray(i * DIGEST_BYTES, (i + 1) * DIGEST_BYTES);
	}

	/** Copy the first `count` digests, and which of them are taken, into another request's arrays. */
	copyPrefix(digests: Uint8Array, known: Uint8Array, count: number): void {
		digests.set(this.#digests.subarray(0, count * DIGEST_BYTES));
		known.set(this.#known.subarray(0, count));
	}

	/** Every digest, packed (a copy), the deferred ones taken now in one batch. */
	digests(core: PiFoldCore): Uint8Array {
		const missing: number[] = [];
		for (let i = 0; i < this.count; i++) if (this.#known[i] !== 1) missing.push(i);
		if (missing.length > 0) this.#take(core, missing);
		return this.#digests.slice();
	}

	#take(core: PiFoldCore, indices: readonly number[]): void {
		const hashed = core.hashSpans(indices.map((i) => canonicalJson(this.snapshots[i])));
		indices.forEach((i, k) => {
			this.#digests.set(hashed.subarray(k * DIGEST_BYTES, (k + 1) * DIGEST_BYTES), i * DIGEST_BYTES);
			this.#known[i] = 1;
		});
	}
}

/**
 * Record a request incrementally against the previous one. Message i keeps the previous copy
 * (and digest) i when it is the same plain value as that copy, keys in the same order
 * (samePlainValue, ordered); every other message gets a copy of its own and, when needed, its
 * digest from its canonical JSON. Why that proves what digesting everything proves:
 * - the copy (plainCopy: a deep copy of a JSON-plain value, or none for anything else) is taken
 *   when the message is recorded and never leaves this module, so it is exactly the value the
 *   digest is of (Pi hands over fresh clones on every request, so comparing Pi's objects by
 *   identity would prove nothing; nothing here does);
 * - the same plain value has the same canonical JSON, hence the same digest;
 * - a changed byte anywhere (deep in a tool result, a nested detail) makes the values differ, so
 *   that message is digested afresh: a key order change alone still gives the same digest
 *   (canonical JSON), any other change a different one.
 * The prefix is still compared in full on every request, but by walking it and comparing strings
 * (memcmp), with no serializing and no hashing; a message appended at the end is serialized and
 * hashed only when its digest is asked for (Recorded). Nothing cheaper proves as much: Pi hands
 * over a fresh clone on every request, and an earlier extension's `context` handler, or an edit
 * of a session entry in place, may have changed any byte of it, so a fingerprint of a sample of
 * each message (lengths, ends) would miss a byte changed in the middle. What the walk proves is
 * shared instead: the estimate of the same request reuses it (RewriteRecorder.sameAs).
 */
export function digestIncrementally(
	core: PiFoldCore,
	messages: readonly unknown[],
	previous: Recorded | undefined,
): Recorded {
	const n = messages.length;
	const snapshots = new Array<unknown>(n);
	const digests = new Uint8Array(n * DIGEST_BYTES);
	const known = new Uint8Array(n);
	const fresh: number[] = [];
	const texts: string[] = [];
	// The common prefix's digests in one copy; a message that does not keep its copy drops its own.
	if (previous) previous.copyPrefix(digests, known, Math.min(n, previous.count));
	for (let i = 0; i < n; i++) {
		const m = messages[i];
		const kept = previous && i < previous.count ? previous.snapshots[i] : NOT_PLAIN;
		if (kept !== NOT_PLAIN && samePlainValue(m, kept, true)) {
			snapshots[i] = kept;
			continue;
		}
		known[i] = 0;
		const copy = plainCopy(m);
		snapshots[i] = copy;
		if (copy !== NOT_PLAIN) continue; // its digest is taken from the copy when asked for
		texts.push(canonicalJson(m)); // it throws on what cannot be digested (a BigInt, a cycle)
		fresh.push(i);
	}
	if (texts.length > 0) {
		const hashed = core.hashSpans(texts);
		fresh.forEach((i, k) => {
			digests.set(hashed.subarray(k * DIGEST_BYTES, (k + 1) * DIGEST_BYTES), i * DIGEST_BYTES);
			known[i] = 1;
		});
	}
	return new Recorded(snapshots, digests, known, messages.slice());
}

/**
 * The first index where `next` departs from `previous` (both packed digests), or -1 when
 * `previous` is a prefix of `next` (a pure append).
 */
export function firstChangedIndex(previous: Uint8Array, next: Uint8Array): number {
	const prevCount = previous.byteLength / DIGEST_BYTES;
	const nextCount = next.byteLength / DIGEST_BYTES;
	const common = Math.min(prevCount, nextCount);
	for (let i = 0; i < common; i++) {
		for (let b = i * DIGEST_BYTES, end = b + DIGEST_BYTES; b < end; b++) {
			if (previous[b] !== next[b]) return i;
		}
	}
	return prevCount <= nextCount ? -1 : common; // a shorter request removed messages
}

/**
 * firstChangedIndex of two recorded requests, taking only the digests it must compare: a message
 * that kept the previous copy has the previous digest (the same value), so only the others are
 * compared by digest, up to the first that differs.
 */
export function firstChangedRecorded(core: PiFoldCore, previous: Recorded, next: Recorded): number {
	const common = Math.min(previous.count, next.count);
	for (let i = 0; i < common; i++) {
		const kept = previous.snapshots[i];
		if (kept !== NOT_PLAIN && next.snapshots[i] === kept) continue;
		const a = previous.digest(core, i);
		const b = next.digest(core, i);
		for (let k = 0; k < DIGEST_BYTES; k++) if (a[k] !== b[k]) return i;
	}
	return previous.count <= next.count ? -1 : common; // a shorter request removed messages
}

/** Each object message of `next` that kept `previous`'s copy (the same value, keys in order), to the message it equals. */
function sameMessages(previous: Recorded | undefined, next: Recorded): Map<unknown, unknown> {
	const same = new Map<unknown, unknown>();
	if (!previous) return same;
	const common = Math.min(previous.count, next.count);
	for (let i = 0; i < common; i++) {
		const m = next.live[i];
		if (
			typeof m === "object" &&
			m !== null &&
			next.snapshots[i] === previous.snapshots[i] &&
			next.snapshots[i] !== NOT_PLAIN
		)
			same.set(m, previous.live[i]);
	}
	return same;
}

const zeroReasons = (): Record<RewriteReason, number> => ({ commit: 0, expand: 0, fold: 0, overflow: 0, repair: 0 });

/**
 * The rewrite counters of one session. An announcement covers the next recorded request only:
 * if that request is a pure append (the rewrite did not happen), the announcement lapses, so it
 * can never excuse a later, unrelated rewrite.
 */
export class RewriteRecorder {
	readonly #core: PiFoldCore;
	#previous: Recorded | undefined;
	#announced: RewriteReason | undefined;
	#counters: RewriteCounters = {
		requests: 0,
		baselines: 0,
		pureAppends: 0,
		attributed: zeroReasons(),
		unattributed: 0,
		lapsedAnnouncements: 0,
	};
	#lastRewrite: LastRewrite | undefined;
	/** The last request's messages proven the same value, keys in order, as the one before's: to those. */
	#same = new Map<unknown, unknown>();

	constructor(core: PiFoldCore) {
		this.#core = core;
	}

	/**
	 * The runtime is about to rewrite the window (it returned edits from a boundary, or changes
	 * the next request itself). With several announcements before one request, the first stands.
	 */
	announce(reason: RewriteReason): void {
		this.#announced ??= reason;
	}

	/**
	 * Pi itself replaced the window (session switch, /tree navigation, a manual /compact): the
	 * next request starts a new baseline instead of being compared with the old window.
	 */
	rebase(): void {
		this.#previous = undefined;
		this.#same = new Map();
	}

	/**
	 * The message of the request before the last one recorded that `message` (an object of the
	 * last one, as handed over) was proven to equal by value, keys in the same order; undefined
	 * when it was not (new, changed, or not an object). Whatever reads only a message's value may
	 * take what it read of that one, as long as nobody changed `message` in place since.
	 */
	sameAs(message: unknown): unknown {
		return this.#same.get(message);
	}

	/** Record one request's messages (as the `context` event gives them). Never throws. */
	record(messages: readonly unknown[]): RecordOutcome {
		let recorded: Recorded;
		let firstChanged: number | undefined;
		try {
			if (!Array.isArray(messages)) return { ok: false, reason: "the request's messages are not an array" };
			recorded = digestIncrementally(this.#core, messages, this.#previous);
			if (this.#previous) firstChanged = firstChangedRecorded(this.#core, this.#previous, recorded);
		} catch (err) {
			this.#same = new Map();
			return { ok: false, reason: `cannot digest the request: ${errorMessage(err)}` };
		}
		this.#same = sameMessages(this.#previous, recorded);
		return this.#classify(recorded, firstChanged, messages.length);
	}

	/** Count a recorded request; `firstChanged` is its departure from the previous one (none: a baseline). */
	#classify(recorded: Recorded, firstChanged: number | undefined, count: number): RecordOutcome {
		const c = this.#counters;
		const announced = this.#announced;
		this.#previous = recorded;
		this.#announced = undefined;
		c.requests++;
		if (firstChanged === undefined) {
			c.baselines++;
			return { ok: true, kind: "baseline", messages: count };
		}
		if (firstChanged < 0) {
			c.pureAppends++;
			if (announced) c.lapsedAnnouncements++;
			return { ok: true, kind: "append", messages: count };
		}
		if (announced) {
			c.attributed[announced]++;
			this.#lastRewrite = { request: c.requests, firstChanged, reason: announced };
			return { ok: true, kind: "attributed", reason: announced, firstChanged, messages: count };
		}
		c.unattributed++;
		this.#lastRewrite = { request: c.requests, firstChanged, reason: "unattributed" };
		return { ok: true, kind: "unattributed", firstChanged, messages: count };
	}

	/** A copy of the counters. */
	counters(): RewriteCounters {
		return { ...this.#counters, attributed: { ...this.#counters.attributed } };
	}

	get lastRewrite(): LastRewrite | undefined {
		return this.#lastRewrite && { ...this.#lastRewrite };
	}

	/** Whether the last request recorded rewrote the window (announced or not). */
	get lastRequestRewrote(): boolean {
		return this.#lastRewrite !== undefined && this.#lastRewrite.request === this.#counters.requests;
	}

	/** The last request's per-message digests, hex (for status). */
	lastDigests(): string[] {
		const d = this.#previous?.digests(this.#core);
		if (!d) return [];
		const out: string[] = [];
		for (let i = 0; i < d.byteLength; i += DIGEST_BYTES) out.push(toHex(d, i, i + DIGEST_BYTES));
		return out;
	}
}
