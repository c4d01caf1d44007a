// Selection at a commit over the core (assembly/select.ts): which pending marks to apply
// (stalest first, until enough tokens are freed) and which visible roots to consolidate.
import { columnLength, show, writeColumn } from "./columns.ts";
import { align16, type CoreInstance, describe } from "./instance.ts";

/** Flag bits of a mark or a root (one u8 each); other bits are reserved and ignored. */
export const MARK_ELIGIBLE = 1;
export const MARK_PINNED = 2;

/** Pending marks as parallel arrays. */
export interface CommitMarks {
	/** Transcript position (lower = staler). */
	position: Int32Array | readonly number[];
	/** Tokens the mark frees when applied. */
	tokensFreed: Uint32Array | readonly number[];
	/** MARK_ELIGIBLE | MARK_PINNED bits; only eligible, unpinned marks are chosen. */
	flags: Uint8Array | readonly number[];
}

export interface CommitSelection {
	/** Indices of the chosen marks, in the order chosen (position ascending, ties by index). */
	chosen: Int32Array;
	/** Tokens the chosen marks free. */
	freed: number;
	/** freed >= needTokens (always true when needTokens <= 0). */
	met: boolean;
}

/** Visible fold roots in transcript order: disjoint spans [start, end), ascending. */
export interface VisibleRoots {
	start: Int32Array | readonly number[];
	end: Int32Array | readonly number[];
	/** MARK_PINNED marks a pinned root; pinned roots are never merged and break runs. */
	flags: Uint8Array | readonly number[];
	/**
	 * Each root's height: levels of folds in it (a fold of leaves only is 1, a parent one more than
	 * its highest child). Given, roots merge only with adjacent roots of the same height, lowest
	 * first, at most `fanout` per parent, so the fold tree stays shallow; absent, all are equal.
	 */
	height?: Int32Array | readonly number[];
}

export interface ConsolidationChoice {
	/** Flat (first, last) pairs of root indices, inclusive: group g is groups[2g]..groups[2g + 1]. */
	groups: Int32Array;
	groupCount: number;
	/** Unpinned roots visible now, and once the groups are merged. */
	unpinnedBefore: number;
	unpinnedAfter: number;
	/** unpinnedAfter <= consolidateAfter. */
	met: boolean;
}

export interface SelectApi {
	/**
	 * Choose eligible, unpinned marks stalest first (position ascending, ties by lower index)
	 * and stop as soon as they free at least `needTokens`. needTokens <= 0 chooses nothing.
	 * When all candidates together free too little, all are chosen and `met` is false.
	 */
	selectCommit(marks: CommitMarks, needTokens: number): CommitSelection;
	/**
	 * When more than `consolidateAfter` unpinned roots are visible, merge adjacent unpinned roots.
	 * Candidates are maximal pieces of consecutive unpinned roots, each starting at most `maxGap`
	 * entries (default 0: touching) after the previous one ends (a pinned root or a wider gap ends
	 * a piece), of equal height (`roots.height`; all equal when absent), cut into parts of at most
	 * `fanout` roots of near-equal size (default: consolidateAfter when heights are given, else no
	 * limit); pieces of one root are skipped. Parts are taken lowest height first, oldest first
	 * among equals, each lowering the unpinned count by its size - 1, until the count is <=
	 * consolidateAfter; if equal heights are not enough, the roots left form pieces regardless of
	 * height, taken by their highest root. Groups come in transcript order. If every candidate is
	 * taken and the count is still higher, `met` is false. Without heights and fan-out this is
	 * whole runs, oldest first.
	 */
	selectConsolidation(
		roots: VisibleRoots,
		consolidateAfter: number,
		maxGap?: number,
		fanout?: number,
	): ConsolidationChoice;
}

/** The core's selection exports (assembly/select.ts). */
export interface SelectExports {
	selectCommit(
		position: number,
		tokens: number,
		flags: number,
		count: number,
		need: number,
		out: number,
		work: number,
	): number;
	selectFreed(): number;
	selectMet(): number;
	selectConsolidation(
		start: number,
		end: number,
		flags: number,
		count: number,
		after: number,
		maxGap: number,
		out: number,
		height: number,
		fanout: number,
		work: number,
	): number;
	consolidationUnpinnedBefore(): number;
	consolidationUnpinnedAfter(): number;
	consolidationMet(): number;
	consolidationBadRoot(): number;
}

/** selectConsolidation's answer for roots that are empty or out of order (assembly/select.ts). */
const CONSOLIDATION_BAD_ROOTS = 0xffff_ffff;

function badRoots(i: number, roots: VisibleRoots): RangeError {
	const [s, e, pe] = [roots.start[i], roots.end[i], roots.end[i - 1]];
	if (e <= s) {
		return new RangeError(
			`pi-fold core: root ${i} is empty: roots.end[${i}] = ${e} is not after roots.start[${i}] = ${s}`,
		);
	}
	return new RangeError(
		`pi-fold core: root ${i} [${s}, ${e}) starts before root ${i - 1} ends (${pe}): ` +
			"roots must be disjoint, in transcript order",
	);
}

/** Scratch the core's sort needs per mark (assembly/select.ts COMMIT_WORK_BYTES_PER_MARK). */
const WORK_BYTES_PER_MARK = 16;
/** Scratch consolidation needs per root (assembly/select.ts CONSOLIDATION_WORK_BYTES_PER_ROOT). */
const WORK_BYTES_PER_ROOT = 24;

