// Crash safety and concurrency of the store with real child processes (Node 22, the real Wasm
// core, real fsync/link), for both layouts: a writer SIGKILLed at random points never leaves a
// partial file under a final name (a loose file or a pack), and two writers racing on the same
// objects both succeed, each object published once.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { type ContentStats, FoldStore, type StoreLayout } from "../src/store/index.ts";
import { objectBytes, objectSpecs, randInt, rng, sha256Hex } from "./fixtures/store-data.ts";
import { auditStore } from "./helpers/store-audit.ts";

const WRITER = new URL("./fixtures/store-writer.ts", import.meta.url).pathname;
const SET_SEED = 0xc0ffee;
const core = nodeCore();
const scratch = mkdtempSync(join(tmpdir(), "pi-fold-crash-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Writer {
	child: ChildProcess;
	/** Resolves with the child's stdout lines once it printed "ready". */
	ready: Promise<void>;
	/** Resolves with (exit code, signal, stdout lines after "ready", stderr). */
	exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; lines: string[]; stderr: string }>;
}

function startWriter(
	layout: StoreLayout,
	root: string,
	count: number,
	orderSeed: number,
	mode: "loop" | "once",
	missing = "",
): Writer {
	const child = spawn(
		process.execPath,
		[WRITER, root, String(SET_SEED), String(count), String(orderSeed), mode, missing],
		{
			stdio: ["pipe", "pipe", "pipe"],
			env: { ...process.env, STORE_LAYOUT: layout },
		},
	);
	let stderr = "";
	child.stderr!.on("data", (d) => {
		stderr += d;
	});
	const lines: string[] = [];
	let onReady: () => void;
	const ready = new Promise<void>((resolve) => {
		onReady = resolve;
	});
	createInterface({ input: child.stdout! }).on("line", (line) => {
		if (line === "ready") onReady();
		else lines.push(line);
	});
	const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; lines: string[]; stderr: string }>(
		(resolve) => child.on("close", (code, signal) => resolve({ code, signal, lines, stderr })),
	);
	// A child that dies before "ready" must fail the test, not hang it.
	const readyOrDead = Promise.race([
		ready,
		exit.then((e) => {
			throw new Error(`writer exited before ready (code ${e.code}, signal ${e.signal}): ${e.stderr}`);
		}),
	]);
	return { child, ready: readyOrDead, exit };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The work is bounded (a fixed number of writers, each killed or finishing), not the time: a child
 * Node takes a second to start on an idle machine and several on two busy cores, so the limit is
 * only there to end a writer that hangs, far beyond any machine's pace.
 */
const HUNG = 600_000;

describe.each(["loose", "packs"] as const)("store crash safety, %s layout", (layout) => {
	it(
		"leaves no partial file under a final name across repeated SIGKILLs; a fresh writer completes the set",
		async () => {
			const COUNT = 120;
			// Each kill lands at a random point of a writer's loop (a write, its fsync, its link, a pack).
			const KILLS = 16;
			const specs = objectSpecs(SET_SEED, COUNT);
			const hashes = specs.map((s) => sha256Hex(objectBytes(s)));
			const expected = new Set(hashes);
			const store = new FoldStore(join(scratch, `killed-${layout}`), core, { layout });
			const next = rng(0xdead);
			let previous = new Set<string>();
			let tempsSeen = 0;
			for (let k = 0; k < KILLS; k++) {
				const missing = hashes.flatMap((h, i) => (previous.has(h) ? [] : [i])).join(",");
				const writer = startWriter(layout, store.root, COUNT, k + 1, "loop", missing);
				await writer.ready;
				await sleep(randInt(next, 0, 90));
				writer.child.kill("SIGKILL");
				const { code, signal, stderr } = await writer.exit;
				// The writer never exits by itself, so it must have died of our signal, not of an error.
				expect({ code, signal, stderr }).toEqual({ code: null, signal: "SIGKILL", stderr: "" });
				const { finals, temps } = auditStore(store, expected);
				tempsSeen = Math.max(tempsSeen, temps.length);
				// Nothing published is ever lost.
				for (const h of previous) expect(finals.includes(h), `final ${h} vanished after kill ${k}`).toBe(true);
				previous = new Set(finals);
			}
			console.log(
				`crash (${layout}): ${KILLS} kills; ${previous.size}/${expected.size} objects published by killed writers; up to ${tempsSeen} leftover temp files`,
			);

			// A fresh writer finishes the same set; leftover temps do not disturb it.
			const fresh = new FoldStore(store.root, core, { layout });
			expect(fresh.putLeaves(specs.map(objectBytes))).toEqual(hashes);
			expect(fresh.objects.stats.written + fresh.objects.stats.alreadyPresent).toBe(expected.size);
			expect(fresh.objects.stats.alreadyPresent).toBe(previous.size);
			const { finals } = auditStore(fresh, expected);
			expect(finals.sort()).toEqual([...expected].sort());
			expect(fresh.objects.list()).toEqual([...expected].sort());
		},
		HUNG,
	);

	it(
		"two writers racing on the same objects both succeed; each object is published exactly once",
		async () => {
			const COUNT = 60;
			const specs = objectSpecs(SET_SEED, COUNT);
			const hashes = specs.map((s) => sha256Hex(objectBytes(s)));
			const expected = new Set(hashes);
			const store = new FoldStore(join(scratch, `raced-${layout}`), core, { layout });
			const writers = [
				startWriter(layout, store.root, COUNT, 7, "once"),
				startWriter(layout, store.root, COUNT, 7, "once"),
			];
			await Promise.all(writers.map((w) => w.ready));
			for (const w of writers) w.child.stdin!.write("go\n"); // as close to simultaneous as two pipes get
			const results = await Promise.all(writers.map((w) => w.exit));
			const stats: ContentStats[] = [];
			for (const r of results) {
				expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
				const out = JSON.parse(r.lines[0]) as { hashes: string[]; stats: ContentStats };
				expect(out.hashes).toEqual(hashes);
				stats.push(out.stats);
			}
			// Every object was linked by exactly one writer; the other found it (before or during its write).
			const sum = (f: (s: ContentStats) => number) => stats.reduce((a, s) => a + f(s), 0);
			expect(sum((s) => s.written)).toBe(expected.size);
			expect(sum((s) => s.alreadyPresent + s.raced)).toBe(expected.size);
			console.log(
				`race (${layout}): written ${stats.map((s) => s.written)}, found ${stats.map((s) => s.alreadyPresent)}, lost a link race ${stats.map((s) => s.raced)}`,
			);
			const { finals, temps } = auditStore(store, expected);
			expect(temps).toEqual([]); // both finished: each removed its own temp files
			expect(finals.sort()).toEqual([...expected].sort());
		},
		HUNG,
	);
});
