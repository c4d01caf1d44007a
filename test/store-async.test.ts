// The async publication path (publishAllAsync / putManyAsync / putLeavesAsync): the same files,
// modes, outcomes and errors as the sync path, and the same crash safety, checked with a real child
// writer SIGKILLed at random points while many fsyncs are in flight.
import { type ChildProcess, spawn } from "node:child_process";
import {
	chmodSync,
	lstatSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { publishAllAsync } from "../src/store/atomic.ts";
import { FoldStore, isStoreError } from "../src/store/index.ts";
import { isQuarantineName } from "../src/store/objects.ts";
import { objectBytes, objectSpecs, randInt, rng, sha256Hex } from "./fixtures/store-data.ts";
import { auditStore, storeNames } from "./helpers/store-audit.ts";

const WRITER = new URL("./fixtures/store-writer-async.ts", import.meta.url).pathname;
const SET_SEED = 0xa5e7;
const core = nodeCore();
/** The layout of one file per object, whose files these tests look at under their final names. */
const LOOSE = { layout: "loose" } as const;
const scratch = mkdtempSync(join(tmpdir(), "pi-fold-async-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function errorOf(f: () => unknown): Promise<unknown> {
	try {
		await f();
	} catch (err) {
		return err;
	}
	throw new Error("expected a failure");
}

describe("async store writes", () => {
	it("store the same verified, read-only files as the sync path; a second put writes nothing", async () => {
		const spans = objectSpecs(SET_SEED, 150).map(objectBytes);
		const sync = new FoldStore(join(scratch, "sync"), core, LOOSE);
		const async = new FoldStore(join(scratch, "async"), core, LOOSE);
		const expected = sync.putLeaves(spans);
		// Duplicates in one batch are written once.
		expect(await async.putLeavesAsync([...spans, spans[0]])).toEqual([...expected, expected[0]]);
		expect(async.objects.list()).toEqual(sync.objects.list());
		expect(async.objects.stats.written).toBe(new Set(expected).size);
		for (const hash of expected) {
			expect(sha256Hex(async.objects.read(hash))).toBe(hash);
			expect(lstatSync(async.objects.pathOf(hash)).mode & 0o777).toBe(0o444);
		}
		expect(storeNames(async).temps).toEqual([]);
		const again = new FoldStore(async.root, core, LOOSE);
		expect(await again.putLeavesAsync(spans)).toEqual(expected);
		expect(again.objects.stats.written).toBe(0);
		expect(again.objects.stats.alreadyPresent).toBe(new Set(expected).size);
	});

	it("never replaces an existing final name; a corrupt one is set aside and rewritten, as on the sync path", async () => {
		const store = new FoldStore(join(scratch, "existing"), core, LOOSE);
		const good = new TextEncoder().encode("the real bytes");
		const hash = sha256Hex(good);
		const dir = join(store.objects.dir, hash.slice(0, 2));
		mkdirSync(dir, { recursive: true });
		writeFileSync(join(dir, hash), "corrupt");
		chmodSync(join(dir, hash), 0o444);
		// A link that finds the name taken reports "exists" and touches nothing.
		expect(await publishAllAsync([{ dir, name: hash, bytes: good }])).toEqual(["exists"]);
		expect(readFileSync(join(dir, hash), "utf8")).toBe("corrupt");
		expect(await store.objects.putManyAsync([good])).toEqual([hash]);
		expect(readFileSync(join(dir, hash), "utf8")).toBe("the real bytes");
		// Shorter than the real bytes: set aside as truncated, kept under its quarantine name.
		expect(store.objects.quarantined.map((q) => q.reason)).toEqual(["truncated: 7 of 14 bytes"]);
		expect(readFileSync(store.objects.quarantined[0].movedTo, "utf8")).toBe("corrupt");
		expect(storeNames(store).temps.filter((n) => !isQuarantineName(n))).toEqual([]);
	});

	it("fails like the sync path when a directory cannot be made, and publishes nothing", async () => {
		const root = join(scratch, "blocked");
		const store = new FoldStore(root, core, LOOSE);
		mkdirSync(root, { recursive: true });
		writeFileSync(store.objects.dir, "a file where the objects directory should be");
		const spans = objectSpecs(SET_SEED + 1, 5).map(objectBytes);
		const asyncErr = await errorOf(() => store.putLeavesAsync(spans));
		const syncErr = await errorOf(() => store.putLeaves(spans));
		expect(isStoreError(asyncErr, "IO")).toBe(true);
		expect((asyncErr as Error).message).toBe((syncErr as Error).message);
		expect(readdirSync(root)).toEqual(["objects"]);
	});
});

describe.each(["loose", "packs"] as const)("async writer crash safety, %s layout", (layout) => {
	it("leaves no partial file under a final name across repeated SIGKILLs of an async writer", async () => {
		const COUNT = 120;
		const KILLS = 20;
		const specs = objectSpecs(SET_SEED, COUNT);
		const hashes = specs.map((s) => sha256Hex(objectBytes(s)));
		const expected = new Set(hashes);
		const store = new FoldStore(join(scratch, `killed-${layout}`), core, { layout });
		const next = rng(0xbeef);
		let previous = new Set<string>();
		for (let k = 0; k < KILLS; k++) {
			const missing = hashes.flatMap((h, i) => (previous.has(h) ? [] : [i])).join(",");
			const child = spawn(
				process.execPath,
				[WRITER, store.root, String(SET_SEED), String(COUNT), String(k + 1), missing],
				{ stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, STORE_LAYOUT: layout } },
			);
			const exit = waitExit(child);
			await new Promise<void>((resolve, reject) => {
				createInterface({ input: child.stdout! }).on("line", (line) => line === "ready" && resolve());
				exit.then((e) => reject(new Error(`writer exited before ready: ${JSON.stringify(e)}`)));
			});
			await new Promise((resolve) => setTimeout(resolve, randInt(next, 0, 90)));
			child.kill("SIGKILL");
			// The writer never exits by itself, so it must have died of our signal, not of an error.
			expect(await exit).toEqual({ code: null, signal: "SIGKILL", stderr: "" });
			const { finals } = auditStore(store, expected);
			// Nothing published is ever lost.
			for (const h of previous) expect(finals.includes(h), `final ${h} vanished after kill ${k}`).toBe(true);
			previous = new Set(finals);
		}
		// A fresh async writer finishes the set; leftover temps do not disturb it.
		const fresh = new FoldStore(store.root, core, { layout });
		expect(await fresh.putLeavesAsync(specs.map(objectBytes))).toEqual(hashes);
		expect(fresh.objects.stats.alreadyPresent).toBe(previous.size);
		expect(fresh.objects.list()).toEqual([...expected].sort());
	}, 300_000);
});

function waitExit(
	child: ChildProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
	let stderr = "";
	child.stderr!.on("data", (d) => {
		stderr += d;
	});
	return new Promise((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stderr })));
}
