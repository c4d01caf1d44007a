// A linear-time line matcher: the pattern (pattern.ts) compiled to a Thompson NFA and run as a
// lazily built DFA, one table lookup per code point, whatever the pattern: `(a+)+$` over a million
// `a`s costs what `a` costs. Lines are matched one at a time (a match never spans a newline), as
// grep does; a matching line reports where its first match ends, and a reversed automaton run
// backwards from there finds where that match starts. The DFA's cached states are capped: past
// the cap the cache is dropped and rebuilt, so memory stays bounded and time stays linear in the
// text (times the program's size at worst).
import { isWordCp, type Node, PatternError, type Ranges, reversed } from "./pattern.ts";

const CHAR = 0;
const SPLIT = 1;
const ASSERT = 2;
const MATCH = 3;
const BOL = 0;
const EOL = 1;
const WORD = 2;
const NOTWORD = 3;

/** Instructions a compiled pattern may hold (counted repetitions are expanded). */
const MAX_PROGRAM = 20_000;
/** Cached DFA states before the cache is dropped. */
const MAX_STATES = 4_000;

interface Program {
	op: number[];
	out: number[];
	out2: number[];
	/** CHAR: index into `sets`; ASSERT: its kind. */
	arg: number[];
	sets: Ranges[];
	start: number;
}

function compile(node: Node): Program {
	const p: Program = { op: [], out: [], out2: [], arg: [], sets: [], start: 0 };
	const setIndex = new Map<string, number>();
	const emit = (op: number, out: number, out2 = -1, arg = 0): number => {
		if (p.op.length >= MAX_PROGRAM) {
			throw new PatternError(`the pattern is too large once its repetitions are counted (over ${MAX_PROGRAM} steps)`);
		}
		p.op.push(op);
		p.out.push(out);
		p.out2.push(out2);
		p.arg.push(arg);
		return p.op.length - 1;
	};
	const go = (n: Node, next: number): number => {
		switch (n.t) {
			case "set": {
				const key = n.ranges.join(",");
				let k = setIndex.get(key);
				if (k === undefined) {
					k = p.sets.length;
					p.sets.push(n.ranges);
					setIndex.set(key, k);
				}
				return emit(CHAR, next, -1, k);
			}
			case "cat": {
				let entry = next;
				for (let i = n.xs.length - 1; i >= 0; i--) entry = go(n.xs[i], entry);
				return entry;
			}
			case "alt": {
				let entry = go(n.xs[n.xs.length - 1], next);
				for (let i = n.xs.length - 2; i >= 0; i--) entry = emit(SPLIT, go(n.xs[i], next), entry);
				return entry;
			}
			case "assert":
				return emit(ASSERT, next, -1, { bol: BOL, eol: EOL, word: WORD, notword: NOTWORD }[n.kind]);
			case "rep": {
				let entry: number;
				if (n.max === -1) {
					const loop = emit(SPLIT, -1, next);
					p.out[loop] = go(n.x, loop);
					entry = loop;
				} else {
					entry = next;
					for (let k = 0; k < n.max - n.min; k++) entry = emit(SPLIT, go(n.x, entry), next);
				}
				for (let k = 0; k < n.min; k++) entry = go(n.x, entry);
				return entry;
			}
		}
	};
	const match = emit(MATCH, -1);
	p.start = go(node, match);
	return p;
}

function inSet(ranges: Ranges, cp: number): boolean {
	let lo = 0;
	let hi = ranges.length / 2 - 1;
	while (lo <= hi) {
		const mid = (lo + hi) >> 1;
		if (cp < ranges[2 * mid]) hi = mid - 1;
		else if (cp > ranges[2 * mid + 1]) lo = mid + 1;
		else return true;
	}
	return false;
}

/** Code points split into classes no instruction tells apart (nor \b: word characters are their own). */
class Classes {
	readonly bounds: number[];
	readonly table = new Uint16Array(0x10000);
	readonly word: boolean[];
	readonly rep: number[];

	constructor(sets: readonly Ranges[]) {
		const cuts = new Set<number>([0, 0x0a, 0x0b, 0x30, 0x3a, 0x41, 0x5b, 0x5f, 0x60, 0x61, 0x7b]);
		for (const r of sets) for (let i = 0; i < r.length; i += 2) cuts.add(r[i]).add(r[i + 1] + 1);
		this.bounds = [...cuts].filter((c) => c <= 0x10ffff).sort((a, b) => a - b);
		if (this.bounds.length > 0xffff) throw new PatternError("the pattern has too many distinct character ranges");
		for (let k = 0; k < this.bounds.length; k++) {
			const from = this.bounds[k];
			const to = Math.min(k + 1 < this.bounds.length ? this.bounds[k + 1] : 0x110000, 0x10000);
			if (from < 0x10000) this.table.fill(k, from, to);
		}
		this.rep = this.bounds;
		this.word = this.bounds.map(isWordCp);
	}

