// The user's settings file and /fold-settings, on real files and a real Pi AgentSession (faux
// provider, offline). Every test points XDG_CONFIG_HOME (or HOME) at its own temp dir, so the
// real ~/.config is never read or written.
import { execFile } from "node:child_process";
import {
	chmodSync,
	existsSync,
	lstatSync,
	mkdirSync,
	readdirSync,
	readFileSync,
	readlinkSync,
	statSync,
	symlinkSync,
	writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { makeSession, removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { parseSettingsArgs, settingsCompletions } from "../src/commands/fold-settings.ts";
import { DELETED_OPTIONS, parseOptions } from "../src/host/options.ts";
import piFold, { type PiFold, registerPiFold } from "../src/index.ts";
import { DEFAULT_THRESHOLDS } from "../src/policy/thresholds.ts";
import { LiveSettings } from "../src/settings/live-settings.ts";
import {
	applySettingsEdit,
	defaultSettings,
	loadSettings,
	settingsPath,
	settingsText,
	type UserSettings,
} from "../src/settings/settings-file.ts";
import { THRESHOLD_KEYS, type Thresholds } from "../src/vocabulary.ts";
import { recordingUi } from "./helpers/recording-ui.ts";
import { freshPath, runtimeSettings, withDefaults, writeRaw } from "./helpers/settings-files.ts";

afterAll(removeTempDirs);

describe("where the settings file lives", () => {
	it("honours an absolute XDG_CONFIG_HOME, else ~/.config under the given home", () => {
		expect(settingsPath({ env: { XDG_CONFIG_HOME: "/x/cfg" }, home: "/h" })).toBe("/x/cfg/pi-fold/settings.json");
		expect(settingsPath({ env: {}, home: "/h" })).toBe("/h/.config/pi-fold/settings.json");
		// The XDG spec says a relative value is invalid and must be ignored.
		expect(settingsPath({ env: { XDG_CONFIG_HOME: "rel/cfg" }, home: "/h" })).toBe("/h/.config/pi-fold/settings.json");
		expect(settingsPath({ env: { XDG_CONFIG_HOME: "" }, home: "/h" })).toBe("/h/.config/pi-fold/settings.json");
	});

	it("defaults to this process's environment and home dir", () => {
		const xdg = tempDir("xdg");
		const before = process.env.XDG_CONFIG_HOME;
		process.env.XDG_CONFIG_HOME = xdg;
		try {
			expect(settingsPath()).toBe(join(xdg, "pi-fold", "settings.json"));
		} finally {
			if (before === undefined) delete process.env.XDG_CONFIG_HOME;
			else process.env.XDG_CONFIG_HOME = before;
		}
	});
});

describe("loading the settings file", () => {
	it("a missing file gives the defaults and writes nothing", () => {
		const path = freshPath();
		const load = loadSettings(path);
		expect(load.state).toBe("missing");
		expect(load.settings).toEqual(defaultSettings());
		expect(existsSync(dirname(path))).toBe(false);
	});

	it("a current file gives its values and is not rewritten", () => {
		const path = freshPath();
		// Spaces rather than the writer's tabs: a rewrite would show as changed bytes.
		const text = JSON.stringify({ thresholds: withDefaults({ maxTarget: 0.7, minFoldChars: 4000 }) }, null, 2);
		writeRaw(path, text);
		const inode = statSync(path).ino;
		const load = loadSettings(path);
		expect(load.state).toBe("current");
		expect(load.settings.thresholds).toEqual(withDefaults({ maxTarget: 0.7, minFoldChars: 4000 }));
		expect(readFileSync(path, "utf8")).toBe(text);
		expect(statSync(path).ino).toBe(inode);
	});

	const OLD_FILES: { name: string; file: unknown; kept: Partial<Thresholds>; dropped: string[]; added: string[] }[] = [
		{
			name: "a 2.x file (thresholds.freshTail, deleted top-level options, no minFoldChars)",
			file: {
				summarizer: { model: "small" },
				guidance: "pressure",
				surfacing: true,
				thresholds: { maxTarget: 0.7, minTarget: 0.3, consolidateAfter: 6, freshTail: 4 },
			},
			kept: { maxTarget: 0.7, minTarget: 0.3, consolidateAfter: 6 },
			dropped: ["summarizer", "guidance", "surfacing", "thresholds.freshTail"],
			added: ["minFoldChars"],
		},
		{
			name: "a 1.x file (summarizeContextSpan, toolActions, providerInputBudget, two thresholds)",
			file: {
				summarizeContextSpan: true,
				toolActions: ["status", "peek"],
				providerInputBudget: 200000,
				freshTail: 3,
				thresholds: { maxTarget: 0.9, minTarget: 0.5 },
			},
			kept: { maxTarget: 0.9, minTarget: 0.5 },
			dropped: ["summarizeContextSpan", "toolActions", "providerInputBudget", "freshTail"],
			added: ["consolidateAfter", "minFoldChars"],
		},
		{ name: "an empty object", file: {}, kept: {}, dropped: [], added: [...THRESHOLD_KEYS] },
	];

	for (const old of OLD_FILES) {
		it(`migrates ${old.name}: values kept, new keys at defaults, dropped keys removed, rewritten whole`, () => {
			const path = freshPath();
			writeRaw(path, JSON.stringify(old.file));
			const load = loadSettings(path);
			expect(load.state).toBe("migrated");
			if (load.state !== "migrated") return;
			const expected = withDefaults(old.kept);
			expect(load.settings.thresholds).toEqual(expected);
			expect(load.rewrite).toEqual({ ok: true });
			for (const key of old.dropped) expect(load.changes.join("\n")).toContain(`removed ${key} (`);
			for (const key of old.added) expect(load.changes.join("\n")).toContain(`added thresholds.${key} = `);
			// The whole object, nothing else: exactly one key, every threshold present.
			const written = readFileSync(path, "utf8");
			expect(JSON.parse(written)).toEqual({ thresholds: expected });
			expect(written).toBe(settingsText({ thresholds: expected }));
			expect(readdirSync(dirname(path))).toEqual(["settings.json"]);
			// A second load finds a current file and changes nothing.
			const again = loadSettings(path);
			expect(again.state).toBe("current");
			expect(again.settings.thresholds).toEqual(expected);
			expect(readFileSync(path, "utf8")).toBe(written);
		});
	}

	const INVALID: { name: string; text: string; reason: RegExp }[] = [
		{ name: "bad JSON", text: '{"thresholds": {"maxTarget": 0.7,}}', reason: /not valid JSON/ },
		{ name: "an empty file", text: "", reason: /not valid JSON/ },
		{ name: "an array", text: "[]", reason: /JSON object.*got an array/ },
		{ name: "a wrong type", text: '{"thresholds":{"maxTarget":"high"}}', reason: /thresholds\.maxTarget.*"high"/ },
		{
			name: "an impossible policy (minTarget >= maxTarget)",
			text: '{"thresholds":{"maxTarget":0.5,"minTarget":0.6}}',
			reason: /thresholds\.minTarget \(0\.6\) must be below thresholds\.maxTarget \(0\.5\)/,
		},
		{ name: "a share above 1", text: '{"thresholds":{"maxTarget":1.5}}', reason: /thresholds\.maxTarget.*\(0, 1\]/ },
		{
			name: "a fractional count",
			text: '{"thresholds":{"consolidateAfter":2.5}}',
			reason: /thresholds\.consolidateAfter must be an integer/,
		},
		{ name: "an unknown top-level key", text: '{"thresholds":{},"colour":"blue"}', reason: /unknown key "colour"/ },
		{ name: "an unknown threshold", text: '{"thresholds":{"maxTarget":0.7,"speed":3}}', reason: /thresholds\.speed/ },
		{ name: "thresholds not an object", text: '{"thresholds":[0.8,0.4]}', reason: /thresholds must be an object/ },
		{
			// A dropped key does not make an invalid file migratable: nothing is rewritten.
			name: "dropped keys next to an invalid value",
			text: '{"guidance":"pressure","thresholds":{"freshTail":2,"minTarget":0}}',
			reason: /thresholds\.minTarget/,
		},
	];

	for (const bad of INVALID) {
		it(`leaves a file with ${bad.name} byte-for-byte alone; the defaults apply and the reason names the problem`, () => {
			const path = freshPath();
			writeRaw(path, bad.text);
			const mtime = statSync(path).mtimeMs;
			const load = loadSettings(path);
			expect(load.state).toBe("invalid");
			if (load.state !== "invalid") return;
			expect(load.reason).toMatch(bad.reason);
			expect(load.settings).toEqual(defaultSettings());
			expect(readFileSync(path, "utf8")).toBe(bad.text);
			expect(statSync(path).mtimeMs).toBe(mtime);
			expect(readdirSync(dirname(path))).toEqual(["settings.json"]);
		});
	}

	it("an unreadable file (a directory in its place) is invalid, with the reason, and untouched", () => {
		const path = freshPath();
		mkdirSync(path, { recursive: true });
		const load = loadSettings(path);
		expect(load.state).toBe("invalid");
		if (load.state === "invalid") expect(load.reason).toMatch(/cannot read it: .*EISDIR/);
		expect(statSync(path).isDirectory()).toBe(true);
	});
});

describe("applySettingsEdit", () => {
	const current: UserSettings = { thresholds: withDefaults({ maxTarget: 0.7 }) };

	it("applies an edit to the whole current object", () => {
		const r = applySettingsEdit(current, { thresholds: { minTarget: 0.3 } });
		expect(r).toEqual({ ok: true, settings: { thresholds: withDefaults({ maxTarget: 0.7, minTarget: 0.3 }) } });
		expect(current.thresholds).toEqual(withDefaults({ maxTarget: 0.7 }));
	});

	it("validates the result against the current values, not the defaults", () => {
		// 0.75 is below the default maxTarget (0.8) but not below the file's 0.7.
		const r = applySettingsEdit(current, { thresholds: { minTarget: 0.75 } });
		expect(r.ok).toBe(false);
		if (!r.ok) expect(r.problems.join()).toMatch(/minTarget \(0\.75\) must be below thresholds\.maxTarget \(0\.7\)/);
	});

	it("refuses other keys, naming a dropped one's deletion", () => {
		const r = applySettingsEdit(current, { summarizer: {}, colour: 1, thresholds: { maxTarget: 0.6 } });
		expect(r.ok).toBe(false);
		if (r.ok) return;
		expect(r.problems).toContain(`summarizer is no longer a setting: ${DELETED_OPTIONS.get("summarizer")}`);
		expect(r.problems.join()).toMatch(/colour is not a setting/);
	});
});

describe("edits are atomic", () => {
	it("an accepted edit replaces the file whole, leaves no temp file, and updates the live object", () => {
		const path = freshPath();
		writeRaw(path, settingsText({ thresholds: withDefaults({ maxTarget: 0.7 }) }));
		const settings = runtimeSettings();
		const live = new LiveSettings(settings, path, false);
		expect(live.source).toBe("file");
		expect(settings.thresholds.maxTarget).toBe(0.7);
		const out = live.edit({ thresholds: { minTarget: 0.25, minFoldChars: 5000 } });
		expect(out).toMatchObject({ ok: true, live: true });
		const expected = withDefaults({ maxTarget: 0.7, minTarget: 0.25, minFoldChars: 5000 });
		expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ thresholds: expected });
		expect(settings.thresholds).toEqual(expected);
		expect(readdirSync(dirname(path))).toEqual(["settings.json"]);
	});

	it("a refused edit leaves the file identical and the live thresholds as they were", () => {
		const path = freshPath();
		const text = settingsText({ thresholds: withDefaults({ maxTarget: 0.7 }) });
		writeRaw(path, text);
		const settings = runtimeSettings();
		const live = new LiveSettings(settings, path, false);
		const before = { ...settings.thresholds };
		const mtime = statSync(path).mtimeMs;
		for (const edit of [
			{ thresholds: { minTarget: 0.7 } },
			{ thresholds: { maxTarget: 0 } },
			{ thresholds: { consolidateAfter: "ten" } },
			{ thresholds: { nope: 1 } },
		]) {
			expect(live.edit(edit).ok).toBe(false);
		}
		expect(readFileSync(path, "utf8")).toBe(text);
		expect(statSync(path).mtimeMs).toBe(mtime);
		expect(settings.thresholds).toEqual(before);
		expect(readdirSync(dirname(path))).toEqual(["settings.json"]);
	});

	it("an edit while the file is invalid is refused (the file is left for the user); reset replaces it", () => {
		const path = freshPath();
		writeRaw(path, '{"thresholds":{"maxTarget":"0.7"}}');
		const settings = runtimeSettings();
		const live = new LiveSettings(settings, path, false);
		expect(live.source).toBe("defaults");
		expect(live.fileProblem).toMatch(/thresholds\.maxTarget/);
		const out = live.edit({ thresholds: { maxTarget: 0.7 } });
		expect(out.ok).toBe(false);
		if (!out.ok) expect(out.problems.join()).toMatch(/invalid and was left as it is.*\/fold-settings reset/);
		expect(readFileSync(path, "utf8")).toBe('{"thresholds":{"maxTarget":"0.7"}}');
		expect(live.reset()).toMatchObject({ ok: true, live: true });
		expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ thresholds: DEFAULT_THRESHOLDS });
		expect(live.source).toBe("file");
	});

	it("writes through a symlinked settings file (the link stays, its target gets the new bytes)", () => {
		const path = freshPath();
		const target = join(tempDir("dotfiles"), "pi-fold.json");
		writeFileSync(target, settingsText(defaultSettings()));
		mkdirSync(dirname(path), { recursive: true });
		symlinkSync(target, path);
		const live = new LiveSettings(runtimeSettings(), path, false);
		expect(live.edit({ thresholds: { maxTarget: 0.85 } }).ok).toBe(true);
		expect(lstatSync(path).isSymbolicLink()).toBe(true);
		expect(readlinkSync(path)).toBe(target);
		expect(JSON.parse(readFileSync(target, "utf8")).thresholds.maxTarget).toBe(0.85);
		expect(readdirSync(dirname(target))).toEqual(["pi-fold.json"]);
	});

	it("a failed write (read-only directory) leaves the old file intact, no temp file, live values unchanged", async () => {
		// Root ignores directory permissions, so when running as root the edit runs in a child
		// process as an unprivileged user; otherwise in a child as ourselves. Either way a real EACCES.
		const root = tempDir("ro");
		chmodSync(root, 0o755);
		const path = settingsPath({ env: { XDG_CONFIG_HOME: root } });
		const text = settingsText({ thresholds: withDefaults({ maxTarget: 0.7 }) });
		writeRaw(path, text);
		chmodSync(dirname(path), 0o555);
		chmodSync(path, 0o644);
		const liveModule = fileURLToPath(new URL("../src/settings/live-settings.ts", import.meta.url));
		const script = `
			const { LiveSettings } = await import(${JSON.stringify(liveModule)});
			const settings = { thresholds: { maxTarget: 0.8, minTarget: 0.4, consolidateAfter: 10, minFoldChars: 8000 }, blacklistAutoFoldTools: new Set() };
			const live = new LiveSettings(settings, ${JSON.stringify(path)}, false);
			const before = { ...settings.thresholds };
			const out = live.edit({ thresholds: { minTarget: 0.3 } });
			console.log(JSON.stringify({ out, before, after: settings.thresholds }));
		`;
		const asRoot = process.getuid?.() === 0;
		const result = await new Promise<{ stdout: string; stderr: string; code: number }>((resolve) => {
			execFile(
				process.execPath,
				["--input-type=module", "-e", script],
				{ ...(asRoot ? { uid: 65534, gid: 65534 } : {}), cwd: root, env: { PATH: process.env.PATH ?? "" } },
				(error, stdout, stderr) => resolve({ stdout, stderr, code: error ? Number(error.code ?? 1) : 0 }),
			);
		});
		chmodSync(dirname(path), 0o755);
		expect(result.stderr).toBe("");
		expect(result.code).toBe(0);
		const { out, before, after } = JSON.parse(result.stdout);
		expect(before.maxTarget).toBe(0.7); // the child read the old file
		expect(out.ok).toBe(false);
		expect(out.problems.join()).toMatch(/cannot create a temp file for .*settings\.json: .*EACCES/);
		expect(after).toEqual(before);
		expect(readFileSync(path, "utf8")).toBe(text);
		expect(readdirSync(dirname(path))).toEqual(["settings.json"]);
	});
});

