// The search matcher: patterns compiled to a lazily built DFA, matched line by line. Checked
// against JavaScript's own RegExp on random patterns and texts (the same lines match; each match
// reported is a real match), on known answers (case-insensitivity, anchors, word boundaries,
// astral characters), on patterns a backtracking engine takes exponential time on, and on the
// query checks (sizes, unsupported syntax) that refuse before anything runs.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Matcher } from "../src/search/matcher.ts";
import { literalPattern, parseRegex, requiredLiteral } from "../src/search/pattern.ts";
import { checkQuery } from "../src/search/search.ts";

/** Every matching line as [lineStart, start, end] (UTF-16 indices). */
function matches(m: Matcher, text: string): [number, number, number][] {
	const out: [number, number, number][] = [];
	m.scan(
		text,
		(lineStart, end) => {
			const r = m.matchAt(text, lineStart, end);
			out.push([lineStart, r.start, r.end]);
			return true;
		},
		() => false,
	);
	return out;
}

/** Where lines start: a text ending in a newline has no empty line after it, an empty text no line. */
const lineStarts = (text: string) => {
	const out = [0];
	for (let i = 0; i < text.length; i++) if (text[i] === "\n") out.push(i + 1);
	return out.filter((s) => s < text.length);
};

describe("the matcher agrees with JavaScript's RegExp", () => {
	const atom = fc.constantFrom("a", "b", "c", "x", ".", "[ab]", "[^a]", "\\d", "[a-c]", "1", " ", "\\w", "\\s");
	const pattern: fc.Arbitrary<string> = fc.letrec((tie) => ({
		node: fc.oneof(
			{ depthSize: "small", withCrossShrink: true },
			atom,
			fc.tuple(tie("node"), tie("node")).map(([a, b]) => `${a}${b}`),
			fc.tuple(tie("node"), tie("node")).map(([a, b]) => `(?:${a}|${b})`),
			fc.tuple(tie("node"), fc.constantFrom("*", "+", "?", "{1,3}", "{2}")).map(([a, q]) => `(?:${a})${q}`),
		),
	})).node as fc.Arbitrary<string>;
	const anchored = fc.tuple(fc.constantFrom("", "^", "\\b"), pattern, fc.constantFrom("", "$", "\\b"));
	const text = fc
		.array(fc.constantFrom("a", "b", "c", "A", "B", "x", "1", " ", "\n"), { maxLength: 60 })
		.map((cs) => cs.join(""));

	it("the same lines match; every reported span is a match of the pattern", () => {
		fc.assert(
			fc.property(anchored, text, ([pre, body, post], t) => {
				const src = `${pre}${body}${post}`;
				const mine = matches(new Matcher(parseRegex(src)), t);
				const js = new RegExp(src, "i");
				const starts = lineStarts(t);
				const expected = starts.filter((s) => {
					const nl = t.indexOf("\n", s);
					return js.test(t.slice(s, nl < 0 ? t.length : nl));
				});
				expect(mine.map((m) => m[0])).toEqual(expected);
				if (pre === "" && post === "") {
					const whole = new RegExp(`^(?:${body})$`, "i");
					for (const [, s, e] of mine)
						expect(whole.test(t.slice(s, e)), `${src} on ${JSON.stringify(t.slice(s, e))}`).toBe(true);
				}
			}),
			{ numRuns: 400 },
		);
	});
});

describe("known answers", () => {
	it("literal queries: case-insensitive, any character taken as itself", () => {
		const m = new Matcher(literalPattern("Check (Value)*"));
		expect(matches(m, "a check (value)* here\nCHECK (VALUE)*\ncheck value")).toEqual([
			[0, 2, 16],
			[22, 22, 36],
		]);
	});

	it("anchors hold per line; word boundaries; astral characters count as one", () => {
		expect(matches(new Matcher(parseRegex("^foo|bar$")), "foo x\nx foo\nx bar\nbar x").map((m) => m[0])).toEqual([
			0, 12,
		]);
		expect(matches(new Matcher(parseRegex("\\bcat\\b")), "concat\na cat!\ncats")).toEqual([[7, 9, 12]]);
		const emoji = "x 🎉 y";
		expect(matches(new Matcher(parseRegex("🎉.y")), emoji)).toEqual([[0, 2, 6]]);
		expect(matches(new Matcher(literalPattern("ǅ")), "ǆ ǅ Ǆ").length).toBe(1);
	});

	it("a required ASCII run is found for literals and top-level regex sequences", () => {
		expect(requiredLiteral(literalPattern("check value"))).toBe("check value");
		expect(requiredLiteral(parseRegex("export (async )?function \\w+"))).toBe("function ");
		expect(requiredLiteral(parseRegex("a|b"))).toBeUndefined();
	});
});

describe("patterns that backtracking engines take exponential time on", () => {
	// No timing asserted: a backtracking engine would not finish these at all (the test would time out).
	it.each(["(a+)+$", "(a|aa)*b", "(a*)*c", "((a+)+)+!$", "(.*a){20}"])("%s over 200,000 a's", (src) => {
		const text = `${"a".repeat(200_000)}x\n${"a".repeat(1000)}`;
		const found = matches(new Matcher(parseRegex(src)), text);
		const js = src === "(.*a){20}" ? [0, 200_002] : src === "(a+)+$" ? [200_002] : [];
		expect(found.map((m) => m[0])).toEqual(js);
	});
});

describe("query checks", () => {
	it.each([
		["", false, '"query" is empty'],
		["   ", false, '"query" is empty'],
		["x".repeat(600), false, '"query" has 600 characters; a search takes at most 512'],
		["a\nb", false, '"query" spans lines'],
		["(a", true, "a group is not closed with ) at character 3"],
		["a)", true, "unmatched ) at character 2"],
		["[a", true, "a character class is not closed with ]"],
		["*a", true, "nothing to repeat before * at character 2"],
		["(a)\\1", true, "backreferences (\\1) are not supported"],
		["(?<=a)b", true, "lookaround and inline flags"],
		["\\p{L}", true, "Unicode property escapes (\\p{…}) are not supported"],
		["a{3,1}", true, "numbers out of order in {3,1}"],
		["a{5000}", true, "a counted repetition over 1000"],
		["(a{1000}){1000}", true, "the pattern is too large once its repetitions are counted"],
	])("%j (regex %s) is refused", (query, regex, says) => {
		const r = checkQuery(query, regex);
		expect(r.ok).toBe(false);
		if (!r.ok) expect(r.reason).toContain(says);
	});

	it("a literal may hold any character, regex syntax included", () => {
		for (const q of ["(a", "[x", "a\\1", "日本語 ✓ 🎉", "$HOME && `x`"]) expect(checkQuery(q, false).ok).toBe(true);
	});
});
