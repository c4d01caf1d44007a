// `npm run demo` (scripts/demo.ts) as a person runs it: a child Node process with a clean, isolated
// environment, here with few stages and a temp output dir. It starts with three plain lines (kept,
// what native lost, cost against native), then prints the three-arm table, the planted values and
// what is simulated, and writes a chart (SVG) and the JSON; no target verdicts (those are the
// benchmark's); a bad flag is refused with a clear message and writes nothing. Piped, it writes
// nothing on stderr; on a terminal (a pty) a status line says which arm and stage run, and is wiped
// before the results. Nothing here is timed.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ARMS } from "../bench/lib/session-arms.ts";
import { nodeCore } from "../bindings/node.ts";
import { piEnv, removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { startPty } from "../harness/pty.ts";
import { FRESH_ABOVE_FLOOR_ROW, OVER_WINDOW_ROW } from "../src/report/table.ts";
import { sessionView } from "../src/view/session-view.ts";
import { childEnv, REPO_ROOT, type RunResult, run } from "./helpers/pi-cli.ts";

const DEMO = join(REPO_ROOT, "scripts/demo.ts");
const STAGES = 6;

function demo(args: string[]): Promise<RunResult> {
	return run(process.execPath, [DEMO, ...args], { cwd: REPO_ROOT, env: childEnv(piEnv()), timeoutMs: 240_000 });
}

let out: string;
let result: RunResult;

beforeAll(async () => {
	out = tempDir("demo-out");
	result = await demo(["--stages", String(STAGES), "--out-dir", out]);
}, 300_000);
afterAll(() => removeTempDirs());

describe("npm run demo", () => {
	it("ends telling how to see pi-fold's session in a browser, and keeps that session whole", () => {
		const lines = result.stdout.trimEnd().split("\n");
		const command = lines.find((l) => l.trim().startsWith("npm run view -- "));
		expect(command, result.stdout.slice(-600)).toBeDefined();
		expect(lines.indexOf(command as string)).toBeGreaterThan(lines.length - 4);
		const [, file, flag, window] = /npm run view -- (\S+) (--window) (\d+)$/.exec(command as string) ?? [];
		expect(flag).toBe("--window");
		expect(file).toBe(join(out, "sessions", "equal-pi-fold.jsonl"));
		expect(Number(window)).toBe(JSON.parse(readFileSync(join(out, "session.json"), "utf8")).config.contextWindow);
		// The kept copy opens with its store: every fold its records name is there and whole.
		const { data } = sessionView(file, nodeCore());
		expect(data.requests.length).toBeGreaterThan(STAGES);
		expect(data.folds.filter((f) => f.state === "damaged")).toEqual([]);
		expect(data.folds.length + data.requests.filter((r) => r.pending > 0).length).toBeGreaterThan(0);
	});

	it("starts with three plain lines, each against native, before any table, and shows no target verdict", () => {
		const [kept, lost, cost, blank] = result.stdout.split("\n");
		const json = JSON.parse(readFileSync(join(out, "session.json"), "utf8"));
		const f = json.arms["pi-fold"].report;
		const n = json.arms.native.report;
		expect(kept).toBe(
			`Kept: with pi-fold, ${f.values.visible + f.values.recovered} of the ${STAGES} values planted along the session could still be read (${f.values.visible} in the window, ${f.values.recovered} read back byte for byte from its fold store).`,
		);
		expect(lost).toMatch(
			new RegExp(
				`^Native lost: with Pi's own compaction, ${n.values.lost} of the ${STAGES} (was|were) gone for good \\(`,
			),
		);
		expect(cost).toMatch(
			/^Cost: pi-fold \$\d+\.\d\d vs native \$\d+\.\d\d \(\d+\.\d\dx\); tokens sent [\d,]+ vs [\d,]+ \(\d+\.\d\dx\); largest request [\d,]+ vs [\d,]+ tokens\.$/,
		);
		expect(cost).toContain(
			`largest request ${f.peakPromptTokens.toLocaleString("en-US")} vs ${n.peakPromptTokens.toLocaleString("en-US")} tokens`,
		);
		expect(blank).toBe("");
		for (const verdict of ["MISSED", "## Targets", "fresh-input target:"]) expect(result.stdout).not.toContain(verdict);
	});

	it("exits 0 and prints the side-by-side table of pi-fold, native and none with the floor rows", () => {
		expect(result.stderr).toBe("");
		expect(result.code).toBe(0);
		const lines = result.stdout.split("\n");
		expect(lines).toContain("|  | pi-fold | native | none | pi-fold / native |");
		expect(lines.some((l) => l.startsWith(`| ${FRESH_ABOVE_FLOOR_ROW} |`))).toBe(true);
		expect(lines.some((l) => l.startsWith(`| ${OVER_WINDOW_ROW} |`))).toBe(true);
		expect(result.stdout).toMatch(/^fresh-input floor: [\d,]+ tokens/m);
	});

	it("prints an outcome per planted value for every arm, and says what is simulated and what is real", () => {
		expect(result.stdout).toContain("| stage | value | pi-fold | pi-fold without search | native | none |");
		const rows = result.stdout.split("\n").filter((l) => /^\| \d+ \| `chk-[0-9a-f]{16}` \|/.test(l));
		expect(rows).toHaveLength(STAGES); // one value per stage when there are fewer than 8 stages
		for (const row of rows) expect(row.split(" | ").slice(2)).toHaveLength(4);
		expect(result.stdout).toContain("only the model is simulated");
		expect(result.stdout).toContain("Pi 1.6's AgentSession");
	});

	it("writes an SVG chart with one line per arm and prints its path", () => {
		const svg = join(out, "session.svg");
		expect(result.stdout).toContain(`chart: ${svg}`);
		const text = readFileSync(svg, "utf8");
		expect(text.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg"')).toBe(
			true,
		);
		expect(text.trimEnd().endsWith("</svg>")).toBe(true);
		expect(text.match(/<polyline /g)).toHaveLength(3);
	});

	it("writes JSON that parses, holds the three arms and the floor analysis, and prints its path", () => {
		const file = join(out, "session.json");
		expect(result.stdout).toContain(`json:  ${file}`);
		const json = JSON.parse(readFileSync(file, "utf8"));
		expect(Object.keys(json.arms)).toEqual(["pi-fold", "native", "none"]);
		expect(json.config.stages).toBe(STAGES);
		expect(json.command).toBe(`node scripts/demo.ts --stages ${STAGES} --out-dir ${out}`);
		for (const arm of Object.values(json.arms) as { requests: unknown[]; report: { requests: number } }[]) {
			expect(arm.requests.length).toBe(arm.report.requests);
			expect(arm.requests.length).toBeGreaterThan(STAGES);
		}
		expect(json.freshInputFloor.floor).toBe(json.arms.none.report.freshInput);
		expect(json.arms.none.piSettings.compaction.enabled).toBe(false);
		expect(json.health).toEqual([]);
	});

	it("refuses a bad flag with a clear message, exit code 2, and writes nothing", async () => {
		const dir = join(tempDir("demo-bad"), "out");
		const bad = await demo(["--stages", "0", "--out-dir", dir]);
		expect(bad.code).toBe(2);
		expect(bad.stderr).toContain('pi-fold demo: --stages must be a whole number >= 1, got "0"');
		expect(bad.stdout).toBe("");
		expect(existsSync(dir)).toBe(false);
		const unknown = await demo(["--stage", "4"]);
		expect(unknown.code).toBe(2);
		expect(unknown.stderr).toMatch(/pi-fold demo: .*--stage/);
	});
});

describe("npm run demo on a terminal", () => {
	it("says which run, arm and stage is going on one status line, and wipes it before the results", async () => {
		const stages = 2;
		// Tall enough that the whole output stays on the screen.
		const pty = startPty(
			[process.execPath, DEMO, "--stages", String(stages), "--no-warmup", "--out-dir", tempDir("demo-tty")],
			{
				cwd: REPO_ROOT,
				env: childEnv(piEnv()),
				cols: 200,
				rows: 400,
			},
		);
		try {
			const screen = await pty.waitFor(
				(rows) => rows.some((r) => r.startsWith("json:")),
				"the demo's results",
				110_000,
			);
			const drawn = pty.drawn();
			// Every run the comparison makes, numbered of the same total, each through every stage.
			const runs = new Map<number, { name: string; total: number; stages: Set<number> }>();
			for (const m of drawn.matchAll(/pi-fold demo: run (\d+)\/(\d+), (.+?): stage (\d+)\/(\d+)/g)) {
				expect(Number(m[5])).toBe(stages);
				const run = runs.get(Number(m[1])) ?? { name: m[3], total: Number(m[2]), stages: new Set<number>() };
				expect(run.name).toBe(m[3]);
				run.stages.add(Number(m[4]));
				runs.set(Number(m[1]), run);
			}
			const total = runs.get(1)?.total ?? 0;
			expect([...runs.keys()].sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
			for (const run of runs.values()) {
				expect(run.total).toBe(total);
				expect([...run.stages].sort()).toEqual(Array.from({ length: stages }, (_, i) => i + 1));
			}
			// Without the warm-up (a run of each arm the demo makes first, shown as "warm-up <arm>"): the
			// arms first, then pi-fold without search.
			const first = [...ARMS, "pi-fold without search"];
			expect(first.map((_, i) => runs.get(i + 1)?.name)).toEqual(first);
			expect(screen.some((r) => r.startsWith("Kept: with pi-fold"))).toBe(true);
			expect(screen.filter((r) => r.includes("pi-fold demo:"))).toEqual([]);
		} finally {
			await pty.close();
		}
	}, 300_000);
});
