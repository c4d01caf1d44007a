// The package as a user gets it: `npm pack`, then every install route the README documents, each in
// its own temp Pi home, then `pi -p` with a scripted offline model that calls pi_fold_context. The
// answer must come from the Wasm core of the INSTALLED copy, loaded inside Pi. The two forms Pi
// accepts but never loads are checked too, so the README's warning stays true.
import {
	cpSync,
	existsSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	realpathSync,
	rmSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { basename, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { piEnv, removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import type { ReplayResult } from "../src/replay/replay.ts";
import { childEnv, PI_CLI, REPO_ROOT, run, runPi } from "./helpers/pi-cli.ts";
import { askStatus, expectAnsweredFrom, PI_VERSION, show } from "./helpers/pi-status.ts";
import { FOLD_BUDGET, FOLD_WINDOW, policy, type Recording, recordedFold } from "./helpers/replay-recordings.ts";

interface PackageJson {
	name: string;
	version: string;
	license?: string;
	keywords?: string[];
	bin?: Record<string, string>;
	files?: string[];
	exports?: Record<string, string | Record<string, string>>;
	scripts?: Record<string, string>;
	dependencies?: Record<string, string>;
	peerDependencies?: Record<string, string>;
	peerDependenciesMeta?: Record<string, { optional?: boolean }>;
	pi?: { extensions?: string[] };
	[field: string]: unknown;
}

const readJson = <T>(path: string): T => JSON.parse(readFileSync(path, "utf8")) as T;
const PKG = readJson<PackageJson>(join(REPO_ROOT, "package.json"));
/** Pi supplies these to extensions (docs/packages.md); a shipped copy would shadow the host's. */
const HOST_PACKAGES = [
	"@earendil-works/pi-ai",
	"@earendil-works/pi-agent-core",
	"@earendil-works/pi-coding-agent",
	"@earendil-works/pi-tui",
	"typebox",
];
/** Every script npm runs on its own during an install (of this package or of a project holding it). */
const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall", "prepare", "preprepare", "postprepare"];
/** PATH without any `pi` (npm test puts the repo's node_modules/.bin, which has one, on it). */
const PATH_WITHOUT_PI = [dirname(process.execPath), ...(process.env.PATH ?? "").split(":")]
	.filter((dir) => dir !== "" && !existsSync(join(dir, "pi")))
	.join(":");

/** A folder holding a `pi` launcher as `npm install -g` makes one: a link to the bin of Pi's package. */
function piLauncherDir(): string {
	const dir = tempDir("pi-bin");
	symlinkSync(PI_CLI, join(dir, "pi"));
	return dir;
}

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

/** Every path the manifest names: exports targets, bin, Pi's extensions, files entries. */
function manifestPaths(pkg: PackageJson): string[] {
	const paths: string[] = [];
	for (const target of Object.values(pkg.exports ?? {})) {
		paths.push(...(typeof target === "string" ? [target] : Object.values(target)));
	}
	paths.push(...Object.values(pkg.bin ?? {}), ...(pkg.pi?.extensions ?? []), ...(pkg.files ?? []));
	return paths;
}

let tarball = "";
let unpacked = ""; // the tarball's "package/" folder, extracted for inspection only

beforeAll(async () => {
	// npm test builds first (pretest); pack with --ignore-scripts so `prepack` does not rebuild
	// and dist/ while test files running in parallel read them (and the build is not paid twice).
	for (const built of [
		"wasm/pi-fold-core.wasm",
		"dist/wasm/pi-fold-core.wasm",
		"dist/bindings/node.js",
		"dist/bindings/index.js",
	]) {
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
}, 300_000);

afterAll(() => {
	if (timings.length > 0) console.info(`[pi-package] ${timings.join(", ")}`);
	removeTempDirs();
});

describe("the packed tarball", () => {
	it("holds the extension, bindings, built JS, the Wasm core, licence and changelog, and nothing dev-only", () => {
		const files = listFiles(unpacked);
		for (const f of [
			"package.json",
			"src/index.ts",
			"bindings/node.ts",
			"dist/bindings/node.js",
			"dist/wasm/pi-fold-core.wasm",
			"wasm/pi-fold-core.wasm",
			"view/pi-fold-view.js",
			"dist/view/pi-fold-view.js",
		]) {
			expect(files).toContain(f);
		}
		for (const f of ["LICENSE", "CHANGELOG.md", "README.md"]) expect(files).toContain(f);
		expect(readFileSync(join(unpacked, "LICENSE"), "utf8")).toMatch(/^MIT License\n/);
		expect(PKG.license).toBe("MIT");
		expect(readFileSync(join(unpacked, "CHANGELOG.md"), "utf8")).toContain(`## ${PKG.version}`);
		for (const devOnly of ["test/", "assembly/", "bench/", "node_modules/"]) {
			expect(files.filter((f) => f.startsWith(devOnly))).toEqual([]);
		}
		// Every module the extension imports at run time ships: the bindings' sources it loads.
		const bindings = readdirSync(join(REPO_ROOT, "bindings")).filter((f) => f.endsWith(".ts"));
		for (const f of bindings) expect(files).toContain(`bindings/${f}`);
	});

	it("has no field pointing nowhere: every path the manifest names is in the tarball", () => {
		const pkg = readJson<PackageJson>(join(unpacked, "package.json"));
		const paths = manifestPaths(pkg);
		expect(paths.length).toBeGreaterThan(8);
		for (const p of paths) expect(existsSync(join(unpacked, p)), p).toBe(true);
		// Left for the publisher to fill: absent is fine, but never empty or a placeholder.
		for (const field of ["repository", "homepage", "bugs"]) {
			if (pkg[field] !== undefined) expect(JSON.stringify(pkg[field])).not.toMatch(/""|TODO|example\.com/);
		}
	});

	it("declares a Pi package with no install-time scripts and the host packages as optional peers only", () => {
		const pkg = readJson<PackageJson>(join(unpacked, "package.json"));
		expect(pkg.name).toBe(PKG.name);
		expect(pkg.keywords).toContain("pi-package");
		// npm runs these on install (and warns about each); the build runs from pretest/predemo/prepack.
		for (const script of INSTALL_SCRIPTS) expect(pkg.scripts?.[script], script).toBeUndefined();
		expect(pkg.pi?.extensions?.length).toBeGreaterThan(0);
		for (const host of HOST_PACKAGES) {
			expect(pkg.peerDependencies?.[host]).toBe("*");
			expect(pkg.peerDependenciesMeta?.[host]?.optional, host).toBe(true);
			expect(pkg.dependencies?.[host]).toBeUndefined();
		}
	});
});

describe("`pi install npm:pi-fold@file:<abs .tgz>` (npm installs the tarball into Pi's npm dir)", () => {
	const env = childEnv(piEnv());
	const agentDir = env.PI_CODING_AGENT_DIR!;
	const installed = join(agentDir, "npm/node_modules", PKG.name);
	const work = tempDir("work");
	const source = () => `npm:${PKG.name}@file:${tarball}`;

	it("installs: runtime dependencies from the registry, no host packages, no install-script warning of its own", async () => {
		const result = await timed("pi install npm:…@file:", () => runPi(["install", source()], { cwd: work, env }));
		expect(result.code, show(result)).toBe(0);
		expect(result.stdout).toContain(`Installed ${source()}`);
		expect(`${result.stdout}${result.stderr}`).not.toMatch(
			new RegExp(`${PKG.name}@[^ ]+ \\((pre|post)?(install|prepare)`),
		);
		expect(readJson<{ packages: unknown[] }>(join(agentDir, "settings.json")).packages).toEqual([source()]);
		expect(readJson<PackageJson>(join(installed, "package.json")).version).toBe(PKG.version);
		for (const dep of Object.keys(PKG.dependencies ?? {})) {
			expect(existsSync(join(agentDir, "npm/node_modules", dep, "package.json")), dep).toBe(true);
		}
		// Extensions must use the host's Pi, never a second copy.
		for (const host of HOST_PACKAGES) expect(existsSync(join(agentDir, "npm/node_modules", host)), host).toBe(false);
		const listed = await runPi(["list"], { cwd: work, env });
		expect(listed.stdout).toContain(source());
		expect(listed.stdout).toContain(installed);
	}, 300_000);

	it("answers pi_fold_context status from the installed copy's Wasm core", async () => {
		const result = await timed("pi -p (npm route)", () => askStatus(env, work));
		expectAnsweredFrom(result, installed, env);
	}, 300_000);

	it("the `pi-fold` bin in Pi's npm folder replays a session, on the Pi that `pi` on PATH leads to", async () => {
		const rec = await recordedFold();
		const bin = join(agentDir, "npm/node_modules/.bin/pi-fold");
		const args = ["replay", rec.file, "--json", "--window", String(FOLD_WINDOW), "--budget", String(FOLD_BUDGET)];
		const path = `${PATH_WITHOUT_PI}:${piLauncherDir()}`;
		const r = await run(bin, args, { cwd: work, env: { ...env, PATH: path }, timeoutMs: 240_000 });
		expect(r.code, show(r)).toBe(0);
		expect(policy(JSON.parse(r.stdout) as ReplayResult, "pi-fold").events.map((e) => e.request)).toEqual(rec.rewritten);
	}, 300_000);

	it("the same bin writes a session's view page (its bundle and core from the installed copy)", async () => {
		const rec = await recordedFold();
		const bin = join(agentDir, "npm/node_modules/.bin/pi-fold");
		const out = join(tempDir("view-installed"), "view.html");
		const path = `${PATH_WITHOUT_PI}:${piLauncherDir()}`;
		const args = ["view", rec.file, "--out", out, "--window", String(FOLD_WINDOW)];
		const r = await run(bin, args, { cwd: work, env: { ...env, PATH: path }, timeoutMs: 240_000 });
		expect(r.code, show(r)).toBe(0);
		const html = readFileSync(out, "utf8");
		expect(html).toContain(readFileSync(join(REPO_ROOT, "view/pi-fold-view.js"), "utf8"));
		expect(html).toContain('"native":{"state":"ready"');
	}, 300_000);
});

describe("`pi install /path/to/pi-fold` (a local folder, loaded where it is)", () => {
	it("a folder made from the tarball plus its runtime dependencies: the tool answers from that folder", async () => {
		const env = childEnv(piEnv());
		// What the tarball holds, and `npm install --omit=dev` for msgpackr: a clone after `npm ci` has more.
		const deps = await timed("npm install --omit=dev (folder)", () =>
			run("npm", ["install", "--omit=dev", "--no-package-lock", "--ignore-scripts"], { cwd: unpacked, env }),
		);
		expect(deps.code, show(deps)).toBe(0);
		const work = tempDir("work-dir");
		const installed = await runPi(["install", unpacked], { cwd: work, env });
		expect(installed.code, show(installed)).toBe(0);
		expect(installed.stdout).toContain("Installed");
		const result = await timed("pi -p (folder route)", () => askStatus(env, work));
		expectAnsweredFrom(result, unpacked, env);
	}, 300_000);

	it("this clone itself (after npm ci and the build): the tool answers from the clone", async () => {
		const env = childEnv(piEnv());
		const work = tempDir("work-clone");
		const installed = await runPi(["install", REPO_ROOT], { cwd: work, env });
		expect(installed.code, show(installed)).toBe(0);
		const result = await timed("pi -p (clone route)", () => askStatus(env, work));
		expectAnsweredFrom(result, REPO_ROOT, env);
	}, 300_000);
});

describe("`registerPiFold` from `pi-fold/extension`, in a project that installed the tarball", () => {
	let project = "";
	it("plain `npm install <tgz>` pulls no Pi host packages; a Pi extension there imports registerPiFold and sets options", async () => {
		const env = childEnv(piEnv());
		project = tempDir("project");
		writeFileSync(
			join(project, "package.json"),
			`${JSON.stringify({ name: "uses-pi-fold", private: true, type: "module" })}\n`,
		);
		// No --legacy-peer-deps: the peers are optional, so npm must not install Pi and its provider SDKs.
		const npmInstall = await timed("npm install <tgz>", () => run("npm", ["install", tarball], { cwd: project, env }));
		expect(npmInstall.code, show(npmInstall)).toBe(0);
		for (const host of HOST_PACKAGES) expect(existsSync(join(project, "node_modules", host)), host).toBe(false);
		const ext = join(project, "my-extension.ts");
		writeFileSync(
			ext,
			[
				'import { writeFileSync } from "node:fs";',
				'import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";',
				'import { registerPiFold } from "pi-fold/extension";',
				"export default function (pi: ExtensionAPI): void {",
				"\tconst fold = registerPiFold(pi, { providerInputBudget: 12_345 });",
				'\tpi.on("session_start", () => {',
				"\t\tconst settings = fold.runtime.get()?.settings;",
				"\t\tconst candidates = fold.projectionCandidates();",
				'\t\twriteFileSync("registered.json", JSON.stringify({ budget: settings?.providerInputBudget, candidates }));',
				"\t});",
				"}",
				"",
			].join("\n"),
		);
		const result = await timed("pi -p (registerPiFold)", () => askStatus(env, project, [ext]));
		expectAnsweredFrom(result, join(project, "node_modules", PKG.name), env);
		expect(readJson(join(project, "registered.json"))).toEqual({ budget: 12_345, candidates: [] });
		// The subpath does not exist for a typo: the export map is what makes the import work.
		const missing = await run(
			process.execPath,
			["--input-type=module", "-e", 'import("pi-fold/nope").catch((e) => { console.log(e.code); })'],
			{
				cwd: project,
				env,
			},
		);
		expect(missing.stdout.trim()).toBe("ERR_PACKAGE_PATH_NOT_EXPORTED");
	}, 300_000);

	it("as a project extension (.pi/extensions/), print mode loads it only in a trusted project (Pi's project trust)", async () => {
		expect(project, "the test above made the project").not.toBe("");
		const env = childEnv(piEnv());
		mkdirSync(join(project, ".pi/extensions"), { recursive: true });
		cpSync(join(project, "my-extension.ts"), join(project, ".pi/extensions/fold.ts"));
		rmSync(join(project, "registered.json"));
		// Untrusted (no saved decision, Pi's default "ask"): print mode cannot ask, so Pi skips the
		// project's extensions without a word, and the model finds no tool.
		const skipped = await askStatus(env, project);
		expect(skipped.stdout, show(skipped)).toContain("Tool pi_fold_context not found");
		expect(existsSync(join(project, "registered.json"))).toBe(false);
		// --approve trusts the project for this run (as /trust does for good): the extension loads.
		const approved = await askStatus(env, project, [], ["--approve"]);
		expectAnsweredFrom(approved, join(project, "node_modules", PKG.name), env);
		expect(readJson(join(project, "registered.json"))).toMatchObject({ budget: 12_345 });
		rmSync(join(project, ".pi"), { recursive: true });
	}, 300_000);

	it("its types are built declarations: the extension typechecks without allowImportingTsExtensions, on ES2022", async () => {
		expect(project, "the test above made the project").not.toBe("");
		// The project's own devDependencies for writing a Pi extension: Pi's types and Node's.
		for (const dep of ["@earendil-works", "@types", "typebox"]) {
			symlinkSync(join(REPO_ROOT, "node_modules", dep), join(project, "node_modules", dep));
		}
		const compilerOptions = {
			target: "ES2022",
			lib: ["ES2022"],
			module: "NodeNext",
			moduleResolution: "NodeNext",
			strict: true,
			noEmit: true,
			skipLibCheck: true,
			types: ["node"],
		};
		writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["my-extension.ts"] }));
		const tsc = join(REPO_ROOT, "node_modules/typescript/bin/tsc");
		const r = await run(process.execPath, [tsc, "-p", project], { cwd: project, env: childEnv(piEnv()) });
		expect(r.code, show(r)).toBe(0);
		// Real types, not `any`: a wrong option is an error in the consumer's own file.
		writeFileSync(
			join(project, "wrong.ts"),
			[
				'import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";',
				'import { registerPiFold } from "pi-fold/extension";',
				'export const wrong = (pi: ExtensionAPI) => registerPiFold(pi, { providerInputBudget: "large" });',
				"",
			].join("\n"),
		);
		writeFileSync(join(project, "tsconfig.json"), JSON.stringify({ compilerOptions, files: ["wrong.ts"] }));
		const wrong = await run(process.execPath, [tsc, "-p", project], { cwd: project, env: childEnv(piEnv()) });
		expect(wrong.code, show(wrong)).not.toBe(0);
		expect(wrong.stdout).toMatch(/wrong\.ts\(3,\d+\): error TS2322/);
		const pkg = readJson<PackageJson>(join(project, "node_modules", PKG.name, "package.json"));
		const types = (pkg.exports?.["./extension"] as Record<string, string> | undefined)?.types ?? "";
		expect(types).toMatch(/\.d\.ts$/);
		expect(existsSync(join(project, "node_modules", PKG.name, types))).toBe(true);
	}, 300_000);
});

describe("the installed `pi-fold` command, in a clean folder with no host packages", () => {
	const pathWithoutPi = PATH_WITHOUT_PI;
	let project = "";
	let bin = "";
	let rec: Recording;
	beforeAll(async () => {
		const env = childEnv(piEnv());
		project = tempDir("bin-project");
		writeFileSync(join(project, "package.json"), `${JSON.stringify({ name: "replays", private: true })}\n`);
		const npmInstall = await timed("npm install <tgz> (bin)", () =>
			run("npm", ["install", "--omit=dev", tarball], { cwd: project, env }),
		);
		if (npmInstall.code !== 0) throw new Error(`npm install failed\n${show(npmInstall)}`);
		bin = join(project, "node_modules/.bin/pi-fold");
		rec = await recordedFold();
	}, 300_000);

	const replayArgs = () => [
		"replay",
		rec.file,
		"--json",
		"--window",
		String(FOLD_WINDOW),
		"--budget",
		String(FOLD_BUDGET),
	];

	it("`pi-fold replay` runs on the Pi that `pi` on PATH leads to, says so, and replays as from a clone", async () => {
		for (const host of HOST_PACKAGES) expect(existsSync(join(project, "node_modules", host)), host).toBe(false);
		const env = { ...childEnv(piEnv()), PATH: `${pathWithoutPi}:${piLauncherDir()}` };
		const r = await run(bin, replayArgs(), { cwd: project, env, timeoutMs: 240_000 });
		expect(r.code, show(r)).toBe(0);
		const piDir = realpathSync(join(REPO_ROOT, "node_modules/@earendil-works/pi-coding-agent"));
		expect(r.stderr).toContain(`pi-fold replay: using Pi ${PI_VERSION} from ${piDir} (the \`pi\` command on PATH)`);
		const json = JSON.parse(r.stdout) as ReplayResult;
		expect(json.requests).toBe(rec.billed.length);
		expect(policy(json, "pi-fold").events.map((e) => e.request)).toEqual(rec.rewritten);
		expect(json.arms.map((a) => a.name)).toEqual(["pi-fold", "native", "none"]);
	}, 300_000);

	it("with no Pi anywhere, `pi-fold peek` and `pi-fold unfold` read the folded session (they load none of Pi)", async () => {
		const env = { ...childEnv(piEnv()), PATH: pathWithoutPi };
		const dir = tempDir("bin-session");
		cpSync(dirname(rec.file), dir, { recursive: true });
		const file = join(dir, basename(rec.file));
		const record = readFileSync(file, "utf8")
			.split("\n")
			.find((l) => l.includes('"op":"commit"'));
		const id = (JSON.parse(record ?? "{}") as { data?: { folds?: { id: string }[] } }).data?.folds?.[0]?.id;
		expect(id).toMatch(/^f[0-9a-f]{10}$/);
		const peek = await run(bin, ["peek", file, id as string], { cwd: project, env });
		expect(peek.code, show(peek)).toBe(0);
		expect(peek.stdout).toContain(`fold ${id} (`);
		expect(peek.stdout).toContain("verified by SHA-256");
		const unfold = await run(bin, ["unfold", file], { cwd: project, env });
		expect(unfold.code, show(unfold)).toBe(0);
		expect(unfold.stdout).toContain("The session now reads the same without pi-fold.");
	}, 300_000);

	it("with no Pi anywhere, `pi-fold replay` says what to install, in one message, exit 1", async () => {
		const env = { ...childEnv(piEnv()), PATH: pathWithoutPi };
		const r = await run(bin, replayArgs(), { cwd: project, env, timeoutMs: 240_000 });
		expect(r.code, show(r)).toBe(1);
		expect(r.stdout).toBe("");
		expect(r.stderr).toContain("npm install -g @earendil-works/pi-coding-agent");
		expect(r.stderr).not.toContain("internal error");
		expect(r.stderr).not.toMatch(/\n\s+at /);
	}, 300_000);
});

describe("the two forms Pi accepts but never loads (the README warns about both)", () => {
	it("`pi install ./pi-fold-x.y.z.tgz` reports success, then the extension fails to load", async () => {
		const env = childEnv(piEnv());
		const work = tempDir("work-tgz");
		const installed = await runPi(["install", tarball], { cwd: work, env });
		expect(installed.code, show(installed)).toBe(0);
		expect(installed.stdout).toContain("Installed");
		const result = await askStatus(env, work);
		expect(`${result.stdout}${result.stderr}`).not.toContain("pi_fold_context answered:\npi-fold ");
	}, 300_000);

	it("`pi install npm:/abs/pi-fold-x.y.z.tgz` reports success, then the tool is not there", async () => {
		const env = childEnv(piEnv());
		const work = tempDir("work-npm-path");
		const installed = await timed("pi install npm:<abs .tgz>", () =>
			runPi(["install", `npm:${tarball}`], { cwd: work, env }),
		);
		expect(installed.code, show(installed)).toBe(0);
		expect(installed.stdout).toContain("Installed");
		const result = await askStatus(env, work);
		expect(result.stdout).toContain("Tool pi_fold_context not found");
	}, 300_000);
});