	get count(): number {
		return this.bounds.length;
	}

	of(cp: number): number {
		if (cp < 0x10000) return this.table[cp];
		let lo = 0;
		let hi = this.bounds.length - 1;
		while (lo < hi) {
			const mid = (lo + hi + 1) >> 1;
			if (this.bounds[mid] <= cp) lo = mid;
			else hi = mid - 1;
		}
		return lo;
	}
}

interface DState {
	pcs: Int32Array;
	bol: boolean;
	prevWord: boolean;
}

/** The lazily built DFA of a program; `unanchored` restarts the program at every position. */
class Dfa {
	readonly #p: Program;
	readonly #c: Classes;
	readonly #unanchored: boolean;
	#states: DState[] = [];
	#ids = new Map<string, number>();
	/** Per state and class: next state * 2 + 1 when a match ends before the code point; -1 unknown. */
	trans = new Int32Array(0);
	#eol: number[] = [];
	#mark: Int32Array;
	#gen = 0;
	resets = 0;

	constructor(p: Program, c: Classes, unanchored: boolean) {
		this.#p = p;
		this.#c = c;
		this.#unanchored = unanchored;
		this.#mark = new Int32Array(p.op.length);
	}

	/** The state at the start of a scan (at a line's start when `bol`). */
	state(bol: boolean, prevWord: boolean): number {
		return this.#intern(Int32Array.of(this.#p.start), bol, prevWord);
	}