describe("registerPiFold options", () => {
	for (const [name, reason] of DELETED_OPTIONS) {
		it(`refuses the deleted option ${name} with its own reason`, () => {
			const r = parseOptions({ [name]: true });
			expect(r.ok).toBe(false);
			if (!r.ok) expect(r.problems).toEqual([`option ${name} was deleted: ${reason}`]);
		});
	}

	it("each deleted option names a reason of its own kind (not one shared sentence for all)", () => {
		expect(new Set(DELETED_OPTIONS.values()).size).toBeGreaterThanOrEqual(DELETED_OPTIONS.size - 1);
		for (const name of ["summarizer", "summarizeContextSpan", "guidance", "surfacing", "freshTail", "toolActions"]) {
			expect(DELETED_OPTIONS.has(name), name).toBe(true);
		}
	});

	it("refuses unknown names, listing the known ones", () => {
		const r = parseOptions({ budget: 1000 });
		expect(r.ok).toBe(false);
		if (!r.ok) {
			expect(r.problems).toEqual([
				"unknown option budget (known: thresholds, providerInputBudget, blacklistAutoFoldTools, clock)",
			]);
		}
	});

	it("refuses an impossible policy by name instead of clamping it", () => {
		const r = parseOptions({ thresholds: { maxTarget: 0.5, minTarget: 0.6, consolidateAfter: 0 } });
		expect(r.ok).toBe(false);
		if (r.ok) return;
		expect(r.problems.join("\n")).toMatch(
			/thresholds\.minTarget \(0\.6\) must be below thresholds\.maxTarget \(0\.5\)/,
		);
		expect(r.problems.join("\n")).toMatch(/thresholds\.consolidateAfter must be an integer >= 1, got 0/);
	});

	it("a deleted option makes registration fail in a real session, naming the deletion", async () => {
		await expect(
			makeSession({ extensions: [(pi) => void registerPiFold(pi, { freshTail: 4 } as never)] }),
		).rejects.toThrow(/option freshTail was deleted: the frontier decides what stays raw/);
	});
});

