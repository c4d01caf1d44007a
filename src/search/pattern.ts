// A search query as a pattern the linear-time matcher (matcher.ts) runs: a literal (the default),
// or a regular expression in the common JavaScript syntax without the features that need
// backtracking (backreferences, lookaround), which are refused by name. Always case-insensitive.
// Sizes are bounded: the pattern's text, counted repetitions, and the compiled program.

/** A set of code points as sorted, disjoint, inclusive [lo, hi] pairs. */
export type Ranges = number[];

export type Node =
	| { t: "set"; ranges: Ranges }
	| { t: "cat"; xs: Node[] }
	| { t: "alt"; xs: Node[] }
	| { t: "rep"; x: Node; min: number; max: number }
	| { t: "assert"; kind: "bol" | "eol" | "word" | "notword" };

export const MAX_QUERY_CHARS = 512;
/** A counted repetition's bound ({n,m}). */
const MAX_REPEAT = 1000;

export class PatternError extends Error {
	override name = "PatternError";
}

const MAX_CP = 0x10ffff;

function normalize(ranges: Ranges): Ranges {
	const pairs: [number, number][] = [];
	for (let i = 0; i < ranges.length; i += 2) pairs.push([ranges[i], ranges[i + 1]]);
	pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
	const out: Ranges = [];
	for (const [lo, hi] of pairs) {
		const n = out.length;
		if (n > 0 && lo <= out[n - 1] + 1) out[n - 1] = Math.max(out[n - 1], hi);
		else out.push(lo, hi);
	}
	return out;
}

function complement(ranges: Ranges): Ranges {
	const r = normalize(ranges);
	const out: Ranges = [];
	let next = 0;
	for (let i = 0; i < r.length; i += 2) {
		if (r[i] > next) out.push(next, r[i] - 1);
		next = r[i + 1] + 1;
	}
	if (next <= MAX_CP) out.push(next, MAX_CP);
	return out;
}

const DIGIT: Ranges = [0x30, 0x39];
const WORD: Ranges = normalize([0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a]);
const SPACE: Ranges = normalize([
	0x09, 0x0d, 0x20, 0x20, 0xa0, 0xa0, 0x1680, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f, 0x202f, 0x205f, 0x205f,
	0x3000, 0x3000, 0xfeff, 0xfeff,
]);
/** What `.` matches: any code point but line terminators. */
const DOT: Ranges = complement([0x0a, 0x0a, 0x0d, 0x0d, 0x2028, 0x2029]);

/** Is a code point a word character (for \b)? */
export function isWordCp(cp: number): boolean {
	return (cp >= 0x30 && cp <= 0x39) || (cp >= 0x41 && cp <= 0x5a) || cp === 0x5f || (cp >= 0x61 && cp <= 0x7a);
}

/** The simple case variants of one code point (itself, lower, upper, when each is one code point). */
function variants(cp: number): number[] {
	const s = String.fromCodePoint(cp);
	const out = new Set([cp]);
	for (const v of [s.toLowerCase(), s.toUpperCase()]) {
		const c = v.codePointAt(0);
		if (c !== undefined && String.fromCodePoint(c) === v) out.add(c);
	}
	return [...out];
}

/** Ranges closed under simple case variants (ranges wider than 4096 code points are kept as they are). */
function caseFold(ranges: Ranges): Ranges {
	const out = [...ranges];
	for (let i = 0; i < ranges.length; i += 2) {
		if (ranges[i + 1] - ranges[i] > 4096) continue;
		for (let cp = ranges[i]; cp <= ranges[i + 1]; cp++) for (const v of variants(cp)) if (v !== cp) out.push(v, v);
	}
	return normalize(out);
}

/** A literal query: its code points in sequence, each with its case variants. */
export function literalPattern(query: string): Node {
	return {
		t: "cat",
		xs: [...query].map((ch) => ({ t: "set", ranges: caseFold([ch.codePointAt(0) ?? 0, ch.codePointAt(0) ?? 0]) })),
	};
}

/** Parse a regular expression (case-insensitive). Throws PatternError naming what is wrong and where. */
export function parseRegex(src: string): Node {
	const parser = new RegexParser(src);
	const node = parser.alternation();
	if (parser.i < parser.cps.length) throw new PatternError(`unmatched ) ${parser.at()}`);
	return node;
}

const fold = (n: Node): Node => (n.t === "set" ? { t: "set", ranges: caseFold(n.ranges) } : n);

/** A recursive-descent parser over the pattern's code points; `i` is where it stands. */
class RegexParser {
	readonly cps: string[];
	i = 0;

	constructor(src: string) {
		this.cps = [...src];
	}

	at(): string {
		return `at character ${this.i + 1}`;
	}

