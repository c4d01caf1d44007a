// What `pi-fold view` hands the page: one session's window, request by request, and its fold tree,
// as plain JSON. Shared by the server that builds it (Node) and the page that draws it (a browser),
// so it imports nothing.

/** One request of the session: what its window held, estimated by the core, split by what it was. */
export interface RequestPoint {
	/** The assistant entry that answered the request. */
	entryId: string;
	/** Tokens of entries shown as they were written, not under any mark. */
	raw: number;
	/** Tokens of raw entries under a staged mark: they fold at the next commit. */
	pending: number;
	/** Tokens of the briefs shown in place of folded spans. */
	folded: number;
	/** Tokens of a native compaction's summary shown, when the session had one. */
	summary: number;
	/** Tokens the folds and compactions kept out of this request (the originals stay in the store). */
	hidden: number;
	/** What the provider billed for the request's prompt (input and cache), when it said. */
	billed?: number;
	/** pi-fold's serving budget as the session ran (its commit receipts say it), when known. */
	budget?: number;
}

/** A commit: where it first shows (the request after it) and what it folded. */
export interface CommitMark {
	/** Index into `requests` of the first request that carries it. */
	request: number;
	entryId: string;
	folds: string[];
	/** What its receipt said: the window's estimate before and after, and the serving budget. */
	before?: number;
	after?: number;
	budget?: number;
}

export type FoldStateName = "committed" | "expanded" | "pending" | "pinned" | "damaged";

export type ChildRef =
	| { type: "leaf"; entryId: string; hash: string; bytes: number }
	| { type: "fold"; id: string; identity: string; record: string };

export interface FoldNode {
	id: string;
	kind: string;
	state: FoldStateName;
	/** The brief's first line, and its index lines (the rest). */
	brief: string;
	index: string[];
	/** The enclosing fold, for a fold nested in another. */
	parent?: string;
	/** The record's address in the store and what it lists (absent for a pending mark). */
	record?: string;
	identity?: string;
	children: ChildRef[];
	/** Entries it spans (leaves, nested folds flattened) and their first and last ids. */
	entries: number;
	from: string;
	to: string;
	/** Estimated tokens of its originals, and of what the window shows for it (the brief). */
	rawTokens: number;
	shownTokens: number;
	/** Index into `commits` of the commit that made it. */
	commit?: number;
	/** Why it is damaged, or what else a person should know about it. */
	note?: string;
}

/** Native compaction's curve over the same requests, as `pi-fold replay` computes it. */
export interface NativeCurve {
	state: "ready";
	model: string;
	window: number;
	budget: number;
	budgetWhy: string;
	priceTier?: { tokens: number; label: string };
	/** Prompt tokens per request under Pi's native compaction, and under no management. */
	native: number[];
	none: number[];
	compactions: number[];
}

export type NativeAnswer = NativeCurve | { state: "pending" } | { state: "unavailable"; reason: string };

export interface ViewData {
	file: string;
	sessionId: string;
	/** The pi-fold version that made the view. */
	version: string;
	requests: RequestPoint[];
	commits: CommitMark[];
	/** Every fold on the branch, roots in transcript order, each fold's children after it. */
	folds: FoldNode[];
	/** Entries pinned on the branch (they never fold). */
	pinned: string[];
	/** Lines of the file that are not session entries, and other things worth telling. */
	notes: string[];
}
