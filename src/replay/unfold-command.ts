// `pi-fold unfold SESSION`: the way out. Every span pi-fold folded on the session's active branch
// gets its original content back, and pi-fold's own notices (receipts, overflow and unbriefed
// notices) leave the model's view, and what a commit cut short by a crash left (edits under a mark
// of pi-fold's with no commit record) is undone, so the session reads the same, and is one a
// provider takes, in a Pi without pi-fold. It does
// what an expand does inside Pi (a `context_edit` entry that re-states the original content: Pi
// has no way to delete an edit), with the originals read from the store and verified by SHA-256,
// each checked against the entry in the session file too. Appended after the last entry, which is
// where Pi reopens a session; the file is replaced whole (a temp file renamed over it), only if
// nobody wrote to it meanwhile, so a crash leaves it as it was (and the next run removes the temp
// file a kill left).
import { randomUUID } from "node:crypto";
import {
	closeSync,
	fstatSync,
	fsyncSync,
	openSync,
	readdirSync,
	readFileSync,
	renameSync,
	rmSync,
	statSync,
	unlinkSync,
	writeSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import type { FoldId } from "../fold-types.ts";
import type { JournalOp } from "../session/journal.ts";
import { journalOps, reduceJournal } from "../session/journal-state.ts";
import { syncDir } from "../store/atomic.ts";
import { RECORD_TYPE } from "../vocabulary.ts";
import { contentOf, FoldReadError, type LooseEntry, type SessionFolds, verifiedFold } from "./session-folds.ts";

/** pi-fold's own custom messages: every custom type it writes is named "pi-fold-…". */
const NOTICE_PREFIX = `${RECORD_TYPE}-`;

interface UnfoldEdit {
	targetId: string;
	replacement: { content: unknown } | null;
}

interface UnfoldPlan {
	edits: UnfoldEdit[];
	/**
	 * pi-fold's own expand records for every fold still folded, outermost first, so a pi-fold
	 * installed again reads the session as unfolded (not as a window that drifted from its folds).
	 */
	expands: FoldId[];
	/** The folds on the branch whose originals were verified. */
	folds: number;
	/** Entries whose original content comes back. */
	restored: number;
	/** pi-fold notices taken out of the model's view. */
	notices: number;
	/**
	 * Entries of pi-fold's marks that edits hide or brief with no commit record behind them (a
	 * commit cut short by a crash), shown again from the session's own bytes.
	 */
	cutShort: number;
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** What unfolding the active branch takes; FoldReadError when a fold's originals cannot be verified. */
export function planUnfold(s: SessionFolds): UnfoldPlan {
	const latest = new Map<string, UnfoldEdit["replacement"]>();
	for (const e of s.branch) {
		if (e.type === "context_edit" && typeof e.targetId === "string") {
			latest.set(e.targetId, e.replacement as UnfoldEdit["replacement"]);
		}
	}
	const decoder = new TextDecoder("utf-8", { fatal: true });
	const originals = new Map<string, { text: string; fold: string }>();
	for (const id of s.onBranch) {
		for (const leaf of verifiedFold(s, id).leaves) {
			originals.set(leaf.entryId, { text: decoder.decode(leaf.bytes), fold: leaf.fold });
		}
	}
	const plan: UnfoldPlan = {
		edits: [],
		expands: stillFolded(s),
		folds: s.onBranch.length,
		restored: 0,
		notices: 0,
		cutShort: 0,
	};
	const marked = markedEntries(s);
	for (const entry of s.branch) {
		const id = entry.id as string;
		if (entry.type === "custom_message" && String(entry.customType).startsWith(NOTICE_PREFIX)) {
			if (latest.get(id) !== null) {
				plan.edits.push({ targetId: id, replacement: null });
				plan.notices++;
			}
			continue;
		}
		const current = latest.get(id);
		const stored = originals.get(id);
		if (current !== undefined && stored === undefined && marked.has(id)) {
			// Under a mark of pi-fold's but in no committed fold: a commit cut short left this edit.
			const own = contentOf(entry);
			if (current !== null && sameJson(current.content, own)) continue;
			plan.edits.push({ targetId: id, replacement: { content: own } });
			plan.cutShort++;
			continue;
		}
		// Not edited, or edited by something other than pi-fold: left as it is.
		if (current === undefined || stored === undefined) continue;
		if (stored.text !== JSON.stringify(entry)) {
			throw new FoldReadError(
				`${s.file}: entry ${id} is not the entry fold ${stored.fold} stored (the file was changed since it was folded); nothing was changed`,
			);
		}
		const original = contentOf(JSON.parse(stored.text) as LooseEntry);
		if (current !== null && sameJson(current.content, original)) continue;
		plan.edits.push({ targetId: id, replacement: { content: original } });
		plan.restored++;
	}
	return plan;
}

/** Ids of the branch entries inside a span pi-fold's records marked (from..to, in branch order). */
function markedEntries(s: SessionFolds): Set<string> {
	const at = new Map(s.branch.map((e, i) => [e.id as string, i]));
	const out = new Set<string>();
	for (const mark of reduceJournal(journalOps(s.branch)).marks) {
		const [from, to] = [at.get(mark.from), at.get(mark.to)];
		if (from === undefined || to === undefined) continue;
		for (let i = from; i <= to; i++) out.add(s.branch[i].id as string);
	}
	return out;
}

/** The folds of the branch's records still folded, parents before their children (expand is outside-in). */
function stillFolded(s: SessionFolds): FoldId[] {
	const state = new Map<FoldId, "committed" | "expanded">();
	for (const f of reduceJournal(journalOps(s.branch)).folds.values())
		if (f.state !== "pending") state.set(f.id, f.state);
	const children = new Map<FoldId, FoldId[]>();
	const nested = new Set<FoldId>();
	for (const id of state.keys()) {
		const hash = s.records.get(id);
		const kids =
			hash === undefined ? [] : s.store.readRecord(hash).children.flatMap((c) => (c.type === "fold" ? [c.id] : []));
		children.set(id, kids);
		for (const k of kids) nested.add(k);
	}
	const out: FoldId[] = [];
	const visit = (id: FoldId) => {
		if (state.get(id) === "committed") out.push(id);
		for (const k of children.get(id) ?? []) if (state.has(k)) visit(k);
	};
	for (const id of state.keys()) if (!nested.has(id)) visit(id);
	return out;
}

/** The plan as session entries: a chain of context edits from the branch's last entry. */
export function unfoldEntries(s: SessionFolds, plan: UnfoldPlan, now = new Date()): LooseEntry[] {
	const taken = new Set(s.byId.keys());
	const newId = () => {
		for (;;) {
			const id = randomUUID().slice(0, 8);
			if (!taken.has(id)) {
				taken.add(id);
				return id;
			}
		}
	};
	let parentId = (s.branch[s.branch.length - 1]?.id as string | undefined) ?? null;
	const link = () => {
		const at = { id: newId(), parentId, timestamp: now.toISOString() };
		parentId = at.id;
		return at;
	};
	// Fields in the order Pi writes them.
	return [
		...plan.edits.map(
			(edit): LooseEntry => ({
				type: "context_edit",
				...link(),
				targetId: edit.targetId,
				replacement: edit.replacement,
			}),
		),
		...plan.expands.map((id): LooseEntry => {
			const data: JournalOp = { v: 1, op: "expand", id };
			return { type: "custom", customType: RECORD_TYPE, data, ...link() };
		}),
	];
}

/** Between a session file's name and the pid of the unfold writing its temp copy. */
const TEMP_INFIX = ".pi-fold-unfold-";

/** Whether process `pid` still runs (EPERM: it does, as another user). */
function running(pid: number): boolean {
	try {
		process.kill(pid, 0);
		return true;
	} catch (err) {
		return (err as { code?: string }).code === "EPERM";
	}
}

/**
 * Remove the temp copies of `file` that an unfold killed before its rename left behind (their
 * process is gone); one still running keeps its own.
 */
function removeLeftovers(file: string): void {
	const prefix = `${basename(file)}${TEMP_INFIX}`;
	for (const name of readdirSync(dirname(file))) {
		const pid = name.startsWith(prefix) ? /^(\d+)\.tmp$/.exec(name.slice(prefix.length))?.[1] : undefined;
		// One named by this process's own pid is a dead run's too (its pid reused): this run has made none yet.
		if (pid === undefined || (Number(pid) !== process.pid && running(Number(pid)))) continue;
		rmSync(join(dirname(file), name), { force: true });
	}
}

/**
 * Append `entries` to the session file by replacing it whole: refused (FoldReadError, nothing
 * written) when its size or modification time is not `before`'s, i.e. something wrote to it since.
 */
export function appendToSession(
	file: string,
	entries: readonly LooseEntry[],
	before: { size: number; mtimeMs: number },
): void {
	const changed = () => {
		const now = statSync(file);
		return now.size !== before.size || now.mtimeMs !== before.mtimeMs;
	};
	const raw = readFileSync(file);
	if (raw.length !== before.size || changed()) {
		throw new FoldReadError(
			`${file}: the session file changed while it was read (is Pi running on it?); nothing was changed`,
		);
	}
	const lines = entries.map((e) => `${JSON.stringify(e)}\n`).join("");
	const sep = raw.length > 0 && raw[raw.length - 1] !== 0x0a ? "\n" : "";
	removeLeftovers(file);
	const temp = `${file}${TEMP_INFIX}${process.pid}.tmp`;
	const fd = openSync(temp, "wx", statSync(file).mode & 0o777);
	try {
		writeSync(fd, raw);
		writeSync(fd, `${sep}${lines}`);
		fsyncSync(fd);
		if (fstatSync(fd).size !== raw.length + Buffer.byteLength(sep + lines)) throw new Error("short write");
	} catch (err) {
		closeSync(fd);
		unlinkSync(temp);
		throw err;
	}
	closeSync(fd);
	if (changed()) {
		unlinkSync(temp);
		throw new FoldReadError(
			`${file}: the session file changed while unfold wrote (is Pi running on it?); nothing was changed`,
		);
	}
	renameSync(temp, file);
	syncDir(dirname(file));
}

/** Whether the plan appends anything. */
export function hasWork(plan: UnfoldPlan): boolean {
	return plan.edits.length + plan.expands.length > 0;
}

/** The one-paragraph answer of a run. */
export function unfoldSummary(s: SessionFolds, plan: UnfoldPlan, written: boolean): string {
	if (!hasWork(plan)) {
		return `${s.file}: nothing to unfold: ${plan.folds === 0 ? "pi-fold folded nothing on its active branch, and no commit of its was cut short" : `the ${plan.folds} folds on its active branch already read as their originals`}`;
	}
	const what =
		`${plan.restored} entries of ${plan.folds} folds back to their originals (from ${s.store.root}, verified by SHA-256)` +
		(plan.notices > 0 ? `, ${plan.notices} pi-fold notices out of the model's view` : "") +
		(plan.cutShort > 0 ? `, ${plan.cutShort} entries a commit cut short had hidden shown again` : "");
	return written
		? `${s.file}: unfolded: ${what}; ${plan.edits.length} context edits appended, and pi-fold's records of ${plan.expands.length} expands. The session now reads the same without pi-fold.`
		: `${s.file}: would unfold ${what} (${plan.edits.length} context edits, ${plan.expands.length} expand records); nothing written (--dry-run)`;
}
