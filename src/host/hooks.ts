// The Pi adapter: the only code that sees Pi's events. Each event becomes one call on the one
// FoldRuntime of this extension instance. Every handler catches and is timed: a failure is
// recorded as a problem (status shows it) and Pi's loop goes on as if pi-fold had done nothing.
import { performance } from "node:perf_hooks";
import type { ExtensionAPI, ExtensionContext, TurnEndEvent, TurnEndEventResult } from "@earendil-works/pi-coding-agent";
import type { CoreState } from "../core.ts";
import { pastWindowWarning } from "../meter/budget.ts";
import { FENCE_STATUS_KEY, fenceMessage } from "../meter/fence.ts";
import { modelKey } from "../meter/occupancy.ts";
import { FoldActions } from "../operations/actions.ts";
import type { FoldHandle } from "../operations/view.ts";
import { FoldRuntime } from "../runtime/runtime.ts";
import { errorMessage, RECORD_TYPE, type RuntimeSettings } from "../vocabulary.ts";
import { piCompactionReader } from "./pi-compaction.ts";

/** The runtime of the extension instance, created once the core has loaded. */
export interface RuntimeHandle extends FoldHandle {
	get(): FoldRuntime | undefined;
}

/**
 * Pi says "Auto-compaction cancelled" each time pi-fold declines; the first time, the person learns
 * why. Said as Pi's compaction ends, where the TUI's status line takes it in place of Pi's own words.
 */
export const CANCEL_EXPLAINED =
	"Auto-compaction cancelled by pi-fold: it folds old messages instead and keeps every original (/fold-status)";

/** The runtime, made on first use, and every handler's body run on it timed and caught. */
class Guard {
	readonly #core: () => CoreState;
	readonly #settings: RuntimeSettings;
	readonly #append: (customType: string, data: unknown) => void;
	#runtime: FoldRuntime | undefined;
	#failure: string | undefined;

	constructor(core: () => CoreState, settings: RuntimeSettings, append: (customType: string, data: unknown) => void) {
		this.#core = core;
		this.#settings = settings;
		this.#append = append;
	}

