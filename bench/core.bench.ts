// npm run bench:core — the core's hot paths side by side with the alternatives, in one
// process. Prints Markdown tables and writes bench/results/core.json.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { loadCore } from "../bindings/index.ts";
import { CORE_WASM_URL, loadCoreFile } from "../bindings/node.ts";
import { type GroupResult, machineNotes, printGroup, printTargets, type Target } from "./lib/harness.ts";
import { benchLatticeSelect } from "./sections/lattice-select.ts";
import { benchSha256 } from "./sections/sha256.ts";
import { benchTokens } from "./sections/tokens.ts";

const wasm = loadCore(readFileSync(CORE_WASM_URL));
const node = loadCoreFile();
const check = wasm.selfCheck();
if (!check.ok) throw new Error(`core self-check failed: ${check.failed.join(", ")}`);

const machine = machineNotes();
console.log(`# pi-fold core benchmark (${machine.date})`);
console.log(`${machine.cpu}, ${machine.cores} cores, flags [${machine.cpuFlags.join(" ")}], Node ${machine.node}`);

const groups: GroupResult[] = [];
const targets: Target[] = [];
const sections = [() => benchSha256(wasm, node), () => benchTokens(wasm), () => benchLatticeSelect(wasm)];
for (const section of sections) {
	const r = await section();
	for (const g of r.groups) printGroup(g);
	groups.push(...r.groups);
	targets.push(...r.targets);
}
printTargets(targets);

mkdirSync(new URL("./results/", import.meta.url), { recursive: true });
const file = new URL("./results/core.json", import.meta.url);
writeFileSync(file, `${JSON.stringify({ machine, coreVersion: wasm.version, groups, targets }, null, 2)}\n`);
console.log(`\nwrote ${file.pathname}`);