describe("/fold-settings argument parsing", () => {
	it("completes the last word with a threshold key, keeping what came before", () => {
		expect(settingsCompletions("max")?.map((i) => i.value)).toEqual(["maxTarget="]);
		expect(settingsCompletions("")?.map((i) => i.value)).toEqual([...THRESHOLD_KEYS.map((k) => `${k}=`), "reset"]);
		expect(settingsCompletions("maxTarget=0.7 mi")?.map((i) => i.value)).toEqual([
			"maxTarget=0.7 minTarget=",
			"maxTarget=0.7 minFoldChars=",
		]);
		expect(settingsCompletions("maxTarget=0.7 re")).toBeNull();
	});

	it("reads key=value pairs, reset and nothing; numbers become numbers, anything else stays text for the validator", () => {
		expect(parseSettingsArgs("  ")).toEqual({ kind: "show" });
		expect(parseSettingsArgs("reset")).toEqual({ kind: "reset" });
		expect(parseSettingsArgs("maxTarget=0.75 minTarget=.35 minFoldChars=1e4")).toEqual({
			kind: "edit",
			edit: { thresholds: { maxTarget: 0.75, minTarget: 0.35, minFoldChars: 10000 } },
		});
		expect(parseSettingsArgs("maxTarget= minTarget=abc")).toEqual({
			kind: "edit",
			edit: { thresholds: { maxTarget: "", minTarget: "abc" } },
		});
		const bad = parseSettingsArgs("maxTarget 0.7 minTarget=0.3 minTarget=0.2");
		expect(bad.kind).toBe("refused");
		if (bad.kind === "refused") {
			expect(bad.problems.join()).toMatch(/"maxTarget" is not key=value/);
			expect(bad.problems.join()).toMatch(/minTarget is given twice/);
		}
	});
});

