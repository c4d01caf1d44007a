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

/** One arm of the replay over the same requests: what each would have sent and cost. */
export interface ReplayedArm {
	/** Prompt tokens of each request. */
	prompts: number[];
	/** Dollars of each request at the replay's prices (a compaction's summary counted with the request before it). */
	costs: number[];
	/** The arm's dollars in all (the sum of `costs`) and its largest request. */
	cost: number;
	peak: number;
	/** Its rewrites (pi-fold's commits, native's compactions): the index of the first request that carries each, and the window before and after. */
	rewrites: { request: number; before: number; after: number }[];
	/** Requests larger than the context window (a provider would refuse them). */
	overWindow: number;
}

/** What `pi-fold replay` computes over the same requests: Pi's native compaction and pi-fold, side by side. */
export interface NativeCurve {
	state: "ready";
	model: string;
	window: number;
	/** pi-fold's serving budget in the replay, and why (the session's own when its receipts record one). */
	budget: number;
	budgetWhy: string;
	/** Where native compaction acts: above the window minus its reserveTokens. */
	threshold: number;
	reserveTokens: number;
	/** What priced the requests, in one line. */
	priceCard: string;
	priceTier?: { tokens: number; label: string };
	native: ReplayedArm;
	fold: ReplayedArm;
	/** Prompt tokens per request under no management. */
	none: number[];
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
