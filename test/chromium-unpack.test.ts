// Unpacking the npm-pinned Chromium (harness/chromium.ts) must not fail on a busy machine: with
// its reads slowed down (a throttled stream plays a slow disk) and with two unpacks racing for the
// same cache folder. The package here is a small one of the same shape (bin/chromium.br and
// bin/al2023.tar.br, made with the system's tar), so the test needs neither the 200 MB browser nor
// a run of it. The archive carries zeros after its end-of-archive marker, as tar's record padding
// does: tar stops reading at the marker and exits while the rest is still on its way.
import { execFileSync } from "node:child_process";
import {
	createReadStream,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readdirSync,
	readFileSync,
	rmSync,
	writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { brotliCompressSync } from "node:zlib";
import { afterAll, describe, expect, it } from "vitest";
import { type OpenSource, unpackChromium } from "../harness/chromium.ts";

const root = mkdtempSync(join(tmpdir(), "pi-fold-unpack-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Bytes that do not compress to nothing, the same on every run. */
function bytes(n: number, seed: number): Buffer {
	const out = Buffer.alloc(n);
	let x = seed >>> 0 || 1;
	for (let i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >>> 17;
		x ^= x << 5;
		out[i] = x & 0xff;
	}
	return out;
}

const BINARY = Buffer.concat([Buffer.from("#!/bin/sh\necho chromium\n"), bytes(200_000, 7)]);
const LIBRARY = bytes(300_000, 11);

/** A package folder shaped like @sparticuz/chromium's. */
function fakePackage(): { dir: string; version: string } {
	const dir = join(root, "package");
	if (existsSync(dir)) return { dir, version: "1.0.0" };
	const staging = join(root, "staging");
	mkdirSync(join(staging, "lib"), { recursive: true });
	writeFileSync(join(staging, "lib", "libnss3.so"), LIBRARY);
	const tar = execFileSync("tar", ["-c", "-C", staging, "lib"], { maxBuffer: 64 << 20 });
	mkdirSync(join(dir, "bin"), { recursive: true });
	writeFileSync(join(dir, "bin", "chromium.br"), brotliCompressSync(BINARY));
	// Zeros past the end-of-archive marker: tar never reads them.
	writeFileSync(join(dir, "bin", "al2023.tar.br"), brotliCompressSync(Buffer.concat([tar, Buffer.alloc(256 * 1024)])));
	return { dir, version: "1.0.0" };
}

/** A slow disk: the file arrives in small pieces, each after a pause. */
const slowDisk: OpenSource = (path) =>
	Readable.from(
		(async function* () {
			for await (const chunk of createReadStream(path, { highWaterMark: 1024 })) {
				await sleep(1);
				yield chunk;
			}
		})(),
	);

function expectUnpacked(dir: string): void {
	expect(readFileSync(join(dir, "chromium")).equals(BINARY)).toBe(true);
	expect(readFileSync(join(dir, "lib", "libnss3.so")).equals(LIBRARY)).toBe(true);
	// Only what the archives hold: no leftover of the unpack itself.
	expect(readdirSync(dir).sort()).toEqual(["chromium", "lib"]);
}

describe("unpacking the pinned Chromium", () => {
	it("unpacks whole from a slow disk, though tar stops reading at its end-of-archive marker", async () => {
		const cache = join(root, "cache-slow");
		const dir = await unpackChromium(fakePackage(), cache, slowDisk);
		expectUnpacked(dir);
		expect(readdirSync(cache)).toEqual(["1.0.0"]);
	});

	it("two unpacks at once into one cache both get the same whole folder, and no temporary folder stays", async () => {
		const cache = join(root, "cache-race");
		const pkg = fakePackage();
		// Each caller checks its folder the moment its unpack returns, while the other may still run.
		const unpackAndCheck = async (open?: OpenSource) => {
			const dir = await unpackChromium(pkg, cache, open);
			expectUnpacked(dir);
			return dir;
		};
		const [a, b] = await Promise.all([unpackAndCheck(slowDisk), unpackAndCheck(slowDisk), unpackAndCheck()]);
		expect(new Set([a, b])).toEqual(new Set([join(cache, "1.0.0")]));
		expect(readdirSync(cache)).toEqual(["1.0.0"]);
	});

	it("a second unpack finds the first one's folder and leaves it as it is", async () => {
		const cache = join(root, "cache-again");
		const pkg = fakePackage();
		const first = await unpackChromium(pkg, cache);
		writeFileSync(join(first, "lib", "marker"), "kept");
		const opened: string[] = [];
		const again = await unpackChromium(pkg, cache, (path) => {
			opened.push(path);
			return createReadStream(path);
		});
		expect(again).toBe(first);
		expect(opened).toEqual([]);
		expect(readFileSync(join(first, "lib", "marker"), "utf8")).toBe("kept");
	});
});
