// The folds of a session's branch as a tree, for the view: what pi-fold's records on the branch
// say (marks, commits, consolidations, expands, pins: the one reduction peek and unfold read them
// through, session/journal-state.ts) and what the store holds for each fold
// (its record and every leaf object), read as found and checked, nothing written. A fold whose
// record or a leaf is missing or does not verify is shown as damaged, with the reason.
import type { FoldRecord } from "../fold-types.ts";
import { type JournalFold, type JournalState, reduceJournal } from "../session/journal-state.ts";
import { decodeRecord, type FoldStore } from "../store/index.ts";
import { errorMessage } from "../vocabulary.ts";
import type { SessionBranch } from "./session-branch.ts";
import { storeBytes } from "./store-bytes.ts";
import type { FoldNode } from "./view-data.ts";

/** A fold to read: one the records name (with its state there), or one found inside another's record. */
type Known = Pick<JournalFold, "id" | "brief" | "record" | "commit" | "kind" | "from" | "to"> & {
	state?: JournalFold["state"];
};

/** The brief's first line (without the fold-id tag the tree shows anyway) and its index lines. */
function splitBrief(brief: string): { brief: string; index: string[] } {
	const [head = "", ...rest] = brief.split("\n");
	return { brief: head.replace(/^\[pi-fold [0-9a-f]+\] /, ""), index: rest.filter((l) => l.trim() !== "") };
}

/** Reads a record as found; its problem when it is missing, does not verify or does not decode. */
function readRecord(store: FoldStore, hash: string): { record?: FoldRecord; problem?: string } {
	const found = storeBytes(store, "record", hash);
	if ("problem" in found) return { problem: found.problem };
	if (!found.verified) return { problem: `record ${hash} does not verify (its bytes hash to something else)` };
	try {
		return { record: decodeRecord(found.bytes, `record ${hash}`) };
	} catch (err) {
		return { problem: errorMessage(err) };
	}
}

function leafProblem(store: FoldStore, hash: string, entryId: string): string | undefined {
	const found = storeBytes(store, "object", hash);
	if ("problem" in found) return `the object of entry ${entryId}: ${found.problem}`;
	if (!found.verified) return `the object of entry ${entryId} (${hash}) does not verify`;
	return undefined;
}

type Size = { entries: number; raw: number; from: string; to: string };
const EMPTY: Size = { entries: 0, raw: 0, from: "", to: "" };
/** The bounds of the store's own verification walk: nesting depth, and leaves a fold expands to. */
const MAX_DEPTH = 1024;
const MAX_LEAVES = 1_000_000;

export interface FoldTree {
	folds: FoldNode[];
	pinned: string[];
}

/** Every fold the branch's records name and every fold inside them, each read once from the store. */
function readNodes(
	state: JournalState,
	store: FoldStore,
	briefTokens: (text: string) => number,
): Map<string, FoldNode> {
	const { folds } = state;
	const nodes = new Map<string, FoldNode>();
	const childOf = new Map<string, string>();
	const queue: Known[] = [...folds.values()];
	for (let k = 0; k < queue.length; k++) {
		const known = queue[k];
		if (nodes.has(known.id)) continue;
		const { brief, index } = splitBrief(known.brief);
		const node: FoldNode = {
			id: known.id,
			kind: known.kind ?? "fold",
			state: known.state ?? "committed",
			brief,
			index,
			children: [],
			entries: 0,
			from: known.from ?? "",
			to: known.to ?? "",
			rawTokens: 0,
			shownTokens: known.brief === "" ? 0 : briefTokens(known.brief),
			...(known.commit === undefined ? {} : { commit: known.commit }),
		};
		nodes.set(known.id, node);
		if (known.record === undefined) continue;
		node.record = known.record;
		const read = readRecord(store, known.record);
		const r = read.record;
		if (!r || r.id !== known.id) {
			damage(node, read.problem ?? `record ${known.record} is of fold ${r?.id}, not ${known.id}`);
			continue;
		}
		node.kind = r.kind;
		node.identity = r.identity;
		if (known.brief === "") Object.assign(node, splitBrief(r.brief), { shownTokens: briefTokens(r.brief) });
		for (const c of r.children) {
			if (c.type === "leaf") {
				node.children.push({ type: "leaf", entryId: c.entryId, hash: c.hash, bytes: c.bytes });
				const problem = leafProblem(store, c.hash, c.entryId);
				if (problem) damage(node, problem);
			} else {
				node.children.push({ type: "fold", id: c.id, identity: c.identity, record: c.record });
				// The first fold to name a child is its parent; a fold naming itself is caught when sized.
				if (c.id !== known.id && !childOf.has(c.id)) childOf.set(c.id, known.id);
				if (!folds.has(c.id)) queue.push({ id: c.id, record: c.record, brief: "" });
			}
		}
	}
	for (const [child, parent] of childOf) {
		const node = nodes.get(child);
		if (node) node.parent = parent;
	}
	return nodes;
}

