// What a newcomer reads in the demo and the replay: every less obvious row of the table is
// explained under it, and a long list of request numbers is summarised as runs, not printed whole.
import { describe, expect, it } from "vitest";
import { requestRuns } from "../src/replay/output.ts";
import { type RequestRecord, summarizeArm } from "../src/report/arm-report.ts";
import { DEFAULT_PRICE_CARD } from "../src/report/price-card.ts";
import { FRESH_ABOVE_FLOOR_ROW, renderArmTable, tableTerms } from "../src/report/table.ts";

const usage = (u: Partial<RequestRecord>): RequestRecord => {
	const r = { input: 0, cacheRead: 0, cacheWrite: 0, output: 0, ...u };
	return { ...r, promptTokens: r.input + r.cacheRead + r.cacheWrite };
};

describe("the table's terms", () => {
	const fold = summarizeArm("pi-fold", [usage({ cacheRead: 900, cacheWrite: 100, output: 10 })], DEFAULT_PRICE_CARD, {
		commits: 3,
		rewrites: { attributed: 3, unattributed: 0 },
		values: { visible: 5, recovered: 3, lost: 0 },
	});
	const native = summarizeArm("native", [usage({ cacheRead: 500, cacheWrite: 1500, output: 20 })], DEFAULT_PRICE_CARD, {
		compactions: 2,
	});

	it("explains each less obvious row the table shows, and only those", () => {
		const table = renderArmTable([fold, native], { freshInputFloor: 50 });
		const terms = tableTerms(table);
		const explained = terms.map((t) => t.slice(2, t.indexOf(": ")));
		expect(explained).toEqual([
			FRESH_ABOVE_FLOOR_ROW,
			"pooled cache share",
			"peak request context",
			"commits / compactions",
			"rewrites (attributed / unattributed)",
			"values visible / recovered / lost",
		]);
		for (const label of explained) expect(table).toContain(`| ${label} |`);
		// Without the floor, its row is neither shown nor explained.
		expect(tableTerms(renderArmTable([fold, native])).some((t) => t.includes(FRESH_ABOVE_FLOOR_ROW))).toBe(false);
	});
});

describe("request numbers in a line", () => {
	it("93 requests: runs, the first eight groups, and a count of the rest", () => {
		const requests = [
			...Array.from({ length: 40 }, (_, i) => i + 3),
			50,
			52,
			53,
			60,
			...Array.from({ length: 49 }, (_, i) => 2 * i + 70),
		];
		expect(requests).toHaveLength(93);
		const shown = requestRuns(requests);
		expect(shown).toBe("3-42, 50, 52-53, 60, 70, 72, 74, 76 and 45 more");
	});

	it("a few: every one, runs joined", () => {
		expect(requestRuns([4])).toBe("4");
		expect(requestRuns([4, 5, 6, 9])).toBe("4-6, 9");
	});
});
