// The Pi extension entry (src/index.ts) inside a real AgentSession: the model calls
// pi_fold_context and reads what the Wasm core answered; bad calls come back as refusals
// and the session carries on.
import { hash } from "node:crypto";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@earendil-works/pi-ai";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { afterAll, describe, expect, it } from "vitest";
import { CORE_WASM_URL, loadCoreFile } from "../bindings/node.ts";
import { makeSession, removeTempDirs, type TestSession, textOf, toolResultFor } from "../harness/pi-harness.ts";
import { coreLoader } from "../src/core.ts";
import piFold from "../src/index.ts";
import { STATUS_PROBE } from "../src/operations/core-report.ts";
import { runFoldAction } from "../src/tool/dispatch.ts";
import type { ToolEnv } from "../src/tool/env.ts";
import { registerFoldTool } from "../src/tool/register.ts";
import type { StatusDetails } from "../src/tool/status.ts";

const readJson = (url: URL): { version: string } => JSON.parse(readFileSync(url, "utf8"));
const PKG_VERSION = readJson(new URL("../package.json", import.meta.url)).version;
const PI_VERSION = readJson(
	new URL("../node_modules/@earendil-works/pi-coding-agent/package.json", import.meta.url),
).version;
const PROBE_SHA256 = hash("sha256", STATUS_PROBE, "hex");

afterAll(removeTempDirs);

/** Script: call pi_fold_context with `args`, then answer with the tool result's text (as the CLI fixture does). */
function callThenEcho(h: TestSession, args: Parameters<typeof fauxToolCall>[1], id: string): void {
	h.script([
		fauxAssistantMessage(fauxToolCall("pi_fold_context", args, { id }), { stopReason: "toolUse" }),
		(context) => {
			const result = toolResultFor(context.messages, id);
			return fauxAssistantMessage(fauxText(`tool said: ${result ? textOf(result) : "<no result>"}`));
		},
	]);
}

/** The tool result the session recorded for a call (details included, unlike the request copy). */
function recordedResult(h: TestSession, id: string) {
	const result = toolResultFor(h.session.messages, id);
	if (!result) throw new Error(`no tool result for ${id}`);
	return result;
}

function lastAssistantText(h: TestSession): string {
	const last = h.session.messages.findLast((m) => m.role === "assistant");
	return last && last.role === "assistant" ? textOf(last) : "";
}