function damage(node: FoldNode, note: string): void {
	if (node.state !== "damaged") Object.assign(node, { state: "damaged", note });
}

/**
 * Sizes folds and lists them, each fold followed by its children. Each fold is sized once however
 * many paths lead to it; a fold inside itself, too deep or too large is damaged and not descended
 * into (the bounds of the store's own verification walk).
 */
class TreeWalk {
	readonly ordered: FoldNode[] = [];
	readonly sizes = new Map<string, Size>();
	readonly #nodes: ReadonlyMap<string, FoldNode>;
	readonly #branch: SessionBranch;
	readonly #tokens: readonly number[];

	constructor(nodes: ReadonlyMap<string, FoldNode>, branch: SessionBranch, tokens: readonly number[]) {
		this.#nodes = nodes;
		this.#branch = branch;
		this.#tokens = tokens;
	}

	visit(node: FoldNode, path: readonly string[]): Size {
		const known = this.sizes.get(node.id);
		if (known) return known;
		if (path.includes(node.id)) {
			const holder = this.#nodes.get(path[path.length - 1]) ?? node;
			damage(holder, `fold ${[...path, node.id].join(" > ")}: a fold inside itself`);
			return EMPTY;
		}
		const trail = [...path, node.id];
		this.ordered.push(node);
		let size: Size;
		if (trail.length > MAX_DEPTH) {
			damage(node, `fold ${trail.slice(0, 3).join(" > ")} > …: folds nest more than ${MAX_DEPTH} deep`);
			size = EMPTY;
		} else if (node.children.length === 0) size = this.#spanSize(node);
		else {
			const parts = node.children.map((c): Size => {
				if (c.type === "leaf") return { entries: 1, raw: this.#tokensOf(c.entryId), from: c.entryId, to: c.entryId };
				const child = this.#nodes.get(c.id);
				return child ? this.visit(child, trail) : EMPTY;
			});
			size = {
				entries: parts.reduce((n, s) => n + s.entries, 0),
				raw: parts.reduce((n, s) => n + s.raw, 0),
				from: parts[0].from,
				to: parts[parts.length - 1].to,
			};
			if (size.entries > MAX_LEAVES) {
				damage(node, `fold ${trail.join(" > ")}: expands to ${size.entries} leaves, over the limit of ${MAX_LEAVES}`);
			}
		}
		Object.assign(node, { entries: size.entries, rawTokens: size.raw, from: size.from, to: size.to });
		this.sizes.set(node.id, size);
		return size;
	}

	#tokensOf(entryId: string): number {
		return this.#tokens[this.#branch.position.get(entryId) ?? -1] ?? 0;
	}

	/** A fold with no children read: a pending mark (or a damaged fold its mark spans) counts its span as the branch holds it. */
	#spanSize(node: FoldNode): Size {
		// A record that could not be read, for a fold no mark on the branch spans: nothing to count.
		if (node.from === "") return EMPTY;
		const a = this.#branch.position.get(node.from) ?? 0;
		const b = this.#branch.position.get(node.to) ?? a;
		const span = this.#tokens.slice(a, b + 1);
		return {
			entries: span.filter((t) => t > 0).length,
			raw: span.reduce((x, y) => x + y, 0),
			from: node.from,
			to: node.to,
		};
	}
}

/** The tree: roots in transcript order, each fold followed by its children. */
export function foldTree(
	branch: SessionBranch,
	store: FoldStore,
	tokens: readonly number[],
	briefTokens: (text: string) => number,
): FoldTree {
	const state = reduceJournal(branch.journal.map((step) => step.op));
	const nodes = readNodes(state, store, briefTokens);
	const roots = [...nodes.values()].filter((n) => n.parent === undefined);
	// Sized first so the roots can be put in transcript order by their first entry.
	const sizing = new TreeWalk(nodes, branch, tokens);
	for (const r of roots) sizing.visit(r, []);
	const at = (r: FoldNode) => branch.position.get(r.from) ?? Number.MAX_SAFE_INTEGER;
	const walk = new TreeWalk(nodes, branch, tokens);
	for (const r of [...roots].sort((a, b) => at(a) - at(b))) walk.visit(r, []);
	// Folds only a cycle reaches (each inside another): shown after the roots, damaged.
	for (const node of nodes.values()) {
		if (walk.sizes.has(node.id)) continue;
		damage(node, `fold ${node.id}: inside a cycle of folds (each inside another), reached from no fold on the branch`);
		walk.visit(node, []);
	}
	return { folds: walk.ordered, pinned: [...state.pinned] };
}