	peek(): string {
		return this.cps[this.i];
	}

	eat(s: string): boolean {
		if (this.cps[this.i] === s) {
			this.i++;
			return true;
		}
		return false;
	}

	hexDigits(count: number): number {
		const h = this.cps.slice(this.i, this.i + count).join("");
		if (!/^[0-9a-fA-F]+$/.test(h) || h.length !== count) throw new PatternError(`bad hex escape ${this.at()}`);
		this.i += count;
		return Number.parseInt(h, 16);
	}

	/** An escape after the backslash: a set, an assertion (outside classes), or one code point. */
	escaped(inClass: boolean): Node | number {
		const c = this.cps[this.i++];
		if (c === undefined) throw new PatternError("the pattern ends with a lone backslash");
		switch (c) {
			case "d":
				return { t: "set", ranges: DIGIT };
			case "D":
				return { t: "set", ranges: complement(DIGIT) };
			case "w":
				return { t: "set", ranges: WORD };
			case "W":
				return { t: "set", ranges: complement(WORD) };
			case "s":
				return { t: "set", ranges: SPACE };
			case "S":
				return { t: "set", ranges: complement(SPACE) };
			case "b":
				return inClass ? 8 : { t: "assert", kind: "word" };
			case "B":
				if (inClass) throw new PatternError(`\\B inside a class ${this.at()}`);
				return { t: "assert", kind: "notword" };
			case "n":
				return 10;
			case "r":
				return 13;
			case "t":
				return 9;
			case "f":
				return 12;
			case "v":
				return 11;
			case "0":
				return 0;
			case "x":
				return this.hexDigits(2);
			case "u":
				if (this.eat("{")) {
					const close = this.cps.indexOf("}", this.i);
					const h = close < 0 ? "" : this.cps.slice(this.i, close).join("");
					const cp = Number.parseInt(h, 16);
					if (!/^[0-9a-fA-F]{1,6}$/.test(h) || cp > MAX_CP) throw new PatternError(`bad \\u{…} escape ${this.at()}`);
					this.i = close + 1;
					return cp;
				}
				return this.hexDigits(4);
			case "k":
				throw new PatternError(`backreferences (\\k<…>) are not supported ${this.at()}: they need backtracking`);
			case "p":
			case "P":
				throw new PatternError(`Unicode property escapes (\\${c}{…}) are not supported ${this.at()}`);
			case "c":
				throw new PatternError(`control escapes (\\c) are not supported ${this.at()}`);
			default:
				if (/[1-9]/.test(c)) {
					throw new PatternError(`backreferences (\\${c}) are not supported ${this.at()}: they need backtracking`);
				}
				if (/[A-Za-z]/.test(c)) throw new PatternError(`unknown escape \\${c} ${this.at()}`);
				return c.codePointAt(0) ?? 0;
		}
	}

	classItem(): Ranges {
		const c = this.cps[this.i++];
		if (c === undefined) throw new PatternError("a character class is not closed with ]");
		if (c === "\\") {
			const e = this.escaped(true);
			return typeof e === "number" ? [e, e] : e.t === "set" ? e.ranges : [];
		}
		const cp = c.codePointAt(0) ?? 0;
		return [cp, cp];
	}

	charClass(): Node {
		const negate = this.eat("^");
		const out: Ranges = [];
		while (this.peek() !== "]") {
			if (this.peek() === undefined) throw new PatternError("a character class is not closed with ]");
			const lo = this.classItem();
			if (
				this.peek() === "-" &&
				this.cps[this.i + 1] !== "]" &&
				this.cps[this.i + 1] !== undefined &&
				lo.length === 2 &&
				lo[0] === lo[1]
			) {
				this.i++;
				const hi = this.classItem();
				if (hi.length !== 2 || hi[0] !== hi[1]) throw new PatternError(`a range ends in a class escape ${this.at()}`);
				if (hi[0] < lo[0]) throw new PatternError(`range out of order in character class ${this.at()}`);
				out.push(lo[0], hi[0]);
			} else out.push(...lo);
		}
		this.i++; // ]
		const ranges = caseFold(normalize(out));
		return { t: "set", ranges: negate ? complement(ranges) : ranges };
	}

	number(): number | undefined {
		let s = "";
		while (this.peek() !== undefined && /[0-9]/.test(this.peek())) s += this.cps[this.i++];
		return s === "" ? undefined : Number(s);
	}

