// Which Chromium the browser test drives. CHROMIUM_PATH, when set, wins. Otherwise the build that
// the exactly pinned devDependency @sparticuz/chromium ships inside its npm package (a Linux x64
// headless shell), unpacked once into node_modules/.cache, with the NSS libraries it ships beside it
// on LD_LIBRARY_PATH: every machine that ran `npm ci` runs the same browser, and no system browser
// is ever looked up. Where no browser can run (another platform, the package missing), the lookup
// says why in one line and the browser suite skips.
import { spawn } from "node:child_process";
import {
	createReadStream,
	createWriteStream,
	existsSync,
	mkdirSync,
	mkdtempSync,
	readFileSync,
	renameSync,
	rmSync,
} from "node:fs";
import { dirname, join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { fileURLToPath } from "node:url";
import { createBrotliDecompress } from "node:zlib";

export const NPM_CHROMIUM = "@sparticuz/chromium";
const CACHE = fileURLToPath(new URL("../node_modules/.cache/pi-fold-chromium/", import.meta.url));

export type ChromiumLookup =
	| { ok: true; executablePath: string; env: NodeJS.ProcessEnv; source: string; version?: string }
	| { ok: false; reason: string };

/** The npm package's folder and version, or undefined when it is not installed. */
function npmPackage(): { dir: string; version: string } | undefined {
	let entry: string;
	try {
		entry = fileURLToPath(import.meta.resolve(NPM_CHROMIUM));
	} catch {
		return undefined;
	}
	// build/index.js -> the package root (its package.json is not exported, so read it from disk).
	const dir = dirname(dirname(entry));
	const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { version: string };
	return { dir, version: pkg.version };
}

/** Where a read of the package's files comes from; a test slows it down to play a busy disk. */
export type OpenSource = (path: string) => Readable;

async function brotliTo(open: OpenSource, source: string, target: string, mode: number): Promise<void> {
	await pipeline(open(source), createBrotliDecompress(), createWriteStream(target, { mode }));
}

/**
 * Unpack a .tar.br into `dir` (tar from the system: this path runs on Linux only). The archive is
 * decompressed whole to a file first and tar reads that file: tar stops reading at its end-of-archive
 * marker and exits, and a stream still being piped into its stdin then fails ("Premature close").
 */
async function untarBrotli(open: OpenSource, source: string, dir: string): Promise<void> {
	const tarFile = join(dir, ".unpack.tar");
	await brotliTo(open, source, tarFile, 0o600);
	const tar = spawn("tar", ["-x", "-f", tarFile, "-C", dir], { stdio: ["ignore", "ignore", "pipe"] });
	let stderr = "";
	tar.stderr.on("data", (d) => {
		stderr += String(d);
	});
	const code = await new Promise<number | null>((resolve, reject) => {
		tar.on("error", reject);
		tar.on("close", resolve);
	});
	rmSync(tarFile, { force: true });
	if (code !== 0) throw new Error(`tar -x of ${source} failed (exit ${code}): ${stderr.trim()}`);
}

export interface UnpackSource {
	/** The package's root folder (its `bin/` holds chromium.br and al2023.tar.br). */
	dir: string;
	version: string;
}

/**
 * The unpacked browser for this package version in `cache`: made once, atomically. Each unpack
 * works in a folder of its own and renames it in whole, so unpacks running at once (test workers,
 * two checkouts' runs) never see each other's half-written files; the first rename wins and the
 * others' folders are dropped.
 */
export async function unpackChromium(
	pkg: UnpackSource,
	cache: string = CACHE,
	open: OpenSource = (path) => createReadStream(path),
): Promise<string> {
	const dir = join(cache, pkg.version);
	if (existsSync(join(dir, "chromium"))) return dir;
	mkdirSync(cache, { recursive: true });
	const temp = mkdtempSync(`${dir}.tmp-`);
	try {
		const bin = join(pkg.dir, "bin");
		await brotliTo(open, join(bin, "chromium.br"), join(temp, "chromium"), 0o755);
		// libnss3 and friends, built for the binary: a machine without a system browser lacks them.
		await untarBrotli(open, join(bin, "al2023.tar.br"), temp);
		renameSync(temp, dir);
	} catch (err) {
		rmSync(temp, { recursive: true, force: true });
		// Another unpack won the race (the rename finds its folder in place); its folder is as good as ours.
		if (existsSync(join(dir, "chromium"))) return dir;
		throw err;
	}
	return dir;
}

/** Find the browser to drive; `env` is the environment to read CHROMIUM_PATH from. */
export async function findChromium(env: NodeJS.ProcessEnv = process.env): Promise<ChromiumLookup> {
	const override = env.CHROMIUM_PATH;
	if (override) {
		if (!existsSync(override)) throw new Error(`CHROMIUM_PATH=${override}: no such file`);
		return { ok: true, executablePath: override, env: { ...env }, source: "CHROMIUM_PATH" };
	}
	if (process.platform !== "linux" || process.arch !== "x64") {
		return {
			ok: false,
			reason: `${NPM_CHROMIUM} ships a Linux x64 build and this is ${process.platform}-${process.arch}; set CHROMIUM_PATH to a Chromium to run it`,
		};
	}
	const pkg = npmPackage();
	if (!pkg) return { ok: false, reason: `${NPM_CHROMIUM} is not installed (npm ci installs it); or set CHROMIUM_PATH` };
	const dir = await unpackChromium(pkg);
	const lib = join(dir, "lib");
	return {
		ok: true,
		executablePath: join(dir, "chromium"),
		env: { ...env, LD_LIBRARY_PATH: env.LD_LIBRARY_PATH ? `${lib}:${env.LD_LIBRARY_PATH}` : lib },
		source: `${NPM_CHROMIUM} ${pkg.version}`,
		version: pkg.version,
	};
}
