// The import graph keeps the layers of docs/ARCHITECTURE.md: data flows from Pi's events (host/)
// through the coordinator (runtime/) down to the layers below it, never back up; the agent's tool,
// the commands and the UI see the runtime only through operations/; the bindings stand alone; and
// what tests, benchmarks and the demo share lives in harness/, so bench/ and scripts/ never import
// from test/. Read from the sources themselves, relative imports only (packages are not layers).
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "..");

/**
 * The rank of each part of src/: an import from one part into another must go to a lower rank.
 * Parts of equal rank do not import each other, but for the person-facing parts (tool/,
 * commands/, ui/ and the settings file they edit), which work together.
 */
const RANKS: Record<string, number> = {
	values: 0,
	"fold-types": 0,
	lattice: 1,
	store: 1,
	core: 3,
	vocabulary: 2,
	session: 3,
	briefs: 3,
	edits: 4,
	meter: 4,
	search: 4,
	report: 4,
	policy: 5,
	operations: 6,
	runtime: 7,
	host: 8,
	settings: 9,
	tool: 9,
	commands: 9,
	ui: 9,
	replay: 10,
	view: 11,
	index: 11,
	cli: 12,
};

/** The agent's tool, the commands and the UI: they may import only these parts of src/ (and each other). */
const FRONT = new Set(["tool", "commands", "ui"]);
const FRONT_MAY_IMPORT = new Set(["operations", "vocabulary", "values", "settings", "tool", "commands", "ui"]);
/** Person-facing parts of one rank that work together. */
const together = (a: string, b: string) =>
	(FRONT.has(a) || FRONT.has(b)) && FRONT_MAY_IMPORT.has(a) && FRONT_MAY_IMPORT.has(b);

function files(dir: string): string[] {
	return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
		.filter((e) => e.isFile() && /\.(ts|js)$/.test(e.name))
		.map((e) => relative(ROOT, join(e.parentPath, e.name)).split(sep).join("/"));
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.{1,2}\/[^"]+)"|\bimport\(\s*"(\.{1,2}\/[^"]+)"\s*\)/g;

/** Every relative import in the repository: [importing file, imported file], both repo-relative. */
function importsOf(dir: string): [string, string][] {
	const out: [string, string][] = [];
	for (const file of files(dir)) {
		for (const m of readFileSync(join(ROOT, file), "utf8").matchAll(IMPORT)) {
			const target = relative(ROOT, resolve(ROOT, dirname(file), m[1] ?? m[2]))
				.split(sep)
				.join("/");
			out.push([file, target]);
		}
	}
	return out;
}

/** The part of src/ a file belongs to: its folder, or its name for a file at the top. */
function partOf(file: string): string {
	const [, first, second] = file.split("/");
	return second === undefined ? first.replace(/\.ts$/, "") : first;
}

const topOf = (file: string) => file.split("/")[0];

describe("the import graph", () => {
	const src = importsOf("src");

	it("names a rank for every part of src/", () => {
		const parts = new Set(files("src").map(partOf));
		expect([...parts].filter((p) => RANKS[p] === undefined)).toEqual([]);
	});

	it("goes down the layers in src/: no part imports one of its own rank or above", () => {
		const up = src.filter(([from, to]) => {
			if (topOf(to) !== "src") return false;
			const a = partOf(from);
			const b = partOf(to);
			return a !== b && !together(a, b) && RANKS[b] >= RANKS[a];
		});
		expect(up).toEqual([]);
	});

	it("lets tool/, commands/ and ui/ reach the runtime only through operations/", () => {
		const reach = src.filter(([from, to]) => {
			if (!FRONT.has(partOf(from))) return false;
			return topOf(to) !== "src" || !FRONT_MAY_IMPORT.has(partOf(to));
		});
		expect(reach).toEqual([]);
	});

	it("keeps the bindings on their own, and src/ off the tests, benchmarks and scripts", () => {
		expect(importsOf("bindings").filter(([, to]) => topOf(to) !== "bindings")).toEqual([]);
		expect(src.filter(([, to]) => ["test", "bench", "scripts", "harness"].includes(topOf(to)))).toEqual([]);
	});

	it("shares test helpers through harness/: bench/, scripts/ and harness/ never import from test/", () => {
		const shared = [...importsOf("bench"), ...importsOf("scripts"), ...importsOf("harness")];
		expect(shared.filter(([, to]) => topOf(to) === "test")).toEqual([]);
		expect(importsOf("harness").filter(([, to]) => ["bench", "scripts"].includes(topOf(to)))).toEqual([]);
	});
});

describe("who registers Pi handlers", () => {
	// docs/ARCHITECTURE.md: the runtime hears Pi through host/hooks.ts; three person-facing parts
	// listen for the session changing under them; nothing else calls pi.on.
	const ALLOWED = [
		"src/commands/fold-settings.ts",
		"src/host/hooks.ts",
		"src/ui/fold-bar.ts",
		"src/ui/tool-renderer.ts",
	];

	it("only the files the architecture names call pi.on", () => {
		const calling = files("src").filter((f) => /\bpi\.on\(/.test(readFileSync(join(ROOT, f), "utf8")));
		expect(calling.sort()).toEqual(ALLOWED);
	});
});

describe("who changes the open session's lattice", () => {
	// docs/ARCHITECTURE.md: the open session is a reduction of Pi's session, and its sync is the one
	// writer of the lattice. Handlers plan on a working copy (OpenSession.workingCopy, named `work`
	// wherever it is changed) and propose; nothing else sets or changes the open lattice in place.
	const MUTATORS =
		"mark|markMany|brief|setDeterministicBrief|unmark|reboundary|pin|unpin|commit|expand|refold|consolidate|extend";
	const REDUCTION = "src/session/open-session.ts";
	const outsideLattice = () => files("src").filter((f) => !f.startsWith("src/lattice/"));
	const hits = (pattern: RegExp) =>
		outsideLattice().flatMap((f) =>
			readFileSync(join(ROOT, f), "utf8")
				.split("\n")
				.flatMap((line, i) => (pattern.test(line) ? [`${f}:${i + 1}: ${line.trim()}`] : [])),
		);

	it("only the reduction sets a lattice that is not a working copy's", () => {
		const set = hits(/[\w)\]]\.lattice\s*=(?!=)/).filter((h) => !/\bwork\.lattice\s*=/.test(h));
		const where = new Set(set.map((h) => h.split(":")[0]));
		expect([...where]).toEqual([REDUCTION]);
		// In it, only the sync's adoption of a proposal (the rebuild makes a new open session whole).
		expect(set.filter((h) => /\bopen\.lattice\s*=/.test(h))).toHaveLength(1);
	});

	it("nothing outside the reduction calls a changing lattice method on a session's lattice", () => {
		const called = hits(new RegExp(`\\.lattice\\.(${MUTATORS})\\(`)).filter((h) => !h.startsWith(REDUCTION));
		expect(called).toEqual([]);
		expect(hits(new RegExp(`\\.lattice\\.(${MUTATORS})\\(`)).length).toBeGreaterThan(0);
	});

	it("no way around sync: no setter of the open lattice besides it", () => {
		expect(hits(/\b(replaceLattice|changeWindow)\b|\.adopt\(/)).toEqual([]);
	});
});
