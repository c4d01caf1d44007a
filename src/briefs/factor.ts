// Many similar strings in few characters, in shell brace notation a reader already knows: shared
// prefixes once (`src/{a.ts,b.ts}`), a common ending pulled out of the alternatives (`src/{a,b}.ts`),
// runs of whole numbers as ranges (`stage={1..4,7}`). Deterministic: the same list gives the
// same text. Strings holding a brace or a comma cannot sit inside a group and are listed apart.

/** A value inside a group ends at one of these (after it): path parts, words, `key=` prefixes. */
const CUT_AFTER = new Set(["/", " ", "="]);

interface TrieNode {
	label: string;
	/** A value ends here. */
	end: boolean;
	kids: TrieNode[];
}

function tokens(s: string): string[] {
	const out: string[] = [];
	let from = 0;
	for (let i = 0; i < s.length; i++) {
		if (CUT_AFTER.has(s[i])) {
			out.push(s.slice(from, i + 1));
			from = i + 1;
		}
	}
	if (from < s.length) out.push(s.slice(from));
	return out;
}

function insert(root: TrieNode, s: string): void {
	let node = root;
	for (const t of tokens(s)) {
		let kid = node.kids.find((k) => k.label === t);
		if (!kid) {
			kid = { label: t, end: false, kids: [] };
			node.kids.push(kid);
		}
		node = kid;
	}
	node.end = true;
}

const INTEGER = /^-?\d{1,15}$/;

/** Whole numbers as runs: 1,2,3,5 -> 1..3,5 (sorted, duplicates dropped). */
function numberRuns(alts: readonly string[]): string {
	const ns = [...new Set(alts.map(Number))].sort((a, b) => a - b);
	const out: string[] = [];
	for (let i = 0; i < ns.length; ) {
		let j = i;
		while (j + 1 < ns.length && ns[j + 1] === ns[j] + 1) j++;
		out.push(j - i >= 2 ? `${ns[i]}..${ns[j]}` : ns.slice(i, j + 1).join(","));
		i = j + 1;
	}
	return out.join(",");
}

/**
 * The longest ending every alternative shares (at least 3 characters, starting at a separator,
 * holding no brace or comma, so it lies after any group inside an alternative).
 */
function commonEnding(alts: readonly string[]): string {
	if (alts.length < 2) return "";
	let n = 0;
	const first = alts[0];
	const shortest = Math.min(...alts.map((a) => a.length));
	const same = (k: number) => alts.every((a) => a[a.length - 1 - k] === first[first.length - 1 - k]);
	while (n < shortest && !/[{},]/.test(first[first.length - 1 - n]) && same(n)) n++;
	// Start the ending at a separator or a dot, so `{a,b}.js` rather than `{a.j,b.j}s`-like cuts.
	let start = first.length - n;
	while (start < first.length && !/[./ |=_-]/.test(first[start])) start++;
	const ending = first.slice(start);
	return ending.length >= 3 ? ending : "";
}

function render(node: TrieNode): string {
	if (node.kids.length === 0) return node.label;
	if (node.kids.length === 1 && !node.end) return node.label + render(node.kids[0]);
	const alts = [...(node.end ? [""] : []), ...node.kids.map(render)];
	if (alts.every((a) => INTEGER.test(a))) return `${node.label}{${numberRuns(alts)}}`;
	const ending = commonEnding(alts);
	const inner = ending === "" ? alts : alts.map((a) => a.slice(0, a.length - ending.length));
	return `${node.label}{${inner.join(",")}}${ending}`;
}

/**
 * `values` (distinct, in the order to show them) as brace groups, joined by ", " at the top level.
 * A single integer-valued run renders as a range group too.
 */
export function factor(values: readonly string[]): string {
	const plain = values.filter((v) => !/[{},]/.test(v));
	const apart = values.filter((v) => /[{},]/.test(v));
	const root: TrieNode = { label: "", end: false, kids: [] };
	for (const v of plain) insert(root, v);
	const top = root.kids.map(render);
	return [...top, ...apart].join(", ");
}
