// The folds of a session's branch as a tree, for the view: what pi-fold's records on the branch
// say (marks, commits, consolidations, expands, pins) and what the store holds for each fold
// (its record and every leaf object), read as found and checked, nothing written. A fold whose
// record or a leaf is missing or does not verify is shown as damaged, with the reason.
import type { FoldRecord } from "../fold-types.ts";
import { decodeRecord, type FoldStore } from "../store/index.ts";
import { errorMessage } from "../vocabulary.ts";
import type { SessionBranch } from "./session-branch.ts";
import type { FoldNode } from "./view-data.ts";

interface Known {
	id: string;
	record?: string;
	brief: string;
	commit?: number;
	kind?: string;
	from?: string;
	to?: string;
}

/** Folds and pinned entries the branch's records name, and their states at the branch's end. */
function journalState(branch: SessionBranch) {
	const folds = new Map<string, Known>();
	const pending = new Set<string>();
	const expanded = new Set<string>();
	const pinned = new Set<string>();
	let commits = 0;
	for (const { op } of branch.journal) {
		switch (op.op) {
			case "mark":
				folds.set(op.id, { id: op.id, brief: folds.get(op.id)?.brief ?? "", kind: op.kind, from: op.from, to: op.to });
				pending.add(op.id);
				break;
			case "brief": {
				const f = folds.get(op.id);
				if (f) f.brief = op.text;
				break;
			}
			case "unmark":
				pending.delete(op.id);
				if (!folds.get(op.id)?.record) folds.delete(op.id);
				break;
			case "commit":
				for (const f of op.folds) {
					folds.set(f.id, { ...folds.get(f.id), id: f.id, record: f.record, brief: f.brief, commit: commits });
					pending.delete(f.id);
				}
				commits++;
				break;
			case "consolidate":
				// A consolidation is written in its commit's batch, after the commit's own record.
				folds.set(op.fold.id, {
					id: op.fold.id,
					record: op.fold.record,
					brief: op.fold.brief,
					commit: Math.max(0, commits - 1),
				});
				break;
			case "expand":
				expanded.add(op.id);
				break;
			case "refold":
				expanded.delete(op.id);
				break;
			case "pin":
				for (const id of op.entryIds) pinned.add(id);
				break;
			case "unpin":
				for (const id of op.entryIds) pinned.delete(id);
				break;
		}
	}
	return { folds, pending, expanded, pinned };
}

/** The brief's first line (without the fold-id tag the tree shows anyway) and its index lines. */
function splitBrief(brief: string): { brief: string; index: string[] } {
	const [head = "", ...rest] = brief.split("\n");
	return { brief: head.replace(/^\[pi-fold [0-9a-f]+\] /, ""), index: rest.filter((l) => l.trim() !== "") };
}

/** Reads a record as found; its problem when it is missing, does not verify or does not decode. */
function readRecord(store: FoldStore, hash: string): { record?: FoldRecord; problem?: string } {
	let found: ReturnType<FoldStore["records"]["readAsFound"]>;
	try {
		found = store.records.readAsFound(hash);
	} catch (err) {
		return { problem: errorMessage(err) };
	}
	if (!found) return { problem: `record ${hash} is missing from ${store.root}` };
	if (!found.verified) return { problem: `record ${hash} does not verify (its bytes hash to something else)` };
	try {
		return { record: decodeRecord(found.bytes, `record ${hash}`) };
	} catch (err) {
		return { problem: errorMessage(err) };
	}
}

function leafProblem(store: FoldStore, hash: string, entryId: string): string | undefined {
	const found = store.objects.readAsFound(hash);
	if (!found) return `the object of entry ${entryId} (${hash}) is missing from ${store.root}`;
	if (!found.verified) return `the object of entry ${entryId} (${hash}) does not verify`;
	return undefined;
}

export interface FoldTree {
	folds: FoldNode[];
	pinned: string[];
}

