// What waits for the next turn boundary: window edits asked for between boundaries (an expand or
// a refold, from the agent's tool or a person's editor), peeks whose own results are to be marked
// or pinned once the model has seen them, and a person's /fold. Only the boundary (and a /fold
// planned while Pi is idle) takes them; everything else reads them.
import type { FoldId } from "../vocabulary.ts";

export type StagedEdit = { op: "expand" | "refold"; id: FoldId };

/** A peek's request about its own tool result, carried out at a later boundary. */
export interface PeekFollowUp {
	toolCallId: string;
	ephemeral: boolean;
}

/** A person's /fold: commit staged marks (all, or only these) at the next boundary. */
export interface FoldRequest {
	only?: ReadonlySet<FoldId>;
}

export class Staged {
	#edits: StagedEdit[] = [];
	#peeks: PeekFollowUp[] = [];
	#fold: FoldRequest | undefined;

	/** Window edits for the next boundary, in order. */
	get edits(): readonly StagedEdit[] {
		return this.#edits;
	}

	stage(edit: StagedEdit): void {
		this.#edits.push(edit);
	}

	/** The staged edits, handed to the boundary that applies them (none are left). */
	takeEdits(): StagedEdit[] {
		const edits = this.#edits;
		this.#edits = [];
		return edits;
	}

	get peeks(): readonly PeekFollowUp[] {
		return this.#peeks;
	}

	followPeek(peek: PeekFollowUp): void {
		this.#peeks.push(peek);
	}

	/** The peeks still waiting after a boundary carried out the others. */
	keepPeeks(waiting: PeekFollowUp[]): void {
		this.#peeks = waiting;
	}

	/** /fold: commit at the next boundary; `only` restricts it to those marks. */
	requestFold(only?: ReadonlySet<FoldId>): void {
		this.#fold = only ? { only } : {};
	}

	get fold(): FoldRequest | undefined {
		return this.#fold;
	}

	/** The /fold request, handed to the commit that carries it out (none is left). */
	takeFold(): FoldRequest | undefined {
		const fold = this.#fold;
		this.#fold = undefined;
		return fold;
	}

	/**
	 * What a boundary took, put back: its batch never reached the session (an extension replaced it,
	 * Pi refused it), so the edits, peeks and /fold it carried wait for the next boundary again,
	 * before anything staged since.
	 */
	putBack(taken: { edits: readonly StagedEdit[]; peeks: readonly PeekFollowUp[]; fold?: FoldRequest }): void {
		this.#edits = [...taken.edits, ...this.#edits];
		const waiting = new Set(this.#peeks.map((p) => p.toolCallId));
		this.#peeks = [...taken.peeks.filter((p) => !waiting.has(p.toolCallId)), ...this.#peeks];
		if (taken.fold && !this.#fold) this.#fold = taken.fold;
	}
}
