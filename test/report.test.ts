// The report modules shared by the session benchmark and `pi-fold replay`: price cards and their
// arithmetic (known answers, the long-context tier boundary), card validation, per-arm aggregation,
// the side-by-side table and the SVG chart (checked well-formed by a small XML reader below).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { type RequestRecord, summarizeArm, usageFromProvider } from "../src/report/arm-report.ts";
import { escapeXml, renderRequestChart } from "../src/report/chart-svg.ts";
import {
	costOf,
	DEFAULT_PRICE_CARD,
	loadPriceCardFile,
	type PriceCard,
	PriceCardError,
	parsePriceCard,
	parsePriceCardText,
	tierOf,
} from "../src/report/price-card.ts";
import { ARM_TABLE_ROWS, renderArmTable } from "../src/report/table.ts";

const dir = mkdtempSync(join(tmpdir(), "pi-fold-report-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A usage record whose prompt is all of one class. */
const usage = (u: Partial<RequestRecord>): RequestRecord => {
	const r = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, ...u };
	return { ...r, promptTokens: r.input + r.cacheRead + r.cacheWrite };
};

describe("price card arithmetic", () => {
	it("prices each token class at the default card ($5 in, $0.50 cache read, cache write as input, $30 out)", () => {
		// 1000*5 + 2000*0.5 + 3000*5 + 400*30 = 33,000 micro-dollars
		expect(costOf(usage({ input: 1000, cacheRead: 2000, cacheWrite: 3000, output: 400 }))).toBeCloseTo(0.033, 12);
		expect(costOf(usage({}))).toBe(0);
	});

	it("keeps a prompt of exactly 272k tokens in the base tier and moves one more token to the long tier", () => {
		const at = usage({ input: 272_000, output: 1000 });
		const above = usage({ input: 272_001, output: 1000 });
		const below = usage({ input: 271_999, output: 1000 });
		expect(tierOf(at.promptTokens)).toBe(DEFAULT_PRICE_CARD.base);
		expect(tierOf(above.promptTokens)).toBe(DEFAULT_PRICE_CARD.longContext);
		expect(costOf(below)).toBeCloseTo((271_999 * 5 + 1000 * 30) / 1e6, 12);
		expect(costOf(at)).toBeCloseTo((272_000 * 5 + 1000 * 30) / 1e6, 12);
		// The long tier prices the whole request, every class: $10 in, $45 out.
		expect(costOf(above)).toBeCloseTo((272_001 * 10 + 1000 * 45) / 1e6, 12);
	});

	it("picks the tier by the whole prompt (cache read included), not by fresh input", () => {
		const r = usage({ input: 1, cacheRead: 272_000, output: 100 });
		// 1*10 + 272000*1 + 100*45
		expect(costOf(r)).toBeCloseTo(276_510 / 1e6, 12);
	});

	it("uses the card it is given, and a card without a long tier never switches", () => {
		const flat = parsePriceCard({ input: 1, cacheRead: 0.1, output: 2 }, "flat");
		expect(flat.base.cacheWrite).toBe(1);
		expect(costOf(usage({ input: 1_000_000, output: 1_000_000 }), flat)).toBeCloseTo(3, 12);
		expect(tierOf(10_000_000, flat)).toBe(flat.base);
	});
});

describe("price card validation", () => {
	const good = {
		name: "test card",
		input: 3,
		cacheRead: 0.3,
		cacheWrite: 3.75,
		output: 15,
		longContext: { abovePromptTokens: 200_000, input: 6, cacheRead: 0.6, output: 22.5 },
	};

	it("accepts a full card, keeping an explicit cache-write price and defaulting the long tier's to its input", () => {
		const card: PriceCard = parsePriceCard(good);
		expect(card.name).toBe("test card");
		expect(card.base).toEqual({ input: 3, cacheRead: 0.3, cacheWrite: 3.75, output: 15 });
		expect(card.longContext).toEqual({
			abovePromptTokens: 200_000,
			input: 6,
			cacheRead: 0.6,
			cacheWrite: 6,
			output: 22.5,
		});
	});

	const refusals: [string, unknown, RegExp][] = [
		["not an object", [1, 2], /cards\.json: must be a JSON object, got an array/],
		["a missing price", { input: 1, cacheRead: 1 }, /card\.output must be a non-negative number .* got missing/],
		["a negative price", { ...good, cacheRead: -0.5 }, /card\.cacheRead must be a non-negative number .* got -0\.5/],
		["a price as a string", { ...good, input: "5" }, /card\.input .* got the string "5"/],
		["an unknown field", { ...good, cacheWrites: 1 }, /card: unknown field "cacheWrites"/],
		[
			"a bad tier boundary",
			{ ...good, longContext: { ...good.longContext, abovePromptTokens: 1.5 } },
			/abovePromptTokens must be a positive whole number of tokens, got 1\.5/,
		],
		["a tier that is not an object", { ...good, longContext: 5 }, /longContext must be an object, got 5/],
		[
			"an unknown tier field",
			{ ...good, longContext: { ...good.longContext, above: 1 } },
			/longContext: unknown field "above"/,
		],
		["an empty name", { ...good, name: " " }, /name must be a non-empty string/],
	];
	it.each(refusals)("refuses %s, naming the file and the field", (_what, value, message) => {
		expect(() => parsePriceCard(value, "cards.json")).toThrow(PriceCardError);
		expect(() => parsePriceCard(value, "cards.json")).toThrow(message);
	});

	it("refuses text that is not JSON", () => {
		expect(() => parsePriceCardText("{input: 5", "p.json")).toThrow(/^p\.json: not valid JSON/);
	});

	it("loads a card file, and names the path of one it cannot read", async () => {
		const file = join(dir, "card.json");
		writeFileSync(file, JSON.stringify(good));
		expect((await loadPriceCardFile(file)).base.output).toBe(15);
		const missing = join(dir, "missing.json");
		await expect(loadPriceCardFile(missing)).rejects.toThrow(`${missing}: cannot read the price card file (ENOENT)`);
		const broken = join(dir, "broken.json");
		writeFileSync(broken, JSON.stringify({ ...good, output: null }));
		await expect(loadPriceCardFile(broken)).rejects.toThrow(`${broken}: card.output must be a non-negative number`);
	});
});

describe("arm aggregation", () => {
	const records: RequestRecord[] = [
		usage({ cacheWrite: 1000, output: 50 }),
		usage({ cacheRead: 1000, cacheWrite: 500, output: 40 }),
		usage({}), // an aborted request the provider did not bill
		usage({ input: 800, output: 300 }), // an uncached summary request
		usage({ cacheRead: 400, cacheWrite: 100, output: 10 }),
	];

	it("sums every class, counts billed calls and takes the peak and pooled cache share", () => {
		const a = summarizeArm("x", records);
		expect(a.requests).toBe(5);
		expect(a.billedCalls).toBe(4);
		expect(a.cacheRead).toBe(1400);
		expect(a.cacheWrite).toBe(1600);
		expect(a.freshInput).toBe(800 + 1600);
		expect(a.output).toBe(400);
		expect(a.totalTokens).toBe(1400 + 1600 + 800 + 400);
		expect(a.peakPromptTokens).toBe(1500);
		expect(a.pooledCacheShare).toBeCloseTo(1400 / (1000 + 1500 + 800 + 500), 12);
		const sum = records.reduce((s, r) => s + costOf(r), 0);
		expect(a.cost).toBeCloseTo(sum, 12);
		expect(a.priceCard).toBe(DEFAULT_PRICE_CARD.name);
	});

	it("is zero, not NaN, for an arm with no requests, and carries the extras it is given", () => {
		const a = summarizeArm("empty", [], DEFAULT_PRICE_CARD, {
			commits: 2,
			values: { visible: 1, recovered: 2, lost: 0 },
		});
		expect(a.pooledCacheShare).toBe(0);
		expect(a.cost).toBe(0);
		expect(a.commits).toBe(2);
		expect(a.values).toEqual({ visible: 1, recovered: 2, lost: 0 });
	});

	it("reads pi-ai's usage shape, the prompt being every input class", () => {
		expect(usageFromProvider({ input: 1, output: 2, cacheRead: 3, cacheWrite: 4 }, "work")).toEqual({
			input: 1,
			cacheRead: 3,
			cacheWrite: 4,
			output: 2,
			promptTokens: 8,
			kind: "work",
		});
	});
});

describe("side-by-side table", () => {
	const fold = summarizeArm("pi-fold", [usage({ cacheRead: 900, cacheWrite: 100, output: 10 })], DEFAULT_PRICE_CARD, {
		commits: 3,
		rewrites: { attributed: 3, unattributed: 0 },
		values: { visible: 5, recovered: 3, lost: 0 },
		wallMs: 2500,
		addedMsPerRequest: { median: 0.5, p95: 4 },
	});
	const native = summarizeArm("native", [usage({ cacheRead: 500, cacheWrite: 1500, output: 20 })], DEFAULT_PRICE_CARD, {
		compactions: 2,
		values: { visible: 2, recovered: 0, lost: 6 },
		wallMs: 1000,
	});

	it("has a header, an alignment row and one row per figure, every row as wide as the header", () => {
		const lines = renderArmTable([fold, native], { ratio: { numerator: "pi-fold", denominator: "native" } }).split(
			"\n",
		);
		expect(lines[0]).toBe("|  | pi-fold | native | pi-fold / native |");
		expect(lines).toHaveLength(2 + ARM_TABLE_ROWS.length);
		const cells = (l: string) => l.split(/(?<!\\)\|/).length;
		for (const l of lines) expect(cells(l)).toBe(cells(lines[0]));
		expect(lines.slice(2).map((l) => l.split(" | ")[0].slice(2))).toEqual(ARM_TABLE_ROWS);
	});

	it("puts ratios on quantities and none on counts of events", () => {
		const table = renderArmTable([fold, native], {
			ratio: { numerator: "pi-fold", denominator: "native" },
			budget: 4000,
		});
		const row = (label: string) => table.split("\n").find((l) => l.startsWith(`| ${label} |`)) ?? "";
		expect(row("fresh input")).toBe("| fresh input | 100 | 1,500 | 0.07x |");
		expect(row("total tokens")).toBe("| total tokens | 1,010 | 2,020 | 0.50x |");
		expect(row("peak request context")).toBe("| peak request context | 1,000 (0.25) | 2,000 (0.50) | 0.50x |");
		expect(row("wall clock")).toBe("| wall clock | 2.50 s | 1.00 s | 2.50x |");
		expect(row("commits / compactions")).toBe("| commits / compactions | 3 commits | 2 compactions |  |");
		expect(row("rewrites (attributed / unattributed)")).toBe("| rewrites (attributed / unattributed) | 3 / 0 | — |  |");
		expect(row("values visible / recovered / lost")).toBe(
			"| values visible / recovered / lost | 5 / 3 / 0 | 2 / 0 / 6 |  |",
		);
	});

	it("omitEmpty leaves out the rows no arm has a figure for, and only those", () => {
		const bare = (name: string) =>
			summarizeArm(name, [usage({ cacheRead: 10, cacheWrite: 90, output: 5 })], DEFAULT_PRICE_CARD);
		const labels = (table: string) =>
			table
				.split("\n")
				.slice(2)
				.map((l) => l.split(" | ")[0].slice(2));
		const full = labels(renderArmTable([bare("a"), bare("b")]));
		const kept = labels(renderArmTable([bare("a"), bare("b")], { omitEmpty: true }));
		expect(full).toEqual(ARM_TABLE_ROWS);
		const dropped = full.filter((l) => !kept.includes(l));
		expect(dropped).toEqual([
			"commits / compactions",
			"rewrites (attributed / unattributed)",
			"values visible / recovered / lost",
			"wall clock",
			"added time per request (median / p95)",
		]);
		// One arm with a figure keeps the row.
		expect(labels(renderArmTable([fold, bare("b")], { omitEmpty: true }))).toEqual(ARM_TABLE_ROWS);
	});

	it("renders without a ratio column, and refuses a ratio of an arm it does not have", () => {
		expect(renderArmTable([native]).split("\n")[0]).toBe("|  | native |");
		expect(() => renderArmTable([fold, native], { ratio: { numerator: "pi-fold", denominator: "none" } })).toThrow(
			/ratio denominator "none" is not an arm \(arms: pi-fold, native\)/,
		);
		expect(() => renderArmTable([])).toThrow(/no arms/);
	});
});

/**
 * A small XML well-formedness reader: one root element, tags balanced and properly nested, attribute
 * values quoted and unique per element, no raw "<" or bare "&" in text or attributes. Returns the
 * element names in document order, or throws saying what is wrong and where.
 */
function wellFormed(xml: string): string[] {
	const names: string[] = [];
	const stack: string[] = [];
	let roots = 0;
	let i = 0;
	const checkText = (t: string, at: number) => {
		if (t.includes("<")) throw new Error(`raw "<" at ${at}`);
		for (const m of t.matchAll(/&([^;\s]*);?/g)) {
			if (!/^&(lt|gt|amp|quot|apos|#\d+|#x[0-9a-fA-F]+);$/.test(m[0])) throw new Error(`bad entity ${m[0]} at ${at}`);
		}
	};
	if (xml.startsWith("<?xml")) i = xml.indexOf("?>") + 2;
	while (i < xml.length) {
		const lt = xml.indexOf("<", i);
		const text = xml.slice(i, lt < 0 ? xml.length : lt);
		if (stack.length === 0 && text.trim() !== "") throw new Error(`text outside the root at ${i}`);
		checkText(text, i);
		if (lt < 0) break;
		const gt = xml.indexOf(">", lt);
		if (gt < 0) throw new Error(`unclosed tag at ${lt}`);
		const tag = xml.slice(lt + 1, gt);
		if (tag.startsWith("/")) {
			const name = tag.slice(1).trim();
			if (stack.pop() !== name) throw new Error(`</${name}> at ${lt} does not close the open element`);
		} else {
			const selfClosing = tag.endsWith("/");
			const body = selfClosing ? tag.slice(0, -1) : tag;
			const m = /^([A-Za-z_][\w:.-]*)((?:\s+[A-Za-z_][\w:.-]*="[^"]*")*)\s*$/.exec(body);
			if (!m) throw new Error(`malformed tag <${tag}> at ${lt}`);
			const attrs = [...m[2].matchAll(/([A-Za-z_][\w:.-]*)="([^"]*)"/g)];
			const seen = new Set<string>();
			for (const [, k, v] of attrs) {
				if (seen.has(k)) throw new Error(`duplicate attribute ${k} at ${lt}`);
				seen.add(k);
				checkText(v, lt);
			}
			if (stack.length === 0 && ++roots > 1) throw new Error(`second root element at ${lt}`);
			names.push(m[1]);
			if (!selfClosing) stack.push(m[1]);
		}
		i = gt + 1;
	}
	if (stack.length > 0) throw new Error(`unclosed <${stack.join("> <")}>`);
	if (roots !== 1) throw new Error("no root element");
	return names;
}

describe("request chart (SVG)", () => {
	it("the reader itself rejects what is not well-formed", () => {
		expect(() => wellFormed("<svg><g></svg></g>")).toThrow(/does not close/);
		expect(() => wellFormed('<svg a="1" a="2"/>')).toThrow(/duplicate attribute/);
		expect(() => wellFormed("<svg>a & b</svg>")).toThrow(/bad entity/);
		expect(() => wellFormed("<svg/><svg/>")).toThrow(/second root/);
		expect(() => wellFormed("<svg x=1/>")).toThrow(/malformed tag/);
		expect(wellFormed('<?xml version="1.0"?>\n<svg><g a="&lt;"/></svg>')).toEqual(["svg", "g"]);
	});

	it("is well-formed SVG with one polyline per arm, the budget and window lines and the band", () => {
		const svg = renderRequestChart({
			title: 'pi-fold <band> & native "sawtooth"',
			series: [
				{ name: "pi-fold", points: [1000, 5000, 9000, 4000, 8000] },
				{ name: "native <&>", points: [1000, 5000, 9500, 2000, 6000, 9900] },
			],
			budget: 10_000,
			window: 12_000,
			band: { min: 4000, max: 8000 },
			lines: [{ tokens: 9000, label: "threshold <9k>" }],
		});
		const names = wellFormed(svg);
		expect(names[0]).toBe("svg");
		expect(svg).toContain('xmlns="http://www.w3.org/2000/svg"');
		const polylines = [...svg.matchAll(/<polyline [^>]*points="([^"]*)"/g)].map((m) => m[1].split(" ").length);
		expect(polylines).toEqual([5, 6]);
		expect(svg).toContain("budget 10k");
		expect(svg).toContain("context window 12k");
		expect(svg).toContain("threshold &lt;9k&gt;");
		expect(svg).toContain('fill-opacity="0.12"');
		expect(svg).toContain(escapeXml("native <&>"));
		expect(svg).not.toContain("native <&>");
	});

	it("refuses points that are not non-negative numbers, and a budget that is not positive", () => {
		expect(() => renderRequestChart({ series: [{ name: "a", points: [1, Number.NaN] }], budget: 10 })).toThrow(
			/series "a" point 1 is not a non-negative number/,
		);
		expect(() => renderRequestChart({ series: [], budget: 0 })).toThrow(/budget must be positive/);
		expect(() => renderRequestChart({ series: [], budget: 5, lines: [{ tokens: -1, label: "x" }] })).toThrow(
			/line "x" is not at a token level/,
		);
	});
});