function checkObject(what: string, v: unknown, fields: string): void {
	if (typeof v !== "object" || v === null)
		throw new TypeError(`pi-fold core: ${what} needs ${fields}, got ${describe(v)}`);
}

function checkCount(what: string, v: unknown, min: number): number {
	if (typeof v !== "number") throw new TypeError(`pi-fold core: ${what} must be a number, got ${show(v)}`);
	if (!Number.isInteger(v) || v < min || v > 0xffff_ffff) {
		throw new RangeError(`pi-fold core: ${what} must be an integer in [${min}, 2^32), got ${v}`);
	}
	return v;
}

export function selectApi(core: CoreInstance): SelectApi {
	const x = core.exports;

	function selectCommit(marks: CommitMarks, needTokens: number): CommitSelection {
		checkObject("selectCommit", marks, "{ position, tokensFreed, flags }");
		const n = columnLength("marks.position", marks.position, "i32");
		const nt = columnLength("marks.tokensFreed", marks.tokensFreed, "u32");
		const nf = columnLength("marks.flags", marks.flags, "u8");
		if (nt !== n || nf !== n) {
			throw new RangeError(
				`pi-fold core: marks columns differ in length: position ${n}, tokensFreed ${nt}, flags ${nf}`,
			);
		}
		if (typeof needTokens !== "number") {
			throw new TypeError(`pi-fold core: needTokens must be a number, got ${show(needTokens)}`);
		}
		if (!Number.isFinite(needTokens))
			throw new RangeError(`pi-fold core: needTokens must be finite, got ${needTokens}`);
		// [position | tokens | out | work | flags], each part 16-byte aligned
		const base = core.reserve(0);
		const tokens = base + align16(4 * n);
		const out = tokens + align16(4 * n);
		const work = out + align16(4 * n);
		const flags = work + align16(WORK_BYTES_PER_MARK * n);
		core.reserve(flags + n - base);
		writeColumn("marks.position", marks.position, n, "i32", core.i32, base >>> 2);
		writeColumn("marks.tokensFreed", marks.tokensFreed, n, "u32", core.u32, tokens >>> 2);
		writeColumn("marks.flags", marks.flags, n, "u8", core.u8, flags);
		const k = x.selectCommit(base, tokens, flags, n, needTokens, out, work) >>> 0;
		return { chosen: core.i32.slice(out >>> 2, (out >>> 2) + k), freed: x.selectFreed(), met: x.selectMet() !== 0 };
	}

	function selectConsolidation(
		roots: VisibleRoots,
		consolidateAfter: number,
		maxGap = 0,
		fanout?: number,
	): ConsolidationChoice {
		checkObject("selectConsolidation", roots, "{ start, end, flags }");
		const n = columnLength("roots.start", roots.start, "i32");
		const ne = columnLength("roots.end", roots.end, "i32");
		const nf = columnLength("roots.flags", roots.flags, "u8");
		const nh = roots.height === undefined ? n : columnLength("roots.height", roots.height, "i32");
		if (ne !== n || nf !== n || nh !== n) {
			const h = roots.height === undefined ? "" : `, height ${nh}`;
			throw new RangeError(`pi-fold core: roots columns differ in length: start ${n}, end ${ne}, flags ${nf}${h}`);
		}
		const after = checkCount("consolidateAfter", consolidateAfter, 1);
		const gap = checkCount("maxGap", maxGap, 0);
		const fan =
			fanout === undefined
				? roots.height === undefined
					? 0
					: after
				: fanout === 0
					? 0
					: checkCount("fanout", fanout, 2);
		// [start | end | out (n i32: at most n/2 pairs) | height | work | flags]
		const base = core.reserve(0);
		const end = base + align16(4 * n);
		const out = end + align16(4 * n);
		const height = out + align16(4 * n);
		const work = height + align16(4 * n);
		const flags = work + align16(WORK_BYTES_PER_ROOT * n);
		core.reserve(flags + n - base);
		const i32 = core.i32;
		writeColumn("roots.start", roots.start, n, "i32", i32, base >>> 2);
		writeColumn("roots.end", roots.end, n, "i32", i32, end >>> 2);
		writeColumn("roots.flags", roots.flags, n, "u8", core.u8, flags);
		if (roots.height !== undefined) {
			writeColumn("roots.height", roots.height, n, "i32", i32, height >>> 2);
			for (let i = 0; i < n; i++) {
				if (i32[(height >>> 2) + i] < 1) {
					throw new RangeError(`pi-fold core: roots.height[${i}] must be >= 1, got ${i32[(height >>> 2) + i]}`);
				}
			}
		}
		const heights = roots.height === undefined ? 0 : height;
		const groupCount = x.selectConsolidation(base, end, flags, n, after, gap, out, heights, fan, work) >>> 0;
		if (groupCount === CONSOLIDATION_BAD_ROOTS) throw badRoots(x.consolidationBadRoot(), roots);
		return {
			groups: core.i32.slice(out >>> 2, (out >>> 2) + 2 * groupCount),
			groupCount,
			unpinnedBefore: x.consolidationUnpinnedBefore() >>> 0,
			unpinnedAfter: x.consolidationUnpinnedAfter() >>> 0,
			met: x.consolidationMet() !== 0,
		};
	}

	return { selectCommit, selectConsolidation };
}
