// The text views search reads, verified as peek verifies them and kept so each fold is read once:
// a committed or expanded fold from the store (every record and leaf object checked against its
// SHA-256, on its first search), a pending mark from the session's entries re-hashed by the core.
// Entry texts are kept by their leaf hash (content-addressed, so a fold consolidated later reuses
// them); what a fold's own view looks like (which leaves sit inside which nested fold) is kept per
// fold. A fold that cannot be read is reported by id with the store's reason, and its child folds
// are tried one by one, so one bad object hides only the fold that holds it.
import type { PiFoldCore } from "../../bindings/index.ts";
import type { FoldId, HexHash } from "../fold-types.ts";
import type { FoldLattice, FoldView } from "../lattice/index.ts";
import {
	entryText,
	innermostOwners,
	readFoldSource,
	VIEW_SEPARATOR,
	type ViewPart,
	viewLayout,
} from "../session/fold-source.ts";
import type { Open } from "../session/open-session.ts";
import { utf8Length } from "../values/text-fit.ts";

/** One entry as the text view shows it, and its length in UTF-8 bytes. */
export interface EntryView {
	text: string;
	bytes: number;
}

export interface ReadProblem {
	fold: FoldId;
	reason: string;
}

const SEPARATOR_BYTES = utf8Length(VIEW_SEPARATOR);

export class FoldTexts {
	readonly #byHash = new Map<HexHash, EntryView>();
	/** Verified folds (not pending): the fold whose record holds each of its leaves, in order. */
	readonly #owners = new Map<FoldId, FoldId[]>();
	/** The session these views belong to (a new session starts over). */
	#session: string | undefined;

	/** Bytes of entry text held, for status and benchmarks. */
	get bytes(): number {
		let n = 0;
		for (const v of this.#byHash.values()) n += v.bytes;
		return n;
	}

	entry(hash: HexHash): EntryView | undefined {
		return this.#byHash.get(hash);
	}

	/**
	 * Read and verify every fold not read yet (outermost first). Returns the folds that could not
	 * be read, each with the reason peek would give.
	 */
	ensure(open: Readonly<Open>, core: PiFoldCore): ReadProblem[] {
		if (this.#session !== open.sessionId) {
			this.#byHash.clear();
			this.#owners.clear();
			this.#session = open.sessionId;
		}
		const lattice = open.lattice;
		const problems: ReadProblem[] = [];
		const visit = (f: FoldView): void => {
			if (this.#ready(lattice, f)) return;
			const read = readFoldSource({ ...open, core }, f.id);
			if (read.ok) {
				const hashes = lattice.leavesOf(f.id) ?? [];
				read.source.leaves.forEach((leaf, i) => {
					const hash = hashes[i]?.hash;
					if (hash && !this.#byHash.has(hash)) {
						const text = entryText(leaf.text);
						this.#byHash.set(hash, { text, bytes: utf8Length(text) });
					}
				});
				if (f.state !== "pending")
					this.#ownersFrom(
						lattice,
						f,
						read.source.leaves.map((l) => l.fold),
					);
				return;
			}
			problems.push({ fold: f.id, reason: read.reason });
			for (const c of f.children) {
				const sub = c.type === "fold" ? lattice.get(c.id) : undefined;
				if (sub) visit(sub);
			}
		};
		for (const f of lattice.folds()) if (f.parent === null) visit(f);
		return problems;
	}

	/** Every leaf's text is here and (for a standing fold) its view's shape is known. */
	#ready(lattice: FoldLattice, f: FoldView): boolean {
		if (f.state !== "pending" && !this.#owners.has(f.id)) return false;
		return (lattice.leavesOf(f.id) ?? []).every((l) => this.#byHash.has(l.hash));
	}

	/** A verified read of `f` also verified every standing fold inside it: keep their shapes too. */
	#ownersFrom(lattice: FoldLattice, f: FoldView, owners: FoldId[]): void {
		this.#owners.set(f.id, owners);
		const walk = (parent: FoldView) => {
			for (const c of parent.children) {
				if (c.type !== "fold") continue;
				const sub = lattice.get(c.id);
				if (!sub) continue;
				if (sub.state !== "pending") this.#owners.set(sub.id, owners.slice(sub.start - f.start, sub.end - f.start));
				walk(sub);
			}
		};
		walk(f);
	}

	/**
	 * Where each leaf of `f` starts in `f`'s text view (UTF-8 bytes), as peek lays it out; undefined
	 * when the fold is not verified (see ensure).
	 */
	offsets(lattice: FoldLattice, f: FoldView): number[] | undefined {
		const leaves = lattice.leavesOf(f.id) ?? [];
		const owners = f.state === "pending" ? innermostOwners(lattice, f) : this.#owners.get(f.id);
		if (!owners || owners.length !== leaves.length) return undefined;
		const out = new Array<number>(leaves.length).fill(0);
		let at = 0;
		let first = true;
		for (const part of viewLayout(f.id, owners, lattice) as ViewPart[]) {
			if (!first) at += SEPARATOR_BYTES;
			first = false;
			if ("marker" in part) at += utf8Length(part.marker);
			else {
				const view = this.#byHash.get(leaves[part.leaf].hash);
				if (!view) return undefined;
				out[part.leaf] = at;
				at += view.bytes;
			}
		}
		return out;
	}
}
