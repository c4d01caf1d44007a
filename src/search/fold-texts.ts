// The text views search reads, verified as peek verifies them: a committed or expanded fold from
// the store (every record and leaf object checked against its SHA-256), a pending mark from the
// session's entries re-hashed by the core. Entry texts are kept between searches by their leaf
// hash (content-addressed, so a fold consolidated later reuses them), up to FOLD_TEXTS_MAX_BYTES,
// the least recently used dropped first: a session whose folds hold more text than that is read
// again, verified again, where it was dropped. What a fold's own view looks like (which leaves sit
// inside which nested fold) is kept per fold (small: a fold id per leaf). A fold that cannot be
// read is reported by id with the store's reason, and its child folds are tried one by one, so one
// bad object hides only the fold that holds it.
import type { PiFoldCore } from "../../bindings/index.ts";
import type { FoldId, HexHash } from "../fold-types.ts";
import type { FoldLattice, FoldView } from "../lattice/index.ts";
import { entryText } from "../session/entry-text.ts";
import { innermostOwners, readFoldSource, VIEW_SEPARATOR, type ViewPart, viewLayout } from "../session/fold-source.ts";
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

/** The most entry text (UTF-8 bytes) the views keep between searches. */
export const FOLD_TEXTS_MAX_BYTES = 32 * 1024 * 1024;

/** One root fold's leaves as views, in order (undefined: its fold could not be read), and what could not be read. */
interface RootViews {
	views: (EntryView | undefined)[];
	problems: ReadProblem[];
}

export class FoldTexts {
	readonly #maxBytes: number;
	/** Entry views by leaf hash, least recently used first. */
	readonly #byHash = new Map<HexHash, EntryView>();
	#bytes = 0;
	/** Verified folds (not pending): the fold whose record holds each of its leaves, in order. */
	readonly #owners = new Map<FoldId, FoldId[]>();
	/** The session these views belong to (a new session starts over). */
	#session: string | undefined;

	constructor(maxBytes = FOLD_TEXTS_MAX_BYTES) {
		this.#maxBytes = maxBytes;
	}

	/** Bytes of entry text held now (at most maxBytes between searches). */
	get bytes(): number {
		return this.#bytes;
	}

	get maxBytes(): number {
		return this.#maxBytes;
	}

	/** The view kept for a leaf hash, if it is still kept. */
	entry(hash: HexHash): EntryView | undefined {
		return this.#byHash.get(hash);
	}

	/**
	 * The views of every leaf of the root fold `root`, read and verified where they are not kept
	 * (outermost first). The caller holds them for as long as it reads them: keeping them here is
	 * only for the next search.
	 */
	root(open: Readonly<Open>, core: PiFoldCore, root: FoldView): RootViews {
		if (this.#session !== open.sessionId) {
			this.#byHash.clear();
			this.#bytes = 0;
			this.#owners.clear();
			this.#session = open.sessionId;
		}
		const lattice = open.lattice;
		const out: RootViews = { views: new Array<EntryView | undefined>(root.end - root.start), problems: [] };
		const visit = (f: FoldView): void => {
			const leaves = lattice.leavesOf(f.id) ?? [];
			if (this.#ready(f, leaves)) {
				leaves.forEach((l, i) => {
					out.views[f.start - root.start + i] = this.#use(l.hash);
				});
				return;
			}
			const read = readFoldSource({ ...open, core }, f.id);
			if (read.ok) {
				read.source.leaves.forEach((leaf, i) => {
					const hash = leaves[i]?.hash;
					if (hash) out.views[f.start - root.start + i] = this.#use(hash) ?? this.#keep(hash, entryText(leaf.text));
				});
				if (f.state !== "pending")
					this.#ownersFrom(
						lattice,
						f,
						read.source.leaves.map((l) => l.fold),
					);
				return;
			}
			out.problems.push({ fold: f.id, reason: read.reason });
			for (const c of f.children) {
				const sub = c.type === "fold" ? lattice.get(c.id) : undefined;
				if (sub) visit(sub);
			}
		};
		visit(root);
		this.#trim();
		return out;
	}

	/** Every leaf's text is here and (for a standing fold) its view's shape is known. */
	#ready(f: FoldView, leaves: readonly { hash: HexHash }[]): boolean {
		if (f.state !== "pending" && !this.#owners.has(f.id)) return false;
		return leaves.every((l) => this.#byHash.has(l.hash));
	}

	/** A kept view, now the most recently used. */
	#use(hash: HexHash): EntryView | undefined {
		const view = this.#byHash.get(hash);
		if (view) {
			this.#byHash.delete(hash);
			this.#byHash.set(hash, view);
		}
		return view;
	}

	#keep(hash: HexHash, text: string): EntryView {
		const view = { text, bytes: utf8Length(text) };
		this.#byHash.set(hash, view);
		this.#bytes += view.bytes;
		return view;
	}

	/** Drop the least recently used views until at most maxBytes are kept. */
	#trim(): void {
		for (const [hash, view] of this.#byHash) {
			if (this.#bytes <= this.#maxBytes) break;
			this.#byHash.delete(hash);
			this.#bytes -= view.bytes;
		}
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
	 * Where each leaf of `f` starts in `f`'s text view (UTF-8 bytes), as peek lays it out, from the
	 * views of its leaves (`viewOf(i)`: leaf i of `f`); undefined when the fold is not verified.
	 */
	offsets(lattice: FoldLattice, f: FoldView, viewOf: (leaf: number) => EntryView | undefined): number[] | undefined {
		const leaves = lattice.leavesOf(f.id) ?? [];
		// A standing fold under a pending mark was read with the mark (its shape not learnt from a
		// record): its shape is the lattice's, as for the mark.
		const owners =
			f.state === "pending" ? innermostOwners(lattice, f) : (this.#owners.get(f.id) ?? innermostOwners(lattice, f));
		if (!owners || owners.length !== leaves.length) return undefined;
		const out = new Array<number>(leaves.length).fill(0);
		let at = 0;
		let first = true;
		for (const part of viewLayout(f.id, owners, lattice) as ViewPart[]) {
			if (!first) at += SEPARATOR_BYTES;
			first = false;
			if ("marker" in part) at += utf8Length(part.marker);
			else {
				const view = viewOf(part.leaf);
				if (!view) return undefined;
				out[part.leaf] = at;
				at += view.bytes;
			}
		}
		return out;
	}
}
