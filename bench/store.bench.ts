// npm run bench:store — the fold store and lattice on the real 2.4 MB fixture: store write
// throughput (packs, what pi-fold writes, beside the loose layout of one file per object, on two
// copies of the fixture in the same run), verifying every fold's bytes against raw node:crypto
// hashing of the same bytes, and rebuilding the lattice from the session records. Writes
// bench/results/store.json.
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionManager } from "@earendil-works/pi-coding-agent";
import { nodeCore } from "../bindings/node.ts";
import { copyFixture, FIXTURE_MISSING, hasFixture } from "../harness/fixture.ts";
import { foldEverything } from "../harness/fold-fixture.ts";
import { contextEntriesOf } from "../src/session/context-entries.ts";
import { rebuildLattice } from "../src/session/rebuild.ts";
import { FoldStore } from "../src/store/index.ts";
import { machineNotes, target } from "./lib/harness.ts";
import { median } from "./lib/stats.ts";

if (!hasFixture) {
	console.log(`bench:store ${FIXTURE_MISSING}`);
	process.exit(0);
}

const time = <T>(f: () => T): [T, number] => {
	const t = performance.now();
	const r = f();
	return [r, performance.now() - t];
};

const core = nodeCore();
const dir = mkdtempSync(join(tmpdir(), "pi-fold-bench-store-"));
const file = copyFixture(dir);
const sm = SessionManager.open(file, dir); // parsing and Pi's migration: not timed
const looseDir = join(dir, "loose");
mkdirSync(looseDir);
const looseSm = SessionManager.open(copyFixture(looseDir), looseDir);

// 1. Fold every complete tool batch and consolidate: store writes (objects + records, all durable)
//    included. The loose layout first, so both see a page cache as warm.
const [, looseMs] = time(() => foldEverything(looseSm, core, 4, "loose"));
const [folded, foldMs] = time(() => foldEverything(sm, core));
const objectBytes = folded.store.objects.stats.bytesWritten + folded.store.records.stats.bytesWritten;
const objects = folded.store.objects.stats.written + folded.store.records.stats.written;
const packs = folded.store.packs?.stats.written ?? 0;

// 2. Verify every root fold from the store alone (every leaf read and hashed), against node:crypto
//    hashing the very same leaf bytes, already in memory.
const roots = folded.lattice.visibleRoots();
const verifyRuns: number[] = [];
const cryptoRuns: number[] = [];
let leafBytes: Uint8Array[] = [];
// The first passes run in V8's baseline tiers; they are warm-up and not counted.
const hashStageRuns: number[] = [];
const stats = folded.store.objects.stats;
for (let run = 0; run < 25; run++) {
	const hashBefore = stats.hashMs;
	const [leaves, ms] = time(() => roots.flatMap((id) => folded.store.verifyFold(folded.records.get(id) ?? "").leaves));
	if (run >= 10) verifyRuns.push(ms);
	if (run >= 10) hashStageRuns.push(stats.hashMs - hashBefore);
	leafBytes = leaves.map((l) => l.bytes);
	const [, cms] = time(() => {
		for (const b of leafBytes) createHash("sha256").update(b).digest();
	});
	if (run >= 10) cryptoRuns.push(cms);
}
const verifiedBytes = leafBytes.reduce((n, b) => n + b.byteLength, 0);
// The I/O floor: only reading the store's files (its packs: every leaf object and every record), no checks at all.
const packDir = join(folded.store.root, "packs");
const files = readdirSync(packDir).map((n) => join(packDir, n));
const readOnlyMs = median(Array.from({ length: 15 }, () => time(() => files.map((f) => readFileSync(f)))[1]));
// What the least anyone could do costs: read each file and hash it with node:crypto, no structure.
const naiveMs = median(
	Array.from(
		{ length: 25 },
		() => time(() => files.map((f) => createHash("sha256").update(readFileSync(f)).digest()))[1],
	).slice(10),
);

// 3. Rebuild the lattice from the session's records, after the session is parsed.
const reopened = SessionManager.open(file, dir);
const branch = reopened.getBranch();
const contextEntries = reopened.buildContextEntries();
const store = FoldStore.forSession({ sessionFile: file, sessionId: reopened.getSessionId() }, core);
const rebuildRuns: number[] = [];
const rebuildNoStoreRuns: number[] = [];
let folds = 0;
let leafCount = 0;
for (let run = 0; run < 9; run++) {
	const [r, ms] = time(() => rebuildLattice(branch, contextEntries, core, { store }));
	if (!r.ok || r.problems.length > 0) throw new Error(`rebuild failed: ${r.ok ? r.problems[0] : r.reason}`);
	folds = r.lattice.folds().length;
	leafCount = r.context.entries.length;
	rebuildRuns.push(ms);
	rebuildNoStoreRuns.push(time(() => rebuildLattice(branch, contextEntries, core))[1]);
}
const contextBytes = contextEntriesOf(contextEntries, core).entries.reduce((n, e) => n + e.bytes, 0);