	/** The runtime, once the core has loaded; undefined (and `failure` says why) when it cannot. */
	runtime(): FoldRuntime | undefined {
		if (this.#runtime || this.#failure) return this.#runtime;
		const state = this.#core();
		if (state.ok) this.#runtime = new FoldRuntime(state.core, this.#settings, this.#append);
		else this.#failure = `the pi-fold core did not load from ${state.source}: ${state.reason}. To fix it, ${state.fix}`;
		return this.#runtime;
	}

	/** The runtime if it was made already (never loads the core). */
	get made(): FoldRuntime | undefined {
		return this.#runtime;
	}

	get failure(): string | undefined {
		return this.#failure;
	}

	/** Run a handler's body on the runtime, timed and caught; `request` marks the per-request boundary. */
	run<T>(where: string, body: (rt: FoldRuntime) => T, request = false): T | undefined {
		const rt = this.runtime();
		if (!rt) return undefined;
		const t0 = performance.now();
		try {
			return body(rt);
		} catch (err) {
			rt.problem(where, errorMessage(err));
			return undefined;
		} finally {
			rt.addTime(performance.now() - t0, request);
		}
	}

	/**
	 * `run` for a body that waits (a commit's store writes): Pi awaits the returned promise, so the
	 * time counted is until the body settles, and the result is returned only once it is durable.
	 */
	async runAsync<T>(where: string, body: (rt: FoldRuntime) => Promise<T>): Promise<T | undefined> {
		const rt = this.runtime();
		if (!rt) return undefined;
		const t0 = performance.now();
		try {
			return await body(rt);
		} catch (err) {
			rt.problem(where, errorMessage(err));
			return undefined;
		} finally {
			rt.addTime(performance.now() - t0, false);
		}
	}
}

/** A session opened, navigated or compacted by Pi: everything is rebuilt from the session. */
function onSessions(pi: ExtensionAPI, guard: Guard): void {
	const recorded = new Set<string>();
	const shown = new Set<string>();
	/**
	 * A providerInputBudget past the model's window: one line in status, and one notice as soon as a
	 * person can see it (Pi may start a session before its UI is bound, then start it again).
	 */
	const checkBudget = (rt: FoldRuntime, ctx: ExtensionContext, model = ctx.model) => {
		const warning = pastWindowWarning(rt.budget(model), modelKey(model));
		if (!warning) return;
		if (!recorded.has(warning)) rt.problem("budget", warning);
		recorded.add(warning);
		if (!ctx.hasUI || shown.has(warning)) return;
		shown.add(warning);
		ctx.ui.notify(`pi-fold: ${warning}`, "warning");
	};
	const reopen = (where: string) => (_e: unknown, ctx: ExtensionContext) =>
		void guard.run(where, (rt) => {
			rt.open(ctx.sessionManager);
			checkBudget(rt, ctx);
		});
	pi.on("session_start", reopen("session_start"));
	pi.on("session_tree", reopen("session_tree"));
	// A compaction replaced the window (Pi did it): a new baseline. The next request has no boundary
	// before it (Pi compacts right before it), so it is weighed as a prompt's first is: folded first when due.
	pi.on("session_compact", (e, ctx) => {
		reopen("session_compact")(e, ctx);
		guard.run("session_compact", (rt) => rt.early.promptStarted());
	});
	// /model or a model cycle: the next commit, the fence and status use the new model's budget.
	// Pi awaits it: a fold this plans is durable before the switch returns.
	pi.on("model_select", (e, ctx) =>
		guard.runAsync("model_select", async (rt) => {
			await rt.early.modelSelected(e.model, ctx);
			checkBudget(rt, ctx, e.model);
		}),
	);
}

/**
 * Without its core pi-fold does nothing and Pi compacts as usual: the person is told once, when the
 * first session with a UI starts, with the fix (status and /fold-status say it too).
 */
function onCoreMissing(pi: ExtensionAPI, guard: Guard): void {
	let told = false;
	pi.on("session_start", (_e, ctx) => {
		if (told || !ctx.hasUI || guard.runtime() || !guard.failure) return;
		told = true;
		try {
			ctx.ui.notify(`pi-fold is off: ${guard.failure}. Until then Pi compacts as it does without pi-fold.`, "error");
		} catch {
			// A UI that cannot notify: status and /fold-status say it.
		}
	});
}

/** Each request about to go out: recorded (a bridge may show on it), then fenced. */
function onRequests(pi: ExtensionAPI, guard: Guard, listener: BoundaryListener): void {
	pi.on("agent_start", () => void guard.run("agent_start", (rt) => rt.early.promptStarted()));
	// Pi's idle prompt-cache refresh: stopped when it costs more than what the next commit keeps of it.
	pi.on("cache_warming_decision", (e) => {
		const action = guard.run("cache_warming_decision", (rt) => rt.timing.warming(e));
		return action ? { action } : undefined;
	});
	pi.on("context", async (e, ctx) => {
		// A prompt's first request reaching the commit threshold is folded first (no boundary came before it).
		await guard.runAsync("context", (rt) => rt.early.beforeRequest(e.messages, ctx));
		// Read-only, except a /fold planned while idle (or just now), shown on the request it was asked before.
		const bridged = guard.run("context", (rt) => rt.recordRequest(e.messages, ctx.sessionManager), true);
		listener.update(ctx);
		return bridged ? { messages: bridged as typeof e.messages } : undefined;
	});
	pi.on("context_with_system", (e, ctx) => {
		const stop = guard.run("context_with_system", (rt) => rt.observeRequest(e.messages, ctx));
		if (!stop) return;
		// The fence: abort before the stream function runs, and say why out of band only.
		const message = fenceMessage(stop);
		try {
			ctx.abort();
			// Print and JSON modes have no UI: the reason goes to stderr, so a run never ends silently.
			tell(ctx, message, "error");
			const why = stop.orphans?.length
				? `${stop.orphans.length} tool result(s) without their call`
				: `~${stop.tokens} > ${stop.sendLimit} tokens`;
			ctx.ui.setStatus(FENCE_STATUS_KEY, `pi-fold: request stopped (${why})`);
		} catch (err) {
			guard.runtime()?.problem("fence", errorMessage(err));
		}
	});
}

/** What else reads the runtime at a turn boundary (the fold bar, clean chat), after the runtime. */
type TurnEndListener = { where: string; listener: (ctx: ExtensionContext) => void };

/** What else reads the runtime at a turn's end (the fold bar, clean chat), after the runtime. */
function runListeners(guard: Guard, afterTurnEnd: readonly TurnEndListener[], ctx: ExtensionContext): void {
	for (const { where, listener } of afterTurnEnd) {
		try {
			listener(ctx);
		} catch (err) {
			guard.made?.problem(where, errorMessage(err));
		}
	}
}

/**
 * pi-fold's turn_end handler, registered only while the runtime wants the boundary. Pi rebuilds a
 * boundary's context from its whole branch around every turn_end handler, appended to or not, and
 * skips the boundary when no extension listens; so a turn with nothing to append ends quietly
 * (quiet-turn.ts), and the UI's turn work runs in this one handler, after the runtime's.
 */
class BoundaryListener {
	readonly #pi: ExtensionAPI;
	readonly #guard: Guard;
	readonly #afterTurnEnd: readonly TurnEndListener[];
	#off: (() => void) | undefined;

	constructor(pi: ExtensionAPI, guard: Guard, afterTurnEnd: readonly TurnEndListener[]) {
		this.#pi = pi;
		this.#guard = guard;
		this.#afterTurnEnd = afterTurnEnd;
	}

