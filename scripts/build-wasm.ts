// Build assembly/ -> wasm/pi-fold-core.wasm with the pinned asc, then check the two
// properties every host relies on: no imports (instantiable with {} in Node, a
// browser page and workerd) and no reachable allocator (the core uses scratch memory only).
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const asc = fileURLToPath(new URL("../node_modules/assemblyscript/bin/asc.js", import.meta.url));
const run = spawnSync(process.execPath, [asc, "--config", "asconfig.json"], { cwd: root, encoding: "utf8" });
// Binaryen's note that its optimizer stopped early is not a problem; anything else asc says is shown.
const said = `${run.stdout ?? ""}${run.stderr ?? ""}`
	.split("\n")
	.filter((line) => line.trim() !== "" && line.trim() !== "Last converge was suboptimal.");
if (said.length > 0) console.error(said.join("\n"));
if (run.status !== 0) process.exit(run.status ?? 1);

const wasmPath = new URL("../wasm/pi-fold-core.wasm", import.meta.url);
const bytes = readFileSync(wasmPath);
const mod = new WebAssembly.Module(bytes);
const imports = WebAssembly.Module.imports(mod);
if (imports.length > 0) {
	console.error(
		`build-wasm: the core must not import anything, found ${imports.map((i) => `${i.module}.${i.name}`).join(", ")}`,
	);
	process.exit(1);
}
const wat = readFileSync(new URL("../wasm/pi-fold-core.wat", import.meta.url), "utf8");
const allocator = wat.match(/call \$~lib\/rt\/stub\/__(alloc|new|realloc)/);
if (allocator) {
	console.error(`build-wasm: managed allocation reached the core (${allocator[0]}); use scratch or memory.data`);
	process.exit(1);
}
const exports = WebAssembly.Module.exports(mod).map((e) => e.name);
// The built Node entry (dist/bindings/node.js) loads the core from beside it, as bindings/node.ts
// does from the source tree: one compile of the bindings serves the package and the command.
mkdirSync(new URL("../dist/wasm/", import.meta.url), { recursive: true });
copyFileSync(wasmPath, new URL("../dist/wasm/pi-fold-core.wasm", import.meta.url));
console.log(`built wasm/pi-fold-core.wasm: ${statSync(wasmPath).size} bytes, ${exports.length} exports, 0 imports`);