describe("pi_fold_context in an AgentSession", () => {
	it("status reports the Wasm core, its self-check, a core-computed digest and both versions", async () => {
		const h = await makeSession({ extensions: [piFold] });
		try {
			callThenEcho(h, { action: "status" }, "s1");
			await h.session.prompt("status please");

			expect(h.captured).toHaveLength(2);
			// The tool is declared to the model with its action enum.
			const system = JSON.stringify(h.captured[0].context.messages[0]);
			expect(system).toContain("pi_fold_context");

			const result = recordedResult(h, "s1");
			const text = textOf(result);
			expect(result.isError).toBe(false);
			const expectedCore = loadCoreFile(); // an independent instance of the same .wasm
			expect(text).toContain(`pi-fold-core ${expectedCore.version} (WebAssembly)`);
			expect(text).toContain("self-check: ok");
			expect(text).toContain(`probe sha256 (by the core): ${PROBE_SHA256}`);
			expect(text).toContain(`pi-fold ${PKG_VERSION} status`);
			expect(text).toContain(`host: Pi ${PI_VERSION}`);

			const details = result.details as unknown as StatusDetails;
			expect(details).toMatchObject({
				ok: true,
				action: "status",
				packageVersion: PKG_VERSION,
				piVersion: PI_VERSION,
				core: {
					version: expectedCore.version,
					selfCheck: { ok: true, failed: [] },
					source: fileURLToPath(CORE_WASM_URL),
					probe: { text: STATUS_PROBE, sha256: PROBE_SHA256 },
				},
			});
			// The model saw the same text the tool produced, and answered with it.
			expect(textOf(toolResultFor(h.captured[1].context.messages, "s1")!)).toBe(text);
			expect(lastAssistantText(h)).toBe(`tool said: ${text}`);
			expect(h.extensionErrors).toEqual([]);
		} finally {
			h.dispose();
		}
	});

	it("refuses an unknown action as a tool result, and the session keeps running", async () => {
		const h = await makeSession({ extensions: [piFold] });
		try {
			callThenEcho(h, { action: "explode" }, "bad1");
			await h.session.prompt("do something odd");

			const refused = recordedResult(h, "bad1");
			expect(refused.isError).toBe(true);
			// Pi's schema check answers first: it names the argument, the allowed values and what was sent.
			expect(textOf(refused)).toMatch(/action: expected one of \[[^\]]*"status"/);
			expect(textOf(refused)).toContain('"explode"');
			// The turn after the refusal ran and saw the refusal.
			expect(h.captured).toHaveLength(2);
			expect(lastAssistantText(h)).toBe(`tool said: ${textOf(refused)}`);

			// The same session still works: a later prompt gets a real status.
			callThenEcho(h, { action: "status" }, "s2");
			await h.session.prompt("now status");
			const ok = recordedResult(h, "s2");
			expect(ok.isError).toBe(false);
			expect(textOf(ok)).toContain(`probe sha256 (by the core): ${PROBE_SHA256}`);
			expect(h.captured).toHaveLength(4);
			expect(h.extensionErrors).toEqual([]);
		} finally {
			h.dispose();
		}
	});

	it("refuses an argument the schema lets through with pi-fold's own refusal", async () => {
		const h = await makeSession({ extensions: [piFold] });
		try {
			// Pi's schema allows extra properties, so this call reaches the tool's own parser.
			callThenEcho(h, { action: "status", depth: 3 }, "bad3");
			await h.session.prompt("status, deeply");
			const refused = recordedResult(h, "bad3");
			expect(refused.isError).toBe(true);
			// The refusal, then the window arithmetic every answer ends with.
			const [reason, ...closing] = textOf(refused).split("\n");
			expect(reason).toBe(
				'pi_fold_context refused: argument "depth" does not apply to action "status" (it takes "detail", "offset")',
			);
			expect(closing).toEqual([expect.stringMatching(/^-- window: ~\d+ of \d+ tokens/)]);
			expect(refused.details).toMatchObject({ ok: false, action: "status" });
			expect(lastAssistantText(h)).toBe(`tool said: ${textOf(refused)}`);
			expect(h.extensionErrors).toEqual([]);
		} finally {
			h.dispose();
		}
	});

	it("refuses a wrongly typed action", async () => {
		const h = await makeSession({ extensions: [piFold] });
		try {
			callThenEcho(h, { action: 42 }, "bad2");
			await h.session.prompt("typo");
			const refused = recordedResult(h, "bad2");
			expect(refused.isError).toBe(true);
			expect(textOf(refused)).toMatch(/action: expected one of \[[^\]]*"status"/);
			expect(lastAssistantText(h)).toBe(`tool said: ${textOf(refused)}`);
		} finally {
			h.dispose();
		}
	});

	it("answers status with the load failure when the core cannot load, without breaking the session", async () => {
		const missing = "/nonexistent/pi-fold-core.wasm";
		const brokenFold = (pi: ExtensionAPI) =>
			registerFoldTool(pi, {
				core: coreLoader(() => loadCoreFile(missing), missing),
				packageVersion: () => PKG_VERSION,
				piVersion: () => PI_VERSION,
			});
		const h = await makeSession({ extensions: [brokenFold] });
		try {
			callThenEcho(h, { action: "status" }, "s3");
			await h.session.prompt("status please");
			const result = recordedResult(h, "s3");
			expect(result.isError).toBe(true);
			const text = textOf(result);
			expect(text).toContain(`FAILED TO LOAD the pi-fold WebAssembly core from ${missing}`);
			expect(text).toContain(`cannot read ${missing}`); // the reason from the loader
			expect(text).toContain(`pi-fold ${PKG_VERSION} status`);
			expect(result.details).toMatchObject({ ok: false, action: "status", core: { source: missing } });
			expect(lastAssistantText(h)).toBe(`tool said: ${text}`);
			expect(h.extensionErrors).toEqual([]);
		} finally {
			h.dispose();
		}
	});
});

// Pi's schema check stops most bad calls before execute; the tool's own parser is the guard for
// callers that skip it and for the rules a schema cannot state. It must refuse, never throw.
describe("pi_fold_context's own argument guard", () => {
	const env: ToolEnv = {
		core: coreLoader(() => loadCoreFile(), fileURLToPath(CORE_WASM_URL)),
		packageVersion: () => PKG_VERSION,
		piVersion: () => PI_VERSION,
	};
	const cases: [string, unknown, RegExp][] = [
		["an unknown action", { action: "explode" }, /unknown action "explode"; use one of .*"status"/],
		["a non-string action", { action: 42 }, /"action" must be a string, got number 42/],
		["a missing action", {}, /"action" is missing/],
		["a non-object", "status", /arguments must be an object/],
		["null", null, /arguments must be an object with an "action", got null/],
		["an unknown argument", { action: "status", depth: 3 }, /argument "depth" does not apply to action "status"/],
	];
	for (const [name, args, reason] of cases) {
		it(`refuses ${name}`, async () => {
			const result = await runFoldAction(args, env);
			expect(result.isError).toBe(true);
			expect(textOf(result)).toMatch(/^pi_fold_context refused: /);
			expect(textOf(result)).toMatch(reason);
			expect(result.details).toMatchObject({ ok: false });
		});
	}

	it("turns a failure inside an action into an error result", async () => {
		const throwing: ToolEnv = {
			...env,
			packageVersion: () => {
				throw new Error("disk on fire");
			},
		};
		const result = await runFoldAction({ action: "status" }, throwing);
		expect(result.isError).toBe(true);
		expect(textOf(result)).toContain('action "status" failed inside pi-fold: disk on fire');
	});
});
