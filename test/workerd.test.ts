// The core in an edge worker: workerd (Cloudflare's runtime, from npm) runs a worker that gets the
// .wasm as a compiled WebAssembly.Module binding, loads dist/index.js, and must give exactly what
// Node and node:crypto give for the same inputs.
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CoreCheckResults } from "./hosts/core-checks.js";
import {
	DIST_DIR,
	type Expected,
	expected,
	expectLatticeVerdicts,
	expectSameAsNode,
	expectTokenEstimates,
	HOSTS_DIR,
	hostNeutralDist,
	requireBuilt,
	WASM_FILE,
} from "./hosts/reference.ts";

// The package's main export is the path of the native binary. npx would not pass fd 3 through.
const WORKERD: string = createRequire(import.meta.url)("workerd").default;
// Fixed and older than the binary (which accepts up to its own release date), so results never drift.
const COMPATIBILITY_DATE = "2025-01-01";

interface WorkerResults {
	userAgent: string;
	wasmIsModule: boolean;
	results: CoreCheckResults;
}

/** Lay out the worker bundle in `dir`; module names mirror paths so dist's relative imports resolve. */
function writeBundle(dir: string): string {
	const modules: string[] = [];
	const add = (name: string, from: string, kind: "esModule" | "wasm") => {
		copyFileSync(from, join(dir, name));
		modules.push(`(name = "${name}", ${kind} = embed "${name}")`);
	};
	mkdirSync(join(dir, "dist"));
	add("worker.js", join(HOSTS_DIR, "workerd-worker.js"), "esModule"); // the first module is the entry
	add("core-checks.js", join(HOSTS_DIR, "core-checks.js"), "esModule");
	for (const f of hostNeutralDist()) add(`dist/${f}`, join(DIST_DIR, f), "esModule");
	add("pi-fold-core.wasm", WASM_FILE, "wasm");
	const config = `using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [(name = "main", worker = .checks)],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "main")],
);

const checks :Workerd.Worker = (
  modules = [
    ${modules.join(",\n    ")},
  ],
  compatibilityDate = "${COMPATIBILITY_DATE}",
);
`;
	const path = join(dir, "config.capnp");
	writeFileSync(path, config);
	return path;
}

/** Start workerd on a free port; it reports the port on fd 3 once it listens (no polling). */
function startWorkerd(config: string): { child: ChildProcess; port: Promise<number>; output: () => string } {
	const child = spawn(WORKERD, ["serve", config, "--socket-addr", "http=127.0.0.1:0", "--control-fd=3"], {
		stdio: ["ignore", "pipe", "pipe", "pipe"],
	});
	let output = "";
	child.stdout?.on("data", (d) => {
		output += d;
	});
	child.stderr?.on("data", (d) => {
		output += d;
	});
	const port = new Promise<number>((resolve, reject) => {
		child.once("error", reject);
		child.once("close", (code, signal) =>
			reject(new Error(`workerd exited before listening (code ${code}, signal ${signal}):\n${output}`)),
		);
		createInterface({ input: child.stdio[3] as Readable }).on("line", (line) => {
			try {
				const msg = JSON.parse(line);
				if (msg.event === "listen" && msg.socket === "http") resolve(msg.port);
			} catch {
				// not a control message
			}
		});
	});
	return { child, port, output: () => output };
}

/** SIGTERM, and SIGKILL if workerd has not exited 5 s later. */
async function stop(child: ChildProcess | undefined): Promise<void> {
	if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
	const exited = new Promise((resolve) => child.once("exit", resolve));
	child.kill("SIGTERM");
	const backstop = setTimeout(() => child.kill("SIGKILL"), 5_000);
	await exited;
	clearTimeout(backstop);
}

describe("the core in workerd", () => {
	let want: Expected;
	let got: WorkerResults;
	let child: ChildProcess | undefined;
	const dir = mkdtempSync(join(tmpdir(), "pi-fold-workerd-"));

	beforeAll(async () => {
		requireBuilt();
		want = await expected();
		const workerd = startWorkerd(writeBundle(dir));
		child = workerd.child;
		const port = await workerd.port;
		const res = await fetch(`http://127.0.0.1:${port}/checks`);
		if (!res.ok) throw new Error(`GET /checks: ${res.status}\n${await res.text()}\n${workerd.output()}`);
		got = (await res.json()) as WorkerResults;
	}, 30_000);

	afterAll(async () => {
		await stop(child);
		rmSync(dir, { recursive: true, force: true });
	});

	it("really ran in workerd, with the core as a compiled Module binding", () => {
		expect(got.userAgent).toBe("Cloudflare-Workers");
		expect(got.wasmIsModule).toBe(true);
	});

	it("loadCore(module) matches Node and node:crypto", () => {
		expectSameAsNode(got.results, want, "workerd");
	});

	it("passes the core's self-check", () => {
		expect(got.results.selfCheck).toEqual({ ok: true, failed: [] });
	});

	it("validates lattices: the valid ones pass, the invalid ones fail", () => {
		expectLatticeVerdicts(got.results);
	});

	it("estimates tokens", () => {
		expectTokenEstimates(got.results);
	});
});
