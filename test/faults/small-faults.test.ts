// Small faults, each a clear message: a read-only store names EROFS (Node's recursive mkdir says
// ENOENT there), NaN and Infinity arguments are shown as such, not as JSON's null.
import { execFileSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { nodeCore } from "../../bindings/node.ts";
import { removeTempDirs, tempDir } from "../../harness/pi-harness.ts";
import { FoldStore, StoreError } from "../../src/store/index.ts";
import { parseFoldArgs } from "../../src/tool/schema.ts";

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