/** The tree: roots in transcript order, each fold followed by its children. */
export function foldTree(
	branch: SessionBranch,
	store: FoldStore,
	tokens: readonly number[],
	briefTokens: (text: string) => number,
): FoldTree {
	const { folds, pending, expanded, pinned } = journalState(branch);
	const nodes = new Map<string, FoldNode>();
	const childOf = new Map<string, string>();
	const queue = [...folds.values()];
	const tokensOf = (entryId: string) => tokens[branch.position.get(entryId) ?? -1] ?? 0;
	for (let k = 0; k < queue.length; k++) {
		const known = queue[k];
		if (nodes.has(known.id)) continue;
		const { brief, index } = splitBrief(known.brief);
		const node: FoldNode = {
			id: known.id,
			kind: known.kind ?? "fold",
			state: pending.has(known.id) ? "pending" : expanded.has(known.id) ? "expanded" : "committed",
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
		if (!read.record) {
			node.state = "damaged";
			node.note = read.problem;
			continue;
		}
		const r = read.record;
		node.kind = r.kind;
		node.identity = r.identity;
		if (known.brief === "") Object.assign(node, splitBrief(r.brief), { shownTokens: briefTokens(r.brief) });
		for (const c of r.children) {
			if (c.type === "leaf") {
				node.children.push({ type: "leaf", entryId: c.entryId, hash: c.hash, bytes: c.bytes });
				const problem = leafProblem(store, c.hash, c.entryId);
				if (problem && node.state !== "damaged") Object.assign(node, { state: "damaged", note: problem });
			} else {
				node.children.push({ type: "fold", id: c.id, identity: c.identity, record: c.record });
				childOf.set(c.id, r.id);
				if (!folds.has(c.id)) queue.push({ id: c.id, record: c.record, brief: "" });
			}
		}
	}
	for (const [child, parent] of childOf) {
		const node = nodes.get(child);
		if (node) node.parent = parent;
	}
	const ordered: FoldNode[] = [];
	type Size = { entries: number; raw: number; from: string; to: string };
	const visit = (node: FoldNode): Size => {
		ordered.push(node);
		let size: Size;
		if (node.children.length === 0 && node.from === "") {
			// A record that could not be read, for a fold no mark on the branch spans: nothing to count.
			size = { entries: 0, raw: 0, from: "", to: "" };
		} else if (node.children.length === 0) {
			// A pending mark (or a damaged fold its mark spans): the entries of its span as the branch holds them.
			const a = branch.position.get(node.from) ?? 0;
			const b = branch.position.get(node.to) ?? a;
			const span = tokens.slice(a, b + 1);
			size = {
				entries: span.filter((t) => t > 0).length,
				raw: span.reduce((x, y) => x + y, 0),
				from: node.from,
				to: node.to,
			};
		} else {
			const parts = node.children.map((c): Size => {
				if (c.type === "leaf") return { entries: 1, raw: tokensOf(c.entryId), from: c.entryId, to: c.entryId };
				const child = nodes.get(c.id);
				return child ? visit(child) : { entries: 0, raw: 0, from: "", to: "" };
			});
			size = {
				entries: parts.reduce((n, s) => n + s.entries, 0),
				raw: parts.reduce((n, s) => n + s.raw, 0),
				from: parts[0].from,
				to: parts[parts.length - 1].to,
			};
		}
		Object.assign(node, { entries: size.entries, rawTokens: size.raw, from: size.from, to: size.to });
		return size;
	};
	const roots = [...nodes.values()].filter((n) => n.parent === undefined);
	// Sized first so the roots can be put in transcript order by their first entry.
	for (const r of roots) visit(r);
	const sized = roots.map((r) => ({ r, at: branch.position.get(r.from) ?? Number.MAX_SAFE_INTEGER }));
	ordered.length = 0;
	for (const { r } of sized.sort((a, b) => a.at - b.at)) visit(r);
	return { folds: ordered, pinned: [...pinned] };
}
