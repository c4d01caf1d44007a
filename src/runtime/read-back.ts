// Reading the session back: the one way the runtime's picture of the session moves on. What a
// handler hands Pi is proposed here with the state it makes (session/proposals.ts); the open
// session's sync then finds what Pi appended and adopts that state, or drops the proposal, which is
// said and whose staged work waits for the next boundary. An adopted commit is logged, its rewrite
// announced to the recorder and its landing estimate kept.

import type { FoldLattice } from "../lattice/index.ts";
import type { Occupancy } from "../meter/occupancy.ts";
import { occupancyOf } from "../meter/occupancy.ts";
import type { RewriteRecorder } from "../meter/recorder.ts";
import type { CommitLog } from "../operations/status.ts";
import { type JournalOp, recordDraft } from "../session/journal.ts";
import type { Open, OpenSession, SessionView } from "../session/open-session.ts";
import { Proposals } from "../session/proposals.ts";
import type { Staged } from "../session/staged.ts";
import type { ProblemState } from "../vocabulary.ts";
import type { ProposalEffects } from "./commit.ts";

interface ReadBackDeps {
	session: OpenSession;
	staged: Staged;
	recorder: Pick<RewriteRecorder, "announce">;
	problem(where: string, reason: string, state?: ProblemState): void;
	/** After a rebuild: a new baseline for the recorder, and the window checked against the folds. */
	opened(open: Open | undefined, sm: SessionView): void;
	/** An adopted commit's landing estimate: the next request's occupancy. */
	landed(occupancy: Occupancy): void;
}

export class SessionReadBack {
	/** What pi-fold asked Pi to append, with the state it makes: adopted or dropped at the next sync. */
	readonly proposals = new Proposals<ProposalEffects>();
	readonly #deps: ReadBackDeps;
	/** The session as the last event showed it: what an operation's records are read back from. */
	#sm: SessionView | undefined;
	#commits: CommitLog[] = [];

	constructor(deps: ReadBackDeps) {
		this.#deps = deps;
	}

	/** The commits the session holds, as this process adopted them. */
	get commits(): readonly CommitLog[] {
		return this.#commits;
	}

	/** (Re)build everything from the session: session_start, session_tree, a rewritten context. */
	open(sm: SessionView): void {
		this.#sm = sm;
		// A proposal of the session before is the past: what reached the session is read from it now.
		this.proposals.take();
		this.#deps.opened(this.#deps.session.open(sm), sm);
	}

	/**
	 * Bring the open session in step with Pi's (the one writer of the lattice): new entries
	 * appended, a proposal Pi appended adopted, one it never appended dropped and said (what it took
	 * waits for the next boundary), anything else rebuilt.
	 */
	sync(sm: SessionView): Open | undefined {
		this.#sm = sm;
		const synced = this.#deps.session.sync(sm, this.proposals);
		if (synced.adopted) this.#adopted(synced.adopted.then);
		if (synced.dropped) {
			this.#deps.problem("boundary", synced.dropped.message, "repaired");
			const taken = synced.dropped.proposal.then.taken;
			if (taken) this.#deps.staged.putBack(taken);
		}
		if (synced.rebuilt) this.#deps.opened(synced.open, sm);
		return synced.open;
	}

	/**
	 * A turn's start or the run's end: what the last boundary proposed is read back (Pi has appended
	 * it by now). Whether that adopted or dropped anything, so what reads the runtime looks again.
	 */
	readBack(sm: SessionView): boolean {
		const pending = this.proposals.pending !== undefined;
		this.sync(sm);
		return pending && this.proposals.pending === undefined;
	}

	/**
	 * An operation's records (a mark, a brief, a pin): proposed with the lattice they make, appended
	 * with `append` (Pi's appendEntry), and read back, which is when the lattice takes them.
	 */
	record(ops: readonly JournalOp[], next: FoldLattice, append: (op: JournalOp) => void): void {
		const { version, syncedLeaf } = this.#deps.session;
		this.proposals.propose(syncedLeaf, version, ops.map(recordDraft), { lattice: next }, {});
		for (const op of ops) append(op);
		if (this.#sm) this.sync(this.#sm);
	}

	/** A proposal is the session's now: a commit's log kept, its rewrite announced, its landing measured. */
	#adopted(effects: ProposalEffects): void {
		const c = effects.commit;
		if (!c) return;
		const reason = c.log.reason;
		if (c.announce) this.#deps.recorder.announce(reason === "threshold" || reason === "cost" ? "commit" : reason);
		this.#deps.landed(occupancyOf(c.log.after, c.log.budget));
		this.#commits.push(c.log);
	}
}
