// Corruption: a store with many folds (nested ones too); for each of many random objects or
// records, one at a time: flip a byte, truncate it or delete it (loose layout: its file; pack
// layout: a byte of its entry in its pack). Every fold that depends on it is refused with an error
// naming the fold path, the entry and both hashes; every other fold still verifies. The bytes are
// restored between cases (a deleted file is moved aside, never lost).
import { chmodSync, closeSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { FoldStore, StoreError, type StoreLayout } from "../src/store/index.ts";
import {
	type BuiltFold,
	buildFold,
	type ChildSpec,
	overwrite,
	randInt,
	rng,
	sha256Hex,
	syntheticEntry,
} from "./fixtures/store-data.ts";
import { packNames, readPackFile } from "./helpers/store-audit.ts";

const SEED = 0x5eed_c0de;
const CASES = 60;

const scratch = mkdtempSync(join(tmpdir(), "pi-fold-corruption-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe.each(["loose", "packs"] as const)("%s layout", (layout: StoreLayout) => {
	const store = FoldStore.forSession(
		{ sessionFile: join(scratch, layout, "session.jsonl"), sessionId: "0198c5a2-0000-7000-8000-corruption" },
		nodeCore(),
		{ layout },
	);
	const next = rng(SEED);
	const folds: BuiltFold[] = [];
	/** For each stored file: which kind, and for an object its entry id and length. */
	const files = new Map<string, { kind: "object"; entryId: string; bytes: number } | { kind: "record" }>();

	function track(fold: BuiltFold): BuiltFold {
		folds.push(fold);
		for (const leaf of fold.leaves) {
			files.set(leaf.hash, { kind: "object", entryId: leaf.entryId, bytes: Buffer.byteLength(leaf.json) });
		}
		for (const r of fold.records) files.set(r, { kind: "record" });
		return fold;
	}

	/** Fold ids from `fold` down to the fold that lists `target` (a leaf hash or a record hash). */
	function trailTo(fold: BuiltFold, target: string): string[] | undefined {
		if (fold.recordHash === target) return [fold.id];
		for (const child of fold.record.children) {
			if (child.type === "leaf" && child.hash === target) return [fold.id];
			if (child.type === "fold") {
				const sub = trailTo(folds.find((f) => f.recordHash === child.record)!, target);
				if (sub) return [fold.id, ...sub];
			}
		}
		return undefined;
	}

	beforeAll(() => {
		const entries = Array.from({ length: 120 }, (_, i) => syntheticEntry(next, i, randInt(next, 80, 6000)));
		const base: BuiltFold[] = [];
		const raw: (typeof entries)[number][] = [];
		for (let i = 0, chunk = 0; i < entries.length; chunk++) {
			const n = randInt(next, 1, 6);
			const span = entries.slice(i, i + n);
			i += n;
			if (chunk % 6 === 5)
				raw.push(...span); // some entries stay unfolded, for consolidations to include
			else
				base.push(
					track(
						buildFold(
							store,
							span.map((entry) => ({ entry })),
							next() < 0.5 ? "tool-batch" : "chapter",
						),
					),
				);
		}
		// Consolidations over base folds and raw entries, and one consolidation of consolidations.
		const consolidate = (children: ChildSpec[]) => track(buildFold(store, children, "consolidation"));
		const c1 = consolidate([{ fold: base[0] }, { fold: base[1] }, { entry: raw[0] }, { fold: base[2] }]);
		const c2 = consolidate([{ fold: base[3] }, { entry: raw[1] }, { fold: base[4] }]);
		const c3 = consolidate([{ fold: c1 }, { fold: base[5] }, { fold: c2 }, { entry: raw[2] }]);
		consolidate([{ fold: c3 }, { fold: base[6] }]);
		consolidate([{ fold: base[7] }, { fold: base[8] }, { fold: base[9] }]);
	});

	function verifyAll(): Map<string, StoreError | undefined> {
		const out = new Map<string, StoreError | undefined>();
		for (const fold of folds) {
			try {
				const v = store.verifyFold(fold.recordHash, { id: fold.id, identity: fold.identity });
				expect(v.leaves.map((l) => l.hash)).toEqual(fold.leaves.map((l) => l.hash));
				v.leaves.forEach((l, i) => {
					expect(Buffer.from(l.bytes).toString("utf8")).toBe(fold.leaves[i].json);
				});
				out.set(fold.id, undefined);
			} catch (err) {
				if (!(err instanceof StoreError)) throw err;
				out.set(fold.id, err);
			}
		}
		return out;
	}

	/** Verify every fold after one corruption: exactly the folds above the target are refused, as the mode says. */
	function checkCase(
		i: number,
		mode: "flip" | "truncate" | "delete",
		target: string,
		info: { kind: "object"; entryId: string; bytes: number } | { kind: "record" },
		content: FoldStore["objects"],
		corrupted: Buffer | undefined,
	): void {
		const label = `case ${i} (seed ${SEED}): ${mode} ${info.kind} ${target}`;
		const code =
			mode === "delete" ? "MISSING" : mode === "truncate" && info.kind === "object" ? "TRUNCATED" : "MISMATCH";

		const results = verifyAll();
		let affected = 0;
		for (const fold of folds) {
			const trail = trailTo(fold, target);
			const err = results.get(fold.id);
			if (!trail) {
				expect(err?.message, `${label}: fold ${fold.id} is not affected`).toBeUndefined();
				continue;
			}
			affected++;
			expect(err, `${label}: fold ${fold.id} must be refused`).toBeInstanceOf(StoreError);
			const e = err!;
			expect(e.code, `${label}: ${e.message}`).toBe(code);
			const entry = info.kind === "object" ? `entry ${info.entryId}: ` : "";
			expect(
				e.message.startsWith(`fold ${trail.join(" > ")}: ${entry}${info.kind} ${target} `),
				`${label}: ${e.message}`,
			).toBe(true);
			expect(e.fold).toBe(trail[trail.length - 1]);
			expect(e.expected).toBe(target);
			if (info.kind === "object") expect(e.entry).toBe(info.entryId);
			if (corrupted) {
				const actual = sha256Hex(corrupted);
				expect(e.actual).toBe(actual);
				expect(e.message).toContain(`expected sha256 ${target}, found ${actual}`);
			}
			if (code === "TRUNCATED" && info.kind === "object") {
				expect(e.message).toContain(`expected ${info.bytes} bytes, found ${corrupted!.length}`);
			}
		}
		expect(affected, label).toBeGreaterThan(0);

		// A direct read is refused the same way.
		expect(() => content.read(target, info.kind === "object" ? { bytes: info.bytes } : undefined)).toThrow(
			expect.objectContaining({ code, expected: target }),
		);
	}

	describe("a store under corruption", () => {
		it("is built with nested folds, and every fold verifies", () => {
			expect(folds.length).toBeGreaterThan(20);
			expect(folds.some((f) => f.record.children.some((c) => c.type === "fold" && trailTo(f, c.record)))).toBe(true);
			expect([...verifyAll().values()].every((e) => e === undefined)).toBe(true);
			expect(store.objects.list().length + store.records.list().length).toBe(files.size);
		});

		it(`refuses exactly the affected folds, naming them, over ${CASES} random corruptions`, () => {
			const targets = [...files.keys()];
			// A pack entry can only be flipped in place: cutting or removing one would take its neighbours.
			const modes = layout === "loose" ? (["flip", "truncate", "delete"] as const) : (["flip"] as const);
			const aside = join(scratch, "moved-aside");
			for (let i = 0; i < CASES; i++) {
				const mode = modes[i % modes.length];
				const target = targets[randInt(next, 0, targets.length - 1)];
				const info = files.get(target)!;
				const content = info.kind === "object" ? store.objects : store.records;
				if (layout === "packs") {
					const { restore, corrupted } = flipInPack(store, target);
					checkCase(i, "flip", target, info, content, corrupted);
					restore();
					expect(sha256Hex(content.read(target)), `case ${i}: restored`).toBe(target);
					continue;
				}
				const path = content.pathOf(target);
				const original = readFileSync(path);
				let corrupted: Buffer | undefined;
				if (mode === "flip") {
					corrupted = Buffer.from(original);
					corrupted[randInt(next, 0, corrupted.length - 1)] ^= randInt(next, 1, 255);
					overwrite(path, corrupted);
				} else if (mode === "truncate") {
					corrupted = original.subarray(0, randInt(next, 0, original.length - 1));
					overwrite(path, corrupted);
				} else {
					renameSync(path, aside);
				}
				checkCase(i, mode, target, info, content, corrupted);

				if (mode === "delete") renameSync(aside, path);
				else overwrite(path, original);
				expect(Buffer.from(content.read(target)).equals(original), `case ${i}: restored`).toBe(true);
			}
			expect([...verifyAll().values()].every((e) => e === undefined)).toBe(true);
		});
	});
});

/** Flip one byte of `hash`'s entry inside its pack (in place: its neighbours stay intact); returns how to undo it. */
function flipInPack(store: FoldStore, hash: string): { corrupted: Buffer; restore: () => void } {
	for (const name of packNames(store).packs) {
		const path = join(store.root, "packs", name);
		const entry = readPackFile(path).find((e) => e.hash === hash);
		if (!entry) continue;
		const corrupted = Buffer.from(entry.bytes);
		const at = corrupted.length - 1 - (hash.charCodeAt(0) % corrupted.length);
		corrupted[at] ^= 0x5a;
		const write = (bytes: Buffer) => {
			chmodSync(path, 0o644);
			const fd = openSync(path, "r+");
			writeSync(fd, bytes, 0, bytes.length, entry.offset);
			closeSync(fd);
			chmodSync(path, 0o444);
		};
		const original = Buffer.from(entry.bytes);
		write(corrupted);
		return { corrupted, restore: () => write(original) };
	}
	throw new Error(`${hash} is in no pack`);
}
