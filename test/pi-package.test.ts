// The package as a user gets it: `npm pack`, then `pi install` of the tarball into a temp Pi
// agent dir (npm really installs it, dependencies from the registry), then `pi -p` with a scripted
// offline model that calls pi_fold_context. The answer must come from the Wasm core of the
// INSTALLED copy, loaded inside Pi.
import { hash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCoreFile } from "../bindings/node.ts";
import { STATUS_PROBE } from "../src/tool/status.ts";
import { FIXTURE_MODEL, FIXTURE_PROVIDER } from "./fixtures/faux-status-ext.ts";
import { childEnv, REPO_ROOT, type RunResult, run, runPi } from "./helpers/pi-cli.ts";
import { piEnv, removeTempDirs, tempDir } from "./helpers/pi-harness.ts";

interface PackageJson {
	name: string;
	version: string;
	keywords?: string[];
	scripts?: Record<string, string>;
	dependencies?: Record<string, string>;
	peerDependencies?: Record<string, string>;
	pi?: { extensions?: string[] };
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T;
const PKG = readJson<PackageJson>(join(REPO_ROOT, "package.json"));
const PI_VERSION = readJson<PackageJson>(
	join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent/package.json"),
).version;
/** Pi supplies these to extensions (docs/packages.md); a shipped copy would shadow the host's. */
const HOST_PACKAGES = [
	"@earendil-works/pi-ai",
	"@earendil-works/pi-agent-core",
	"@earendil-works/pi-coding-agent",
	"@earendil-works/pi-tui",
	"typebox",
];
const FIXTURE = join(REPO_ROOT, "test/fixtures/faux-status-ext.ts");

const show = (r: RunResult) => `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;
const timings: string[] = [];
async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
	const start = performance.now();
	try {
		return await work();
	} finally {
		timings.push(`${label} ${Math.round(performance.now() - start)} ms`);
	}
}

/** Every file path in a directory tree, relative and with "/" separators. */
function listFiles(dir: string): string[] {
	return readdirSync(dir, { recursive: true, withFileTypes: true })
		.filter((e) => e.isFile())
		.map((e) =>
			join(e.parentPath, e.name)
				.slice(dir.length + 1)
				.replaceAll("\\", "/"),
		);
}

let tarball = "";
let unpacked = ""; // the tarball's "package/" folder, extracted for inspection only

beforeAll(async () => {
	// npm test builds first; pack with --ignore-scripts so `prepare` does not rebuild wasm/ and dist/
	// while test files running in parallel read them (and the build is not paid twice).
	for (const built of ["wasm/pi-fold-core.wasm", "dist/node.js", "dist/index.js"]) {
		if (!existsSync(join(REPO_ROOT, built))) throw new Error(`${built} is missing: run \`npm run build\` first`);
	}
	const dest = tempDir("pack");
	const env = childEnv(piEnv());
	const packed = await timed("npm pack", () =>
		run("npm", ["pack", "--ignore-scripts", "--json", "--pack-destination", dest], { cwd: REPO_ROOT, env }),
	);
	if (packed.code !== 0) throw new Error(`npm pack failed\n${show(packed)}`);
	const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
	tarball = join(dest, filename);
	const extracted = await run("tar", ["-xzf", tarball, "-C", dest], { cwd: dest, env });
	if (extracted.code !== 0) throw new Error(`tar failed\n${show(extracted)}`);
	unpacked = join(dest, "package");
}, 120_000);

afterAll(() => {
	if (timings.length > 0) console.info(`[pi-package] ${timings.join(", ")}`);
	removeTempDirs();
});

