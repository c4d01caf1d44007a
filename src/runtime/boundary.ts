// What a turn boundary appends before any commit, in this order: the window repair if one is due
// (armed when the session opened; a request may have shown it already), the staged window edits (expand, refold), what peeks
// asked for their own results, and the frontier's new marks over what the model has seen. Each is
// planned on the boundary's working copy of the open session (its own lattice): the open session
// itself changes only when a sync reads the batch back. Also here: oversized tool results of the
// turn become read-only evidence files.
import type {
	ContextEditEntryDraft,
	ProjectedSessionEntry,
	SessionBoundaryDraft,
	TurnEndEvent,
} from "@earendil-works/pi-coding-agent";
import type { PiFoldCore } from "../../bindings/index.ts";
import { projectionWith } from "../edits/drafts.ts";
import type { EarlyWindow } from "../edits/early-window.ts";
import { editedTargets, windowRepair } from "../edits/reconcile.ts";
import type { FoldLattice } from "../lattice/index.ts";
import { windowCosts } from "../meter/arithmetic.ts";
import type { Meter } from "../meter/meter.ts";
import type { RewriteRecorder } from "../meter/recorder.ts";
import { FrontierPass } from "../policy/frontier-pass.ts";
import { peekFollowUps, stagedBatch } from "../policy/staging.ts";
import { type EvidenceStatus, EvidenceWriter, evidenceDirFor, toolResultText } from "../session/evidence.ts";
import { type JournalOp, recordDraft } from "../session/journal.ts";
import type { Open, OpenCopy, SessionView } from "../session/open-session.ts";
import { type LeafPrewriter, leavesOf } from "../session/prewrite.ts";
import type { PeekFollowUp, Staged, StagedEdit } from "../session/staged.ts";
import type { FoldKind, ProblemState, RuntimeSettings } from "../vocabulary.ts";

/** What the problems of a window that drifted from the folds wait for: the repair, appended at a boundary. */
export const WINDOW_REPAIR = "window repair";

interface BoundaryDeps {
	core: PiFoldCore;
	settings: RuntimeSettings;
	meter: Meter;
	recorder: RewriteRecorder;
	staged: Staged;
	repair: EarlyWindow;
	prewriter: LeafPrewriter;
	/** Entries withdrawn from folding (the frontier leaves them alone). */
	withdrawn(): ReadonlySet<string>;
	problem(where: string, reason: string, state?: ProblemState): void;
	/** What a problem reported `{ until }` waited for is done. */
	settle(until: string): void;
	/** Window tokens this boundary's own edits add, which its measurement (taken before them) misses. */
	unmeasured(lattice: FoldLattice, tokens: number): void;
}

interface BoundaryEdits {
	/** Everything in order: repair, staged edits, peek follow-ups, new marks. */
	drafts: SessionBoundaryDraft[];
	/** The boundary's projection as the repair leaves it: what a commit plans over. */
	projection: readonly ProjectedSessionEntry[];
	/** The repair's edits, and whether a request already showed them. */
	repair: { drafts: ContextEditEntryDraft[]; shown: boolean };
	/** Whether staged edits rewrite this boundary's request (a commit then waits for the next). */
	edited: boolean;
	/** What the boundary took of the staged edits and peeks: put back if its batch never lands. */
	taken: { edits: StagedEdit[]; peeks: PeekFollowUp[] };
}

export class Boundary {
	readonly #deps: BoundaryDeps;
	readonly #frontier = new FrontierPass();
	#evidence: EvidenceWriter | undefined;

	constructor(deps: BoundaryDeps) {
		this.#deps = deps;
	}

	/**
	 * `copy` (a working copy of the open session, or the open session itself again) is what the
	 * frontier works on from now: its cursor goes with it (the copy is what the session will be, once
	 * adopted; dropped, the open session's frontier starts again from the beginning).
	 */
	workOn<T extends Open>(from: Pick<Open, "lattice">, copy: T): T {
		this.#frontier.carry(from.lattice, copy.lattice);
		return copy;
	}

	/**
	 * On every open: compare the window Pi projects with the one the folds describe; a difference
	 * (a commit batch cut short by a crash, or /tree into one) is armed as a repair, shown on the
	 * next request and appended at the next boundary.
	 */
	armRepair(open: Open, sm: SessionView): void {
		const { repair, problem } = this.#deps;
		repair.take();
		const found = windowRepair(
			open.lattice,
			open.context.sources,
			sm.buildSessionProjection().entries,
			editedTargets(open.raw),
		);
		if (found.drafts.length === 0) return;
		const until = { until: WINDOW_REPAIR };
		problem(
			"open",
			`${found.drafts.length} entries of the window differ from the committed folds (a commit cut short, or /tree into one); repaired at the next turn boundary`,
			until,
		);
		for (const r of found.reasons.slice(0, 10)) problem("open", r, until);
		repair.arm(found.drafts);
	}