// ---- /fold-settings through a real AgentSession ----

describe("/fold-settings in a real session", () => {
	const savedXdg = process.env.XDG_CONFIG_HOME;
	afterEach(() => {
		if (savedXdg === undefined) delete process.env.XDG_CONFIG_HOME;
		else process.env.XDG_CONFIG_HOME = savedXdg;
	});

	/** A session with pi-fold registered by `register`, settings under a fresh XDG_CONFIG_HOME holding `file`. */
	async function sessionWith(file: string | undefined, register: (pi: Parameters<typeof piFold>[0]) => void) {
		const xdg = tempDir("xdg");
		const path = settingsPath({ env: { XDG_CONFIG_HOME: xdg } });
		if (file !== undefined) writeRaw(path, file);
		// Set inside the factory: the harness isolates XDG_CONFIG_HOME itself just before loading extensions.
		const h = await makeSession({
			extensions: [
				(pi) => {
					process.env.XDG_CONFIG_HOME = xdg;
					register(pi);
				},
			],
		});
		const rec = recordingUi();
		await h.session.bindExtensions({ uiContext: rec.ui, mode: "tui" });
		const run = async (args: string) => {
			rec.notes.length = 0;
			await h.session.prompt(`/fold-settings${args ? ` ${args}` : ""}`);
			expect(rec.notes, `/fold-settings ${args} answers once`).toHaveLength(1);
			return rec.notes[0];
		};
		return { h, path, rec, run };
	}

	it("the default export runs with the file's thresholds, and /fold-settings says where they came from", async () => {
		const { h, path, run } = await sessionWith(settingsText({ thresholds: withDefaults({ maxTarget: 0.66 }) }), piFold);
		try {
			const shown = await run("");
			expect(shown.type).toBe("info");
			expect(shown.message).toContain(path);
			expect(shown.message).toMatch(
				/in force \(from the settings file\): maxTarget=0\.66 minTarget=0\.4 consolidateAfter=10 minFoldChars=8000/,
			);
			expect(h.faux.state.callCount).toBe(0);
		} finally {
			h.dispose();
		}
	});

	it("an edit validates the whole object, is written atomically and takes effect live; a refused edit changes nothing", async () => {
		let fold: PiFold | undefined;
		const old = JSON.stringify({ guidance: "curation", thresholds: { maxTarget: 0.7, freshTail: 2 } });
		const { h, path, run } = await sessionWith(old, (pi) => {
			fold = registerPiFold(pi);
		});
		try {
			const rt = fold?.runtime.get();
			if (!rt) throw new Error(`no runtime: ${fold?.runtime.reason()}`);
			// Registration migrated the old file and runs with its value.
			expect(rt.settings.thresholds).toEqual(withDefaults({ maxTarget: 0.7 }));
			expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ thresholds: withDefaults({ maxTarget: 0.7 }) });

			const edited = await run("maxTarget=0.75 minTarget=0.35");
			expect(edited.type ?? "info").toBe("info");
			expect(edited.message).toMatch(/saved to .*maxTarget=0\.75 minTarget=0\.35.*in force now/);
			const expected = withDefaults({ maxTarget: 0.75, minTarget: 0.35 });
			expect(rt.settings.thresholds).toEqual(expected);
			expect(rt.status().thresholds).toEqual(expected);
			expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ thresholds: expected });
			expect(readdirSync(dirname(path))).toEqual(["settings.json"]);

			const bytes = readFileSync(path, "utf8");
			for (const [args, reason] of [
				["minTarget=0.8", /thresholds\.minTarget \(0\.8\) must be below thresholds\.maxTarget \(0\.75\)/],
				["maxTarget=high", /thresholds\.maxTarget must be a number in \(0, 1\], got "high"/],
				["bogus=1", /thresholds\.bogus is not a threshold/],
				["maxTarget", /"maxTarget" is not key=value/],
			] as const) {
				const refused = await run(args);
				expect(refused.type).toBe("error");
				expect(refused.message).toMatch(/^\/fold-settings refused, nothing changed: /);
				expect(refused.message).toMatch(reason);
				expect(readFileSync(path, "utf8")).toBe(bytes);
				expect(rt.settings.thresholds).toEqual(expected);
			}

			const reset = await run("reset");
			expect(reset.message).toMatch(/defaults saved to .*in force now/);
			expect(rt.settings.thresholds).toEqual({ ...DEFAULT_THRESHOLDS });
			expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ thresholds: DEFAULT_THRESHOLDS });
			expect(h.faux.state.callCount).toBe(0);
			expect(h.extensionErrors).toEqual([]);
		} finally {
			h.dispose();
		}
	});

	it("with thresholds fixed by registerPiFold options, an edit is saved to the file but the options win", async () => {
		let fold: PiFold | undefined;
		const { h, path, run } = await sessionWith(settingsText(defaultSettings()), (pi) => {
			fold = registerPiFold(pi, { thresholds: { maxTarget: 0.9 } });
		});
		try {
			const rt = fold?.runtime.get();
			if (!rt) throw new Error("no runtime");
			expect((await run("")).message).toMatch(/in force \(from registerPiFold options\): maxTarget=0\.9/);
			const edited = await run("maxTarget=0.6");
			expect(edited.message).toMatch(/saved to .*maxTarget=0\.6.*registerPiFold options win for this session/);
			expect(JSON.parse(readFileSync(path, "utf8")).thresholds.maxTarget).toBe(0.6);
			expect(rt.settings.thresholds).toEqual(withDefaults({ maxTarget: 0.9 }));
		} finally {
			h.dispose();
		}
	});

	it("an invalid file is left alone: defaults run, status and /fold-settings name the reason, edits are refused", async () => {
		let fold: PiFold | undefined;
		const bad = '{"thresholds":{"maxTarget":0.5,"minTarget":0.5}}';
		const { h, path, run } = await sessionWith(bad, (pi) => {
			fold = registerPiFold(pi);
		});
		try {
			const rt = fold?.runtime.get();
			if (!rt) throw new Error("no runtime");
			expect(rt.settings.thresholds).toEqual({ ...DEFAULT_THRESHOLDS });
			expect(rt.status().problems.join("\n")).toMatch(/settings: .*settings\.json is invalid.*minTarget \(0\.5\)/);
			const shown = await run("");
			expect(shown.type).toBe("warning");
			expect(shown.message).toMatch(/in force \(from the defaults\)/);
			expect(shown.message).toMatch(/INVALID, left as it is, defaults apply: .*must be below thresholds\.maxTarget/);
			const refused = await run("maxTarget=0.7");
			expect(refused.type).toBe("error");
			expect(readFileSync(path, "utf8")).toBe(bad);
			expect(rt.settings.thresholds).toEqual({ ...DEFAULT_THRESHOLDS });
		} finally {
			h.dispose();
		}
	});

	it("with no XDG_CONFIG_HOME the file is under the (isolated) HOME's .config", async () => {
		let fold: PiFold | undefined;
		const h = await makeSession({
			extensions: [
				(pi) => {
					// The harness isolates XDG_CONFIG_HOME too: drop it here, after the isolation ran.
					delete process.env.XDG_CONFIG_HOME;
					fold = registerPiFold(pi);
				},
			],
		});
		try {
			const home = process.env.HOME ?? "";
			// The harness's temp HOME, never the real one.
			expect(home).toMatch(/pi-fold-env-/);
			const rec = recordingUi();
			await h.session.bindExtensions({ uiContext: rec.ui, mode: "tui" });
			await h.session.prompt("/fold-settings minFoldChars=6000");
			const path = join(home, ".config", "pi-fold", "settings.json");
			expect(JSON.parse(readFileSync(path, "utf8")).thresholds.minFoldChars).toBe(6000);
			expect(fold?.runtime.get()?.settings.thresholds.minFoldChars).toBe(6000);
		} finally {
			h.dispose();
		}
	});
});
