// Build assembly/ -> wasm/pi-fold-core.wasm with the pinned asc, then check the two
// properties every host relies on: no imports (instantiable with {} in Node, a
// browser page and workerd) and no reachable allocator (the core uses scratch memory only).
// The .wasm is committed, a generated file like assembly/sha256.gen.ts: a git clone, an npm
// install and a bundler all get the core without a toolchain. The compile is deterministic
// (same sources and pinned asc/Binaryen, same bytes), so `coreDrift` can prove the committed
// bytes are what assembly/ compiles to now.
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { BUILD_CORE } from "../src/core.ts";

/** The committed core, relative to the package root. */
export const CORE_FILE = "wasm/pi-fold-core.wasm";
/** The command that regenerates it (package.json's build:wasm runs this script). */
export const REBUILD_COMMAND = BUILD_CORE;
const TEXT_FILE = "wasm/pi-fold-core.wat";
const ROOT = fileURLToPath(new URL("..", import.meta.url));
const ASC = fileURLToPath(new URL("../node_modules/assemblyscript/bin/asc.js", import.meta.url));

export interface BuiltCore {
	bytes: Uint8Array;
	exports: string[];
	/** What asc said besides Binaryen's harmless note that its optimizer stopped early. */
	notes: string[];
}

/** Compile `root`/assembly with `root`/asconfig.json into `root`/wasm/ and check the result; throws on any failure. */
export function compileCore(root: string): BuiltCore {
	const run = spawnSync(process.execPath, [ASC, "--config", "asconfig.json"], { cwd: root, encoding: "utf8" });
	const notes = `${run.stdout ?? ""}${run.stderr ?? ""}`
		.split("\n")
		.filter((line) => line.trim() !== "" && line.trim() !== "Last converge was suboptimal.");
	if (run.status !== 0) throw new Error(`asc failed (exit ${run.status ?? run.signal}):\n${notes.join("\n")}`);
	const bytes = readFileSync(join(root, CORE_FILE));
	const mod = new WebAssembly.Module(bytes);
	const imports = WebAssembly.Module.imports(mod);
	if (imports.length > 0) {
		throw new Error(
			`the core must not import anything, found ${imports.map((i) => `${i.module}.${i.name}`).join(", ")}`,
		);
	}
	const allocator = readFileSync(join(root, TEXT_FILE), "utf8").match(/call \$~lib\/rt\/stub\/__(alloc|new|realloc)/);
	if (allocator) throw new Error(`managed allocation reached the core (${allocator[0]}); use scratch or memory.data`);
	return { bytes, exports: WebAssembly.Module.exports(mod).map((e) => e.name), notes };
}

/** Copy what the compile reads (asconfig.json and assembly/) from `root` into `into`. */
export function copyCoreSources(root: string, into: string): void {
	cpSync(join(root, "asconfig.json"), join(into, "asconfig.json"));
	cpSync(join(root, "assembly"), join(into, "assembly"), { recursive: true });
}

/**
 * Compile the sources in `sources` (default: a copy of `root`'s, in a temp folder) and compare the
 * result with the core committed in `root`: undefined when they are the same bytes, else what differs
 * and the command that makes them equal. Never writes to `root`.
 */
export function coreDrift(root: string, sources?: string): string | undefined {
	const scratch = sources ?? mkdtempSync(join(tmpdir(), "pi-fold-core-drift-"));
	try {
		if (!sources) copyCoreSources(root, scratch);
		const built = compileCore(scratch).bytes;
		let committed: Uint8Array;
		try {
			committed = readFileSync(join(root, CORE_FILE));
		} catch (err) {
			return `${CORE_FILE} cannot be read (${(err as Error).message}): run \`${REBUILD_COMMAND}\` and commit it`;
		}
		if (Buffer.compare(committed, built) === 0) return undefined;
		const at = built.findIndex((b, i) => b !== committed[i]);
		return `${CORE_FILE} (${committed.byteLength} bytes) is not what assembly/ compiles to (${built.byteLength} bytes, first difference at byte ${at < 0 ? Math.min(built.byteLength, committed.byteLength) : at}): run \`${REBUILD_COMMAND}\` and commit ${CORE_FILE}`;
	} finally {
		if (!sources) rmSync(scratch, { recursive: true, force: true });
	}
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
	try {
		const built = compileCore(ROOT);
		if (built.notes.length > 0) console.error(built.notes.join("\n"));
		console.log(`built ${CORE_FILE}: ${built.bytes.byteLength} bytes, ${built.exports.length} exports, 0 imports`);
	} catch (err) {
		console.error(`build-wasm: ${(err as Error).message}`);
		process.exit(1);
	}
}