	atom(): Node {
		const c = this.cps[this.i++];
		switch (c) {
			case "(": {
				if (this.eat("?")) {
					if (this.eat(":")) {
						// non-capturing group
					} else if (this.peek() === "<" && this.cps[this.i + 1] !== "=" && this.cps[this.i + 1] !== "!") {
						const close = this.cps.indexOf(">", this.i);
						if (close < 0) throw new PatternError(`a group name is not closed with > ${this.at()}`);
						this.i = close + 1;
					} else {
						throw new PatternError(
							`lookaround and inline flags ((?=, (?!, (?<=, (?<!, (?this.i)) are not supported ${this.at()}`,
						);
					}
				}
				const inner = this.alternation();
				if (!this.eat(")")) throw new PatternError(`a group is not closed with ) ${this.at()}`);
				return inner;
			}
			case "[":
				return this.charClass();
			case ".":
				return { t: "set", ranges: DOT };
			case "^":
				return { t: "assert", kind: "bol" };
			case "$":
				return { t: "assert", kind: "eol" };
			case "\\": {
				const e = this.escaped(false);
				return typeof e === "number" ? fold({ t: "set", ranges: [e, e] }) : fold(e);
			}
			case "*":
			case "+":
			case "?":
				throw new PatternError(`nothing to repeat before ${c} ${this.at()}`);
			case ")":
				throw new PatternError(`unmatched ) ${this.at()}`);
			default: {
				const cp = (c ?? "").codePointAt(0) ?? 0;
				return fold({ t: "set", ranges: [cp, cp] });
			}
		}
	}

	repeat(): Node {
		let x = this.atom();
		for (;;) {
			let min: number;
			let max: number;
			if (this.eat("*")) [min, max] = [0, -1];
			else if (this.eat("+")) [min, max] = [1, -1];
			else if (this.eat("?")) [min, max] = [0, 1];
			else if (this.peek() === "{" && /[0-9]/.test(this.cps[this.i + 1] ?? "")) {
				const save = this.i;
				this.i++;
				const lo = this.number() ?? 0;
				let hi = lo;
				if (this.eat(",")) hi = this.number() ?? -1;
				if (!this.eat("}")) {
					this.i = save;
					break;
				}
				if (lo > MAX_REPEAT || hi > MAX_REPEAT) {
					throw new PatternError(`a counted repetition over ${MAX_REPEAT} ${this.at()}`);
				}
				if (hi !== -1 && hi < lo) throw new PatternError(`numbers out of order in {${lo},${hi}} ${this.at()}`);
				[min, max] = [lo, hi];
			} else break;
			this.eat("?"); // lazy or greedy: the same set of lines matches
			if (x.t === "assert") throw new PatternError(`nothing to repeat (an anchor) ${this.at()}`);
			x = { t: "rep", x, min, max };
		}
		return x;
	}

	concat(): Node {
		const xs: Node[] = [];
		while (this.peek() !== undefined && this.peek() !== "|" && this.peek() !== ")") xs.push(this.repeat());
		return xs.length === 1 ? xs[0] : { t: "cat", xs };
	}

	alternation(): Node {
		const xs = [this.concat()];
		while (this.eat("|")) xs.push(this.concat());
		return xs.length === 1 ? xs[0] : { t: "alt", xs };
	}
}

/** The pattern matching the reverse of what `n` matches (anchors swap ends), for finding match starts. */
export function reversed(n: Node): Node {
	switch (n.t) {
		case "cat":
			return { t: "cat", xs: n.xs.map(reversed).reverse() };
		case "alt":
			return { t: "alt", xs: n.xs.map(reversed) };
		case "rep":
			return { ...n, x: reversed(n.x) };
		case "assert":
			return n.kind === "bol" ? { t: "assert", kind: "eol" } : n.kind === "eol" ? { t: "assert", kind: "bol" } : n;
		default:
			return n;
	}
}

/** The one ASCII character (in either case) a set stands for, if it is exactly that. */
function asciiOf(ranges: Ranges): string | undefined {
	if (ranges.length !== 2 && ranges.length !== 4) return undefined;
	const c = ranges[ranges.length - 1];
	if (c < 0x20 || c > 0x7e) return undefined;
	const ch = String.fromCharCode(c);
	const want = normalize(caseFold([c, c]));
	return want.length === ranges.length && want.every((x, i) => x === ranges[i]) ? ch : undefined;
}

/**
 * The longest run of plain ASCII characters every match must contain (from the pattern's top-level
 * sequence), when it has at least 2 characters: a line without it cannot match.
 */
export function requiredLiteral(n: Node): string | undefined {
	const xs = n.t === "cat" ? n.xs : [n];
	let best = "";
	let run = "";
	for (const x of xs) {
		const ch = x.t === "set" ? asciiOf(x.ranges) : undefined;
		if (ch !== undefined) run += ch;
		else run = "";
		if (run.length > best.length) best = run;
	}
	return best.length >= 2 ? best : undefined;
}
