// What every part of the page shares: the core, where bytes come from, the view and its folds.
import type { PiFoldCore } from "../../../bindings/index.ts";
import type { FoldNode, ViewData } from "../view-data.ts";
import type { ViewSource } from "./source.ts";

export interface PageContext {
	core: PiFoldCore;
	source: ViewSource;
	view: ViewData;
	folds: Map<string, FoldNode>;
	/** Show a fold's originals in the panel, scrolled to an entry when given. */
	open(id: string, entryId?: string): Promise<void>;
}

/** A fold's leaves in transcript order, nested folds flattened, each with the fold that lists it. */
export function leavesOf(
	ctx: PageContext,
	id: string,
): { entryId: string; hash: string; fold: string; depth: number }[] {
	const out: { entryId: string; hash: string; fold: string; depth: number }[] = [];
	const walk = (fid: string, depth: number, seen: Set<string>) => {
		const node = ctx.folds.get(fid);
		if (!node || seen.has(fid)) return;
		seen.add(fid);
		for (const c of node.children) {
			if (c.type === "leaf") out.push({ entryId: c.entryId, hash: c.hash, fold: fid, depth });
			else walk(c.id, depth + 1, seen);
		}
	};
	walk(id, 0, new Set());
	return out;
}