describe("the packed tarball", () => {
	it("holds the extension, bindings, built JS and the Wasm core, and nothing dev-only", () => {
		const files = listFiles(unpacked);
		expect(files).toContain("package.json");
		expect(files).toContain("src/index.ts");
		expect(files).toContain("bindings/node.ts");
		expect(files).toContain("dist/node.js");
		expect(files).toContain("wasm/pi-fold-core.wasm");
		for (const devOnly of ["test/", "assembly/", "bench/", "node_modules/"]) {
			expect(files.filter((f) => f.startsWith(devOnly))).toEqual([]);
		}
		// Every module the extension imports at run time ships: the bindings' sources it loads.
		const bindings = readdirSync(join(REPO_ROOT, "bindings")).filter((f) => f.endsWith(".ts"));
		for (const f of bindings) expect(files).toContain(`bindings/${f}`);
	});

	it("declares a Pi package with no install-time scripts and the host packages as peers only", () => {
		const pkg = readJson<PackageJson>(join(unpacked, "package.json"));
		expect(pkg.name).toBe(PKG.name);
		expect(pkg.keywords).toContain("pi-package");
		// npm runs these for every install; `prepare` is fine: npm does not run it for tarball/registry installs.
		for (const script of ["preinstall", "install", "postinstall"]) expect(pkg.scripts?.[script]).toBeUndefined();
		expect(pkg.pi?.extensions?.length).toBeGreaterThan(0);
		for (const entry of pkg.pi?.extensions ?? []) expect(existsSync(join(unpacked, entry))).toBe(true);
		for (const host of HOST_PACKAGES) {
			expect(pkg.peerDependencies?.[host]).toBe("*");
			expect(pkg.dependencies?.[host]).toBeUndefined();
		}
	});
});

describe("installed with `pi install` and run inside Pi", () => {
	const env = childEnv(piEnv());
	const agentDir = env.PI_CODING_AGENT_DIR!;
	const installed = join(agentDir, "npm/node_modules", PKG.name);
	const work = tempDir("work");
	// `npm:<name>@file:<abs .tgz>` makes Pi run npm's real install of the tarball into its managed
	// npm dir and find it again by name. (`npm:<abs .tgz>` installs too, but Pi then looks for the
	// package under the path as its name and never loads it; a local dir is loaded without npm.)
	const source = () => `npm:${PKG.name}@file:${tarball}`;

	it("installs the tarball through npm: runtime dependencies from the registry, no host packages", async () => {
		const result = await timed("pi install", () => runPi(["install", source()], { cwd: work, env }));
		expect(result.code, show(result)).toBe(0);
		expect(result.stdout).toContain(`Installed ${source()}`);
		expect(readJson<{ packages: unknown[] }>(join(agentDir, "settings.json")).packages).toEqual([source()]);
		expect(readJson<PackageJson>(join(installed, "package.json")).version).toBe(PKG.version);
		for (const dep of Object.keys(PKG.dependencies ?? {})) {
			expect(existsSync(join(agentDir, "npm/node_modules", dep, "package.json")), dep).toBe(true);
		}
		// Pi installs with --legacy-peer-deps: extensions must use the host's Pi, never a second copy.
		for (const host of HOST_PACKAGES) expect(existsSync(join(agentDir, "npm/node_modules", host)), host).toBe(false);
	}, 90_000);

	it("is listed by `pi list`", async () => {
		const result = await runPi(["list"], { cwd: work, env });
		expect(result.code, show(result)).toBe(0);
		expect(result.stdout).toContain(source());
		expect(result.stdout).toContain(installed);
	});

	it("answers pi_fold_context status from the installed copy's Wasm core", async () => {
		const args = ["-p", "report pi-fold status", "-e", FIXTURE, "--provider", FIXTURE_PROVIDER];
		args.push("--model", FIXTURE_MODEL, "--no-session");
		const result = await timed("pi -p", () => runPi(args, { cwd: work, env }));
		expect(result.code, show(result)).toBe(0);
		const out = result.stdout;
		expect(out, show(result)).toContain("pi_fold_context answered:\npi-fold ");
		expect(out).not.toContain("<error>");
		const wasmFile = join(realpathSync(installed), "wasm/pi-fold-core.wasm");
		// Version read from the installed .wasm in this process; Pi's run must report the same core, from that file.
		const coreVersion = loadCoreFile(wasmFile).version;
		expect(coreVersion).toMatch(/^\d+\.\d+\.\d+$/);
		expect(out).toContain(`core: pi-fold-core ${coreVersion} (WebAssembly) from ${wasmFile}`);
		expect(out).toContain("self-check: ok");
		expect(out).toContain(`probe sha256 (by the core): ${hash("sha256", STATUS_PROBE, "hex")}`);
		expect(out).toContain(`pi-fold ${PKG.version} status`);
		expect(out).toContain(`host: Pi ${PI_VERSION}`);
		// The run stayed inside the temp dirs.
		expect(existsSync(join(env.HOME!, ".pi"))).toBe(false);
	}, 60_000);
});