	/** Listen at the next turn_end when the runtime wants it (or cannot tell: no runtime yet). Never throws. */
	update(ctx: ExtensionContext): void {
		// Unknown (no runtime, or it failed to say): listen, as without quiet turns.
		this.listen(this.#guard.run("boundary", (rt) => rt.turns.wanted(ctx.model)) ?? true);
	}

	/** Register or drop the turn_end handler; an API Pi has made stale is reported, never thrown. */
	listen(on: boolean): void {
		try {
			if (on && !this.#off) this.#off = this.#pi.on("turn_end", (e, c) => this.#turnEnd(e, c));
			else if (!on && this.#off) {
				const off = this.#off;
				this.#off = undefined;
				off();
			}
		} catch (err) {
			this.#guard.made?.problem("boundary", errorMessage(err));
		}
	}

	async #turnEnd(e: TurnEndEvent, ctx: ExtensionContext): Promise<TurnEndEventResult | undefined> {
		const mine = await this.#guard.runAsync("turn_end", (rt) => rt.turnEnd(e, ctx));
		runListeners(this.#guard, this.#afterTurnEnd, ctx);
		this.update(ctx);
		// Handlers chain: keep what earlier extensions proposed.
		return mine && mine.length > 0 ? { entries: [...e.entries, ...mine] } : undefined;
	}
}

/** Every message_end, the turn's start and the run's end: the turn followed, and a quiet turn ended. */
function onTurns(
	pi: ExtensionAPI,
	guard: Guard,
	listener: BoundaryListener,
	afterTurnEnd: readonly TurnEndListener[],
): void {
	pi.on("message_end", (e, ctx) => {
		guard.run("message_end", (rt) => rt.turns.messageEnded(e.message, ctx.model));
		listener.update(ctx);
	});
	// The last boundary's batch is in the session by now: read back first, so the fold bar shows it.
	const quietEnd = (where: string) => (_e: unknown, ctx: ExtensionContext) => {
		const changed = guard.run(where, (rt) => {
			const readBack = rt.readBack(ctx.sessionManager);
			return rt.turns.end(ctx) || readBack;
		});
		if (changed) runListeners(guard, afterTurnEnd, ctx);
		listener.update(ctx);
	};
	pi.on("turn_start", quietEnd("turn_start"));
	pi.on("agent_end", quietEnd("agent_end"));
}

/** A notice for the person: the UI when there is one, else stderr (print and JSON modes), never the window. */
function tell(ctx: ExtensionContext, message: string, type: "info" | "warning" | "error"): void {
	if (!ctx.hasUI) process.stderr.write(`${message}\n`);
	ctx.ui.notify(message, type);
}

/** Pi's compaction (declined, or answered by folding on an overflow). */
function onBoundaries(pi: ExtensionAPI, guard: Guard): void {
	pi.on("session_before_compact", (e, ctx) => {
		// An overflow plans a commit: answer (cancel Pi's compaction) only once its folds are durable.
		if (e.reason === "overflow") return guard.runAsync("session_before_compact", (rt) => rt.overflow(e, ctx));
		if (e.reason !== "threshold") return guard.run("session_before_compact", (rt) => rt.compactionRequested());
		return guard.runAsync("session_before_compact", async (rt) => {
			const answer = await rt.compactionThreshold(ctx);
			if (answer.notice) tell(ctx, answer.notice, "warning");
			return answer.result;
		});
	});
	let explained = false;
	pi.on("session_compact_failed", (e, ctx) => {
		const declined = guard.made?.compaction.thresholdCancelled;
		if (explained || e.reason !== "threshold" || !e.aborted || !declined) return;
		explained = true;
		try {
			ctx.ui.notify(CANCEL_EXPLAINED, "info");
		} catch {
			// No UI to tell: /fold-status says it too.
		}
	});
	// Only an armed overflow recovery answers here (one batch, one continuation); its folds were made
	// durable before session_before_compact answered, so nothing is left to wait for.
	pi.on("agent_before_settle", (e, ctx) => {
		const mine = guard.run("agent_before_settle", (rt) => rt.beforeSettle(e, ctx));
		return mine ? { ...mine, entries: mine.entries ?? e.entries } : undefined;
	});
}

export function registerRuntimeHooks(
	pi: ExtensionAPI,
	core: () => CoreState,
	settings: RuntimeSettings,
): RuntimeHandle {
	// The budget stays at or below where Pi's own compaction acts (read afresh: /settings changes it).
	settings.piCompaction ??= piCompactionReader(pi);
	const guard = new Guard(core, settings, (customType, data) => pi.appendEntry(customType, data));
	const afterTurnEnd: TurnEndListener[] = [];
	const listener = new BoundaryListener(pi, guard, afterTurnEnd);
	listener.listen(true); // the first boundary of a session decides
	onSessions(pi, guard);
	onCoreMissing(pi, guard);
	onRequests(pi, guard, listener);
	onTurns(pi, guard, listener, afterTurnEnd);
	onBoundaries(pi, guard);
	let actions: FoldActions | undefined;
	return {
		afterTurnEnd: (where, listener) => {
			afterTurnEnd.push({ where, listener });
		},
		get: () => guard.runtime(),
		reason: () => (guard.runtime() ? undefined : guard.failure),
		actions: () => {
			const rt = guard.runtime();
			if (rt && !actions) actions = new FoldActions(rt, (op) => pi.appendEntry(RECORD_TYPE, op));
			return actions;
		},
	};
}
