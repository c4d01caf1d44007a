// What the agent's tool, the commands and the UI see of the runtime: one read-only view (the open
// session's lattice and context, what is staged, the occupancy, status, the budget and calibration
// of a model), and the port through which the operations on folds change it. Both are interfaces
// the runtime implements, so nothing on this side reaches into the runtime's state.

import type { ExtensionContext, SessionEntry } from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import type { FoldLattice, LatticeEntry } from "../lattice/index.ts";
import type { Budget } from "../meter/budget.ts";
import type { EntryTokens } from "../meter/entry-tokens.ts";
import type { Model } from "../meter/meter.ts";
import type { Occupancy } from "../meter/occupancy.ts";
import type { JournalOp } from "../session/journal.ts";
import type { Open } from "../session/open-session.ts";
import type { PeekFollowUp, StagedEdit } from "../session/staged.ts";
import type { FoldId, Outcome, ProblemState, Thresholds } from "../vocabulary.ts";
import type { FoldActions } from "./actions.ts";
import type { RuntimeStatus } from "./status.ts";

export type { FoldChild, FoldView, LatticeEntry, WindowItem } from "../lattice/index.ts";
export type { Budget, BudgetLimit, ModelLimits, PriceTierLimit } from "../meter/budget.ts";
export type { Model } from "../meter/meter.ts";
export type { Occupancy } from "../meter/occupancy.ts";
export type { ContextEntries } from "../session/context-entries.ts";
export type { StagedEdit } from "../session/staged.ts";

/** The lattice's reading side: folds, the window and pins, never a change. */
export type ReadonlyLattice = Pick<
	FoldLattice,
	| "entries"
	| "get"
	| "folds"
	| "pending"
	| "pins"
	| "window"
	| "visibleRoots"
	| "foldOf"
	| "leavesOf"
	| "position"
	| "foldCount"
>;

/** The open session as a reader sees it. */
export interface OpenView {
	readonly lattice: ReadonlyLattice;
	readonly context: {
		readonly entries: readonly LatticeEntry[];
		readonly sources: readonly SessionEntry[];
		/** Earlier commits' notices, hidden from the window though raw to the lattice. */
		readonly hidden?: ReadonlySet<string>;
	};
	readonly sessionId: string;
}

/** The runtime, read-only. */
export interface RuntimeView {
	readonly core: PiFoldCore;
	/** The open session; undefined when none is open. */
	readonly view: OpenView | undefined;
	/** Window edits staged for the next turn boundary, in order. */
	readonly staged: readonly StagedEdit[];
	/** A /fold waits for the next boundary. */
	readonly foldRequested: boolean;
	/** The last calibrated estimate of the next request (at a turn boundary or a commit). */
	readonly occupancy: Occupancy | null;
	status(): RuntimeStatus;
	/** The serving budget of `model` (Pi's ctx.model): the one every share divides by. */
	budget(model: Model): Budget;
	/** The calibration ratio real/estimated for `model`: the one every estimate is scaled by. */
	ratio(model: Model): number;
	/** The one thing a reader may add: a problem it met, for status. */
	problem(where: string, reason: string, state?: ProblemState): void;
}

/** What the operations on folds read and change in the runtime (the runtime implements it). */
export interface RuntimePort extends RuntimeView {
	readonly view: Readonly<Open> | undefined;
	readonly settings: { readonly thresholds: Thresholds };
	/** What the last occupancy measurement missed of the open lattice's window (uncalibrated tokens). */
	readonly unmeasuredTokens: number;
	readonly entryTokens: EntryTokens;
	/** The lattice as the next boundary will make it: the open one plus the staged edits. */
	stagedLattice(): FoldLattice | undefined;
	/**
	 * Make validated ops that leave the window as it is part of the session: their records appended
	 * with `append`, and `next` (the open lattice with them applied) adopted when they are read back.
	 */
	record(ops: readonly JournalOp[], next: FoldLattice, append: (op: JournalOp) => void): void;
	stage(edit: StagedEdit): void;
	followPeek(peek: PeekFollowUp): void;
	/** Entries withdrawn from folding: the frontier leaves them raw until an explicit mark. */
	withdraw(entryIds: readonly string[]): void;
	requestFold(only?: ReadonlySet<FoldId>): void;
	/** A /fold asked for while Pi is idle: planned now and shown on the next request. */
	prepareFold(ctx: ExtensionContext): Promise<Outcome<object>>;
}

/** How the tool, the commands and the UI reach the runtime of their extension instance. */
export interface FoldHandle {
	get(): RuntimeView | undefined;
	/** Why there is no runtime, if there is none. */
	reason(): string | undefined;
	/** The operations on folds, once the runtime runs. */
	actions(): FoldActions | undefined;
	/**
	 * Run `listener` as every turn ends, right after the runtime's own work for it and inside the same
	 * handler (turn_end when pi-fold's boundary ran, else the next turn_start or agent_end): Pi
	 * rebuilds a boundary's context around each turn_end handler, so the extension never adds one
	 * of its own. A listener only reads the runtime; one that throws is reported.
	 */
	afterTurnEnd(where: string, listener: (ctx: ExtensionContext) => void): void;
}
