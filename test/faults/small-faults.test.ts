// Small faults, each a clear message: a read-only store names EROFS (Node's recursive mkdir says
// ENOENT there), NaN and Infinity arguments are shown as such, not as JSON's null, and hostile
// argument objects (a throwing getter, a throwing Proxy) handed to the tool's execute are refused.
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { nodeCore } from "../../bindings/node.ts";
import { removeTempDirs, tempDir, textOf } from "../../harness/pi-harness.ts";
import { FoldStore, StoreError } from "../../src/store/index.ts";
import { parseFoldArgs } from "../../src/tool/schema.ts";
import { FOLD_TOOL_NAME } from "../../src/vocabulary.ts";
import { foldedSession, runWorkload } from "./fault-session.ts";

afterAll(removeTempDirs);

/** A read-only tmpfs, when this machine lets the test mount one (root with CAP_SYS_ADMIN). */
function readOnlyMount(): string | undefined {
	const dir = join(tempDir("rofs"), "mnt");
	mkdirSync(dir);
	try {
		execFileSync("mount", ["-t", "tmpfs", "-o", "ro,size=1m", "tmpfs", dir], { stdio: "ignore" });
		return dir;
	} catch {
		return undefined;
	}
}

describe("a read-only store", () => {
	const mount = readOnlyMount();
	afterAll(() => {
		if (mount) execFileSync("umount", [mount]);
	});

	it.skipIf(!mount)("is reported as a read-only file system, naming the directory", () => {
		const store = new FoldStore(join(mount as string, "pi-fold", "s1"), nodeCore());
		let err: unknown;
		try {
			store.putLeaves(["a leaf"]);
		} catch (e) {
			err = e;
		}
		expect(err).toBeInstanceOf(StoreError);
		expect((err as StoreError).code).toBe("IO");
		expect((err as Error).message).toMatch(/cannot create directory .*EROFS/);
	});
});

describe("numbers JSON cannot carry", () => {
	it("are shown as NaN and Infinity in refusals", () => {
		const nan = parseFoldArgs({ action: "peek", id: "f0123456789", offset: Number.NaN });
		expect(nan).toEqual({ ok: false, action: "peek", reason: '"offset" must be a whole number >= 0, got number NaN' });
		const inf = parseFoldArgs({ action: "peek", id: "f0123456789", bytes: Number.POSITIVE_INFINITY });
		expect(!inf.ok && inf.reason).toMatch(/got number Infinity$/);
	});
});

describe("hostile argument objects handed to the tool's execute", () => {
	it("a throwing getter and a throwing Proxy are refused, never thrown, and change nothing", async () => {
		const s = await foldedSession();
		try {
			await runWorkload(s, 2, { seed: 5 });
			const tool = s.h.session.getToolDefinition(FOLD_TOOL_NAME);
			if (!tool) throw new Error("the tool is not registered");
			const rt = s.rt();
			const before = rt.lattice?.snapshot();
			const getter = Object.defineProperty({ action: "status" }, "id", {
				enumerable: true,
				get() {
					throw new Error("getter bomb");
				},
			});
			const proxy = new Proxy(
				{ action: "peek" },
				{
					get() {
						throw new Error("proxy bomb");
					},
				},
			);
			const keys = new Proxy(
				{},
				{
					ownKeys() {
						throw new Error("keys bomb");
					},
				},
			);
			const idsProxy = {
				action: "pin",
				ids: new Proxy(["e1"], {
					get(target, key) {
						if (key === "length") throw new Error("ids bomb");
						return Reflect.get(target, key);
					},
				}),
			};
			for (const [args, says] of [
				[getter, /arguments could not be read: reading "id" threw \(getter bomb\)/],
				[proxy, /arguments could not be read: reading "action" threw \(proxy bomb\)/],
				[keys, /arguments could not be read: reading the arguments' keys threw \(keys bomb\)/],
				[idsProxy, /arguments could not be read: reading "ids" threw \(ids bomb\)/],
			] as const) {
				const result = await tool.execute(
					"hostile",
					args as never,
					undefined,
					undefined,
					s.h.session.extensionRunner.createContext() as never,
				);
				expect(result.isError, textOf(result)).toBe(true);
				expect(textOf(result)).toMatch(/^pi_fold_context refused: /);
				expect(textOf(result)).toMatch(says);
			}
			expect(rt.lattice?.snapshot()).toEqual(before);
			expect(rt.status().problems).toEqual([]);
		} finally {
			s.h.dispose();
		}
	});
});
