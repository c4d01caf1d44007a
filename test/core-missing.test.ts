// pi-fold loaded by Pi (jiti, from a package folder) when its core cannot load: a copy of this
// package with the core file missing (a checkout before its core was built) or cut short. pi-fold
// stays off, and says why and how to fix it (the command, in that folder): in status, in
// /fold-status, and once as a notice. Which command depends on the folder: see coreFix.
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@earendil-works/pi-ai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeSession, removeTempDirs, type TestSession, tempDir, textOf } from "../harness/pi-harness.ts";
import { coreFix } from "../src/core.ts";
import { FOLD_TOOL_NAME } from "../src/vocabulary.ts";
import { REPO_ROOT } from "./helpers/pi-cli.ts";
import { recordingUi } from "./helpers/recording-ui.ts";

afterAll(removeTempDirs);

const CORE = "wasm/pi-fold-core.wasm";
const AFTER = "then /reload or restart Pi";

/** What Pi loads of this package (and assembly/, as in a checkout), the dependencies linked. */
function packageCopy(name: string): string {
	const copy = tempDir(name);
	for (const part of ["package.json", "src", "bindings", "assembly", "wasm"]) {
		cpSync(join(REPO_ROOT, part), join(copy, part), { recursive: true });
	}
	symlinkSync(join(REPO_ROOT, "node_modules"), join(copy, "node_modules"));
	return copy;
}

const damages: [string, (core: string) => void, RegExp][] = [
	["missing", (core) => rmSync(core), /ENOENT/],
	["cut short", (core) => writeFileSync(core, readFileSync(core).subarray(0, 1000)), /WebAssembly\.Module\(\)/],
];

for (const [damage, harm, reason] of damages) {
	describe(`a package whose core is ${damage}: pi-fold says how to fix it`, () => {
		let h: TestSession;
		let copy = "";
		const recorder = recordingUi();
		const statusCall = "status-no-core";
		/** The checkout has the compiler (its node_modules are this repo's): the build alone. */
		const fix = () => `run \`npm run build:wasm\` in ${copy}, ${AFTER}`;

		beforeAll(async () => {
			copy = packageCopy(`no-core-${damage.replace(" ", "-")}`);
			harm(join(copy, CORE));
			h = await makeSession({ extensionPaths: [copy] });
			// Pi binds its UI once; binding again shows the notice is not repeated.
			await h.session.bindExtensions({ uiContext: recorder.ui, mode: "tui" });
			await h.session.bindExtensions({ uiContext: recorder.ui, mode: "tui" });
			h.script([
				fauxAssistantMessage(fauxToolCall(FOLD_TOOL_NAME, { action: "status" }, { id: statusCall }), {
					stopReason: "toolUse",
				}),
				fauxAssistantMessage(fauxText("noted")),
			]);
			await h.session.prompt("Report pi-fold's status.");
		}, 300_000);
		afterAll(() => h?.dispose());

		it("tells the person once, with the reason, the command and the folder", () => {
			const notes = recorder.notes.filter((n) => n.message.startsWith("pi-fold is off: "));
			expect(notes).toHaveLength(1);
			expect(notes[0].type).toBe("error");
			expect(notes[0].message).toContain(`the pi-fold core did not load from ${join(copy, CORE)}: `);
			expect(notes[0].message).toMatch(reason);
			expect(notes[0].message).toContain(`To fix it, ${fix()}.`);
		});

		it("status names the failure and the fix, and the session goes on", () => {
			const result = h.session.messages.find((m) => m.role === "toolResult" && m.toolCallId === statusCall);
			if (result?.role !== "toolResult") throw new Error("no status result");
			const text = textOf(result);
			expect(text).toContain(`core: FAILED TO LOAD the pi-fold WebAssembly core from ${join(copy, CORE)}: `);
			expect(text).toContain(`\nfix: ${fix()}; `);
			expect(result.details).toMatchObject({ ok: false, core: { source: join(copy, CORE), fix: fix() } });
			expect(h.extensionErrors).toEqual([]);
		});

		it("/fold-status says the fix too", async () => {
			const before = recorder.notes.length;
			await h.session.prompt("/fold-status");
			const answer = recorder.notes.slice(before);
			expect(answer).toHaveLength(1);
			expect(answer[0].message).toContain("/fold-status: pi-fold is not running (");
			expect(answer[0].message).toContain(`To fix it, ${fix()})`);
		});
	});
}

describe("the fix for each kind of folder", () => {
	it("a checkout with only runtime dependencies (a git install): the compiler first", () => {
		const root = tempDir("fix-git-install");
		mkdirSync(join(root, "assembly"));
		mkdirSync(join(root, "node_modules/msgpackr"), { recursive: true });
		expect(coreFix(join(root, CORE))).toBe(`run \`npm install && npm run build:wasm\` in ${root}, ${AFTER}`);
	});

	it("a checkout with its dev dependencies: the build alone", () => {
		const root = tempDir("fix-checkout");
		mkdirSync(join(root, "assembly"));
		mkdirSync(join(root, "node_modules/assemblyscript"), { recursive: true });
		expect(coreFix(join(root, CORE))).toBe(`run \`npm run build:wasm\` in ${root}, ${AFTER}`);
	});

	it("an installed package (no sources): installed again where npm put it", () => {
		const prefix = tempDir("fix-npm");
		const root = join(prefix, "node_modules/pi-fold");
		mkdirSync(root, { recursive: true });
		expect(coreFix(join(root, CORE))).toBe(
			`reinstall pi-fold: remove ${root} and run \`npm install\` in ${prefix}, ${AFTER}`,
		);
	});
});