const verifyMs = median(verifyRuns);
const hashStageMs = median(hashStageRuns);
const cryptoMs = median(cryptoRuns);
const result = {
	machine: machineNotes(),
	fixture: {
		contextEntries: leafCount,
		contextBytes,
		batches: folded.batches,
		consolidations: folded.consolidations,
		folds,
	},
	write: { ms: foldMs, objects, objectBytes, packs, mbPerS: objectBytes / 1e6 / (foldMs / 1e3) },
	/** The same folds written in the loose layout (one file, one fsync per object), in the same run. */
	writeLoose: { ms: looseMs },
	verify: {
		roots: roots.length,
		leaves: leafBytes.length,
		bytes: verifiedBytes,
		medianMs: verifyMs,
		nodeCryptoMedianMs: cryptoMs,
	},
	rebuild: { medianMs: median(rebuildRuns), withoutStoreChecksMedianMs: median(rebuildNoStoreRuns), runs: rebuildRuns },
	targets: [
		{ ...target("store writes, packs vs one file per object (same folds, same run)", looseMs / foldMs, 2) },
		{
			...target(
				"verification's hashing of the leaf bytes vs node:crypto raw hashing (same bytes)",
				cryptoMs / hashStageMs,
				0.5,
			),
		},
		{
			...target(
				"whole verification, reads included, vs node:crypto raw hashing (same bytes)",
				cryptoMs / verifyMs,
				0.5,
			),
		},
		{
			...target(
				"verify vs reading the same files and hashing them with node:crypto (no checks)",
				naiveMs / verifyMs,
				0.5,
			),
		},
		{
			what: "rebuild + validate the folded fixture's lattice (ms)",
			measured: Number(median(rebuildRuns).toFixed(2)),
			target: 50,
			met: median(rebuildRuns) < 50,
		},
	],
};
console.log(`# pi-fold store benchmark (${result.machine.date})`);
console.log(
	`fixture: ${leafCount} message-producing context entries, ${(contextBytes / 1e6).toFixed(2)} MB; ${folded.batches} tool batches folded, ${folded.consolidations} consolidations, ${folds} folds`,
);
console.log("| measure | result |");
console.log("|---|---|");
console.log(
	`| fold + write store (${objects} objects, ${(objectBytes / 1e6).toFixed(2)} MB, in ${packs} packs) | ${foldMs.toFixed(0)} ms, ${result.write.mbPerS.toFixed(1)} MB/s |`,
);
console.log(`| the same in the loose layout (one file, one fsync per object) | ${looseMs.toFixed(0)} ms |`);
console.log(
	`| verify all ${roots.length} roots from the store (${leafBytes.length} leaves, ${(verifiedBytes / 1e6).toFixed(2)} MB) | ${verifyMs.toFixed(1)} ms (${(verifiedBytes / 1e6 / (verifyMs / 1e3)).toFixed(0)} MB/s) |`,
);
console.log(`| of which hashing the leaf bytes (the core's batch, Node entry) | ${hashStageMs.toFixed(1)} ms |`);
console.log(`| node:crypto hashing the same bytes in memory | ${cryptoMs.toFixed(1)} ms |`);
console.log(
	`| only reading the store's ${files.length} files, no checks (the I/O floor) | ${readOnlyMs.toFixed(1)} ms |`,
);
console.log(`| reading them and hashing each with node:crypto, no structure checks | ${naiveMs.toFixed(1)} ms |`);
console.log(`| rebuild lattice from records (with store record checks) | ${median(rebuildRuns).toFixed(1)} ms |`);
console.log(`| rebuild lattice from records (without store checks) | ${median(rebuildNoStoreRuns).toFixed(1)} ms |`);
for (const t of result.targets)
	console.log(
		`target: ${t.what}: ${t.measured} (${t.met ? "met" : "MISSED"}, needed ${t.what.includes("ms") ? "<" : ">="} ${t.target})`,
	);
mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
writeFileSync(new URL("./results/store.json", import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
rmSync(dir, { recursive: true, force: true });
