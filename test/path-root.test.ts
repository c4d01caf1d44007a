// A directory many calls share, declared once in a consolidation's brief as $R: which one is chosen,
// how index lines write it, and that a reader puts it back exactly.
import { describe, expect, it } from "vitest";
import { declareRoot, rootExpanded, sharedRoot, underRoot } from "../src/briefs/path-root.ts";

const repo = "/Users/someone/workspaces/project";
const texts = [
	`${repo}/packages/app/src/main.ts`,
	`${repo}/packages/app/src/cli.ts`,
	`cd ${repo} && npm run check`,
	`cd ${repo} && git status`,
	`grep -n "x" ${repo}/packages/app/docs/notes.md`,
	`${repo}/README.md`,
];

describe("sharedRoot", () => {
	it("picks the directory whose naming once saves the most, a whole directory, even where a command cds into it", () => {
		expect(sharedRoot(texts)).toBe(repo);
	});

	it("never takes the tail of a relative path for a root", () => {
		const relative = Array.from({ length: 8 }, (_, k) => `modes/interactive/components/file-${k}.js`);
		expect(sharedRoot(relative)).toBeUndefined();
		expect(underRoot("/interactive/components")("modes/interactive/components/a.js")).toBe(
			"modes/interactive/components/a.js",
		);
	});

	it("declines when the saving does not pay for the declaration, or a text already holds $R", () => {
		expect(sharedRoot([`${repo}/a.ts`])).toBeUndefined();
		expect(sharedRoot(["src/a.ts", "src/b.ts", "src/c.ts"])).toBeUndefined();
		expect(sharedRoot([...texts, "echo $R"])).toBeUndefined();
	});
});

describe("underRoot and rootExpanded", () => {
	it("write the root as $R only where it is a whole directory, and read back to the very same text", () => {
		const short = underRoot(repo);
		expect(short(`${repo}/packages/app/src/main.ts`)).toBe("$R/packages/app/src/main.ts");
		expect(short(`cd ${repo} && git status`)).toBe("cd $R && git status");
		// A longer directory that only starts like the root stays as it is.
		expect(short(`${repo}-old/x.ts`)).toBe(`${repo}-old/x.ts`);
		const lines = [declareRoot(repo), ...texts.map(short)];
		expect(rootExpanded(lines)).toEqual([declareRoot(repo), ...texts]);
	});

	it("leave a brief without a declaration as it is", () => {
		expect(underRoot(undefined)("/a/b")).toBe("/a/b");
		expect(rootExpanded(["- f0123456789 batch: read $R/x"])).toEqual(["- f0123456789 batch: read $R/x"]);
	});
});
