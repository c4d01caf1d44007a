// The entries a session gained since a known leaf, found by walking back from the new leaf: what
// an incremental step (a sync of the lattice, an alignment) reads instead of the whole path.
import type { SessionEntry } from "@earendil-works/pi-coding-agent";

/** The session calls an incremental walk needs (a ReadonlySessionManager has them). */
export type SessionWalk = {
	getLeafId(): string | null;
	getEntry(id: string): SessionEntry | undefined;
};

/** The longest walk back from the leaf an incremental step tries before rebuilding in full. */
const MAX_WALK = 512;

/**
 * The entries after `since` on the current leaf's path, oldest first ([] when the leaf is still
 * `since`), or undefined when `since` is not an ancestor within `max` steps (another branch, a
 * rebuilt session): the caller then rebuilds in full. Entries have one parent each, so the path
 * through the new leaf is exactly the old path followed by these.
 */
export function entriesSince(sm: SessionWalk, since: string, max = MAX_WALK): SessionEntry[] | undefined {
	const added: SessionEntry[] = [];
	let id = sm.getLeafId();
	while (id !== since) {
		if (id === null || added.length >= max) return undefined;
		const e = sm.getEntry(id);
		if (!e) return undefined;
		added.push(e);
		id = e.parentId;
	}
	return added.reverse();
}