	#intern(pcs: Int32Array, bol: boolean, prevWord: boolean): number {
		const key = `${pcs.join(",")}|${bol ? 1 : 0}${prevWord ? 1 : 0}`;
		const known = this.#ids.get(key);
		if (known !== undefined) return known;
		const id = this.#states.length;
		this.#states.push({ pcs, bol, prevWord });
		this.#ids.set(key, id);
		this.#eol.push(-1);
		const n = this.#c.count;
		if (this.trans.length < (id + 1) * n) {
			const grown = new Int32Array(Math.max((id + 1) * n, this.trans.length * 2)).fill(-1);
			grown.set(this.trans);
			this.trans = grown;
		}
		return id;
	}

	/** The instructions reachable without consuming: CHAR steps, and whether MATCH is among them. */
	#closure(from: Int32Array, bol: boolean, eol: boolean, prevWord: boolean, nextWord: boolean) {
		const { op, out, out2, arg } = this.#p;
		this.#gen++;
		const chars: number[] = [];
		let match = false;
		const stack = Array.from(from);
		while (stack.length > 0) {
			const pc = stack.pop() as number;
			if (pc < 0 || this.#mark[pc] === this.#gen) continue;
			this.#mark[pc] = this.#gen;
			switch (op[pc]) {
				case CHAR:
					chars.push(pc);
					break;
				case MATCH:
					match = true;
					break;
				case SPLIT:
					stack.push(out2[pc], out[pc]);
					break;
				case ASSERT: {
					const k = arg[pc];
					const ok = k === BOL ? bol : k === EOL ? eol : k === WORD ? prevWord !== nextWord : prevWord === nextWord;
					if (ok) stack.push(out[pc]);
					break;
				}
			}
		}
		return { chars, match };
	}

	/** Whether a match ends at a line's end in `state`. */
	matchesAtEnd(state: number): boolean {
		let m = this.#eol[state];
		if (m < 0) {
			const s = this.#states[state];
			m = this.#closure(s.pcs, s.bol, true, s.prevWord, false).match ? 1 : 0;
			this.#eol[state] = m;
		}
		return m === 1;
	}

	/** No instruction left (an anchored scan can stop). */
	dead(state: number): boolean {
		return this.#states[state].pcs.length === 0;
	}

	/** Compute a transition (the table caches it). Ids may all change: returns the new encoded target. */
	step(state: number, cls: number): number {
		const s = this.#states[state];
		const nextWord = this.#c.word[cls];
		const { chars, match } = this.#closure(s.pcs, s.bol, false, s.prevWord, nextWord);
		const cp = this.#c.rep[cls];
		const next = new Set<number>();
		for (const pc of chars) if (inSet(this.#p.sets[this.#p.arg[pc]], cp)) next.add(this.#p.out[pc]);
		if (this.#unanchored) next.add(this.#p.start);
		const pcs = Int32Array.from([...next].sort((a, b) => a - b));
		if (this.#states.length >= MAX_STATES) {
			// Bounded memory: drop every cached state; the caller's ids are stale, this answer is not.
			this.resets++;
			this.#states = [];
			this.#ids.clear();
			this.#eol = [];
			this.trans = new Int32Array(0);
			return (this.#intern(pcs, false, nextWord) << 1) | (match ? 1 : 0);
		}
		const target = (this.#intern(pcs, false, nextWord) << 1) | (match ? 1 : 0);
		this.trans[state * this.#c.count + cls] = target;
		return target;
	}
}

/** Where one line's first match lies: UTF-16 indices into the text scanned. */
interface LineMatch {
	lineStart: number;
	lineEnd: number;
	start: number;
	end: number;
}

export class Matcher {
	readonly #classes: Classes;
	readonly #forward: Dfa;
	readonly #backward: Dfa;
	constructor(node: Node) {
		const fwd = compile(node);
		const bwd = compile(reversed(node));
		this.#classes = new Classes([...fwd.sets, ...bwd.sets]);
		this.#forward = new Dfa(fwd, this.#classes, true);
		this.#backward = new Dfa(bwd, this.#classes, false);
	}

	/** How often the state cache was dropped (a pattern the DFA finds hard). */
	get resets(): number {
		return this.#forward.resets + this.#backward.resets;
	}

	/**
	 * Every line of `text` holding a match, in order: `onLine(lineStart, matchEnd)` with the end of
	 * its first match; returning false stops the scan. `overdue` is asked every 2^20 code points
	 * and stops the scan when it says so (the scan then returns false). `from` must start a line;
	 * `to` ends the scan (a line's end, or the text's).
	 */
	scan(
		text: string,
		onLine: (lineStart: number, end: number) => boolean,
		overdue: () => boolean,
		from = 0,
		to = text.length,
	): boolean {
		const dfa = this.#forward;
		const classes = this.#classes;
		const table = classes.table;
		const width = classes.count;
		const n = to;
		let start = dfa.state(true, false);
		let trans = dfa.trans;
		let st = start;
		let lineStart = from;
		let budget = 0x100000;
		let i = from;
		while (i < n) {
			let cp = text.charCodeAt(i);
			if (cp === 0x0a) {
				if (dfa.matchesAtEnd(st) && !onLine(lineStart, i)) return false;
				i++;
				lineStart = i;
				st = start;
				continue;
			}
			let w = 1;
			let cls: number;
			if (cp < 0xd800) cls = table[cp];
			else {
				if (cp <= 0xdbff && i + 1 < n) {
					const d = text.charCodeAt(i + 1);
					if (d >= 0xdc00 && d <= 0xdfff) {
						cp = ((cp - 0xd800) << 10) + (d - 0xdc00) + 0x10000;
						w = 2;
					}
				}
				cls = classes.of(cp);
			}
			let t = trans[st * width + cls];
			if (t < 0) {
				const resetsBefore = dfa.resets;
				t = dfa.step(st, cls);
				if (dfa.resets !== resetsBefore) start = dfa.state(true, false);
				trans = dfa.trans;
			}
			if (--budget === 0) {
				if (overdue()) return false;
				budget = 0x100000;
			}
			if (t & 1) {
				if (!onLine(lineStart, i)) return false;
				const nl = text.indexOf("\n", i);
				if (nl < 0 || nl >= n) return true;
				i = nl + 1;
				lineStart = i;
				st = start;
				continue;
			}
			st = t >> 1;
			i += w;
		}
		if (lineStart < n && dfa.matchesAtEnd(st)) return onLine(lineStart, n);
		return true;
	}

	/** The line `[lineStart, lineEnd)` holding a match that ends at `end`: where that match starts (leftmost). */
	matchAt(text: string, lineStart: number, end: number): LineMatch {
		const nl = text.indexOf("\n", end);
		const lineEnd = nl < 0 ? text.length : nl;
		const dfa = this.#backward;
		const classes = this.#classes;
		const after = end < lineEnd ? (text.codePointAt(end) ?? 0) : -1;
		let st = dfa.state(end === lineEnd, after >= 0 && isWordCp(after));
		let best = end;
		let j = end;
		while (j > lineStart) {
			let cp = text.charCodeAt(j - 1);
			let w = 1;
			if (cp >= 0xdc00 && cp <= 0xdfff && j - 2 >= lineStart) {
				const h = text.charCodeAt(j - 2);
				if (h >= 0xd800 && h <= 0xdbff) {
					cp = ((h - 0xd800) << 10) + (cp - 0xdc00) + 0x10000;
					w = 2;
				}
			}
			const cls = classes.of(cp);
			let t = dfa.trans[st * classes.count + cls];
			if (t < 0) t = dfa.step(st, cls);
			if (t & 1) best = j;
			st = t >> 1;
			j -= w;
			if (dfa.dead(st)) return { lineStart, lineEnd, start: best, end };
		}
		if (dfa.matchesAtEnd(st)) best = lineStart;
		return { lineStart, lineEnd, start: best, end };
	}
}