	/**
	 * The edits before any commit, planned on `work` (its lattice moves on with them). `marks`
	 * false: no new marks now (a shown /fold commits as it was planned).
	 */
	edits(work: OpenCopy, e: TurnEndEvent, marks: boolean): BoundaryEdits {
		// A window repair comes first; what follows is planned over the window it makes.
		const repair = this.#repairDrafts(work, e.context.contextEntries);
		const projection =
			repair.drafts.length > 0 ? projectionWith(repair.drafts, e.context.contextEntries) : e.context.contextEntries;
		const edits = this.#deps.staged.takeEdits();
		const peeks = [...this.#deps.staged.peeks];
		const staged = this.#stagedEdits(work, projection, edits);
		const drafts = [
			...repair.drafts,
			...staged.drafts,
			...this.#peekFollowUps(work, e.messageEntryId),
			...(marks ? this.markFrontier(work, e.messageEntryId).map(recordDraft) : []),
		];
		// Keyed to the lattice the boundary ends with: the later steps change marks, not the window.
		if (staged.drafts.length > 0) this.#deps.unmeasured(work.lattice, staged.grown);
		return { drafts, projection, repair, edited: staged.drafts.length > 0, taken: { edits, peeks } };
	}

	/**
	 * The window repair found at open, as edits over this boundary's projection (computed again:
	 * entries may have come since). Shown already if a request went out since; else announced.
	 */
	#repairDrafts(open: Open, projection: readonly ProjectedSessionEntry[]): BoundaryEdits["repair"] {
		const armed = this.#deps.repair.take();
		if (!armed) return { drafts: [], shown: false };
		const repair = windowRepair(open.lattice, open.context.sources, projection, editedTargets(open.raw));
		if (repair.drafts.length > 0 && !armed.shown) this.#deps.recorder.announce("repair");
		// Appended with this boundary's entries: what the drift's problems waited for is done.
		this.#deps.settle(WINDOW_REPAIR);
		return { drafts: repair.drafts, shown: armed.shown };
	}

	/** The staged window edits as one batch over the boundary's projection (applied to `work`). */
	#stagedEdits(
		work: OpenCopy,
		projection: readonly ProjectedSessionEntry[],
		edits: StagedEdit[],
	): { drafts: SessionBoundaryDraft[]; grown: number } {
		const deps = this.#deps;
		const batch = stagedBatch(work.lattice, work.context, projection, edits);
		if (!batch) return { drafts: [], grown: 0 };
		for (const p of batch.problems) deps.problem("staged edits", p);
		if (batch.ops.length === 0) return { drafts: [], grown: 0 };
		const costs = (l: FoldLattice) => windowCosts(l, work.context, deps.meter.entryTokens).total;
		const grown = costs(batch.lattice) - costs(work.lattice);
		work.lattice = batch.lattice;
		deps.recorder.announce("expand");
		return { drafts: [...batch.drafts, ...batch.ops.map(recordDraft)], grown };
	}

	/** Peeks the model has now seen: their batch is marked for the next commit, or pinned (on `work`). */
	#peekFollowUps(work: OpenCopy, messageEntryId: string): SessionBoundaryDraft[] {
		const { staged } = this.#deps;
		if (staged.peeks.length === 0) return [];
		const done = peekFollowUps(work.lattice, work.context, staged.peeks, messageEntryId);
		for (const p of done.problems) this.#deps.problem("peek", p);
		if (done.lattice !== work.lattice) work.lattice = done.lattice;
		staged.keepPeeks(done.waiting);
		return done.ops.map(recordDraft);
	}

	/**
	 * Frontier pass over what the model has seen: its marks on `work` (the records to append: a
	 * boundary's drafts, or entries of their own when a turn ends quietly), their leaves prewritten
	 * in the background.
	 */
	markFrontier(work: OpenCopy, messageEntryId: string, pressed = false): JournalOp[] {
		const deps = this.#deps;
		// Pressed (the window is past its budget): every finished unit the model has seen is cut,
		// however small, so that nothing but the batch in progress is left that could not fold.
		const settings = pressed
			? { ...deps.settings, thresholds: { ...deps.settings.thresholds, minFoldChars: 1 } }
			: deps.settings;
		const requests = this.#frontier.propose(work, messageEntryId, settings, deps.withdrawn());
		if (requests.length === 0) return [];
		const lattice = work.lattice;
		const marked = lattice.markMany(requests);
		if (!marked.ok) {
			deps.problem("frontier", marked.reason);
			return [];
		}
		deps.prewriter.start(work.store, leavesOf(lattice, work.context, marked.ids, work.records));
		return marked.ids.map((id, i) => {
			const { kind, from, to } = requests[i];
			return { v: 1, op: "mark", id, kind: kind as FoldKind, from, to };
		});
	}

	/** Oversized tool results also become read-only evidence files (the writer never throws). */
	ingestEvidence(results: TurnEndEvent["toolResults"], sm: SessionView): void {
		if (results.length === 0) return;
		const dir = evidenceDirFor({ sessionFile: sm.getSessionFile(), sessionId: sm.getSessionId() });
		if (!this.#evidence || this.#evidence.dir !== dir)
			this.#evidence = new EvidenceWriter({ dir, core: this.#deps.core });
		for (const r of results) this.#evidence.write(r.toolCallId, r.toolName, toolResultText(r));
	}

	get evidence(): EvidenceStatus | null {
		return this.#evidence?.status() ?? null;
	}
}
