// Evidence files: oversized tool results land as read-only files under the session's
// pi-fold-evidence/ directory, once, within a per-session cap; every failure is recorded, never thrown.
import { hash } from "node:crypto";
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { nodeCore } from "../bindings/node.ts";
import { removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import {
	DEFAULT_EVIDENCE_CAP_BYTES,
	EVIDENCE_DIR_NAME,
	EvidenceWriter,
	evidenceDirFor,
	toolResultText,
} from "../src/session/evidence.ts";

const core = nodeCore();
afterAll(removeTempDirs);

const sha = (text: string) => hash("sha256", text, "hex");

function writerIn(root: string, opts: { thresholdBytes?: number; capBytes?: number } = {}) {
	const dir = evidenceDirFor({ sessionFile: join(root, "2026_session.jsonl"), sessionId: "sess-1" });
	return new EvidenceWriter({ dir, core, ...opts });
}

describe("EvidenceWriter", () => {
	it("lives beside the session file, one directory per session, and only with a session file", () => {
		const root = tempDir("evidence");
		expect(evidenceDirFor({ sessionFile: join(root, "s.jsonl"), sessionId: "abc" })).toBe(
			join(root, EVIDENCE_DIR_NAME, "abc"),
		);
		expect(evidenceDirFor({ sessionId: "abc" })).toBeUndefined();
		const w = new EvidenceWriter({ dir: undefined, core, thresholdBytes: 1 });
		expect(w.write("c1", "read", "x".repeat(10))).toMatchObject({ kind: "disabled" });
		expect(w.status().disabled).toContain("no file");
	});

	it("writes only results over the threshold, read-only, named by SHA-256, tool and call id", () => {
		const w = writerIn(tempDir("evidence"), { thresholdBytes: 100 });
		expect(w.write("c1", "read", "x".repeat(99))).toEqual({ kind: "below-threshold", bytes: 99 });
		const text = `${"ü".repeat(60)} done`; // 125 UTF-8 bytes, under 100 characters: the threshold is bytes
		const out = w.write("call|1", "read", text);
		expect(out).toMatchObject({ kind: "written", bytes: Buffer.byteLength(text) });
		if (out.kind !== "written") return;
		expect(out.file).toBe(join(w.dir as string, `${sha(text)}-read-call_1.txt`));
		expect(readFileSync(out.file, "utf8")).toBe(text);
		expect(statSync(out.file).mode & 0o777).toBe(0o444);
		expect(readdirSync(w.dir as string)).toEqual([`${sha(text)}-read-call_1.txt`]); // no temp file left
		expect(w.status()).toMatchObject({
			files: 1,
			written: 1,
			usedBytes: Buffer.byteLength(text),
			capBytes: DEFAULT_EVIDENCE_CAP_BYTES,
		});
	});

	it("is idempotent: the same result again, in this writer or a new one, writes nothing", () => {
		const root = tempDir("evidence");
		const text = "y".repeat(500);
		const w = writerIn(root, { thresholdBytes: 100 });
		const first = w.write("c1", "bash", text);
		expect(first.kind).toBe("written");
		expect(w.write("c1", "bash", text)).toMatchObject({ kind: "exists" });
		const again = writerIn(root, { thresholdBytes: 100 }); // e.g. after a reload
		expect(again.status()).toMatchObject({ files: 1, usedBytes: 500, written: 0 });
		expect(again.write("c1", "bash", text)).toMatchObject({ kind: "exists" });
		expect(again.status()).toMatchObject({ files: 1, usedBytes: 500, written: 0 });
		expect(readdirSync(w.dir as string)).toHaveLength(1);
	});

	it("stops at the cap, counting what is already on disk, and says so in status", () => {
		const root = tempDir("evidence");
		const first = writerIn(root, { thresholdBytes: 10, capBytes: 1000 });
		expect(first.write("c1", "read", "a".repeat(600)).kind).toBe("written");
		const w = writerIn(root, { thresholdBytes: 10, capBytes: 1000 }); // a new writer counts the 600
		expect(w.write("c2", "read", "b".repeat(500))).toEqual({ kind: "over-cap", bytes: 500 });
		expect(w.write("c3", "read", "c".repeat(400)).kind).toBe("written"); // exactly at the cap
		expect(w.write("c4", "read", "d".repeat(10))).toEqual({ kind: "over-cap", bytes: 10 });
		expect(w.status()).toMatchObject({
			usedBytes: 1000,
			files: 2,
			written: 1,
			skippedOverCap: { count: 2, bytes: 510 },
		});
		expect(readdirSync(w.dir as string)).toHaveLength(2);
	});

	it("records errors instead of throwing: an unwritable directory", () => {
		const root = tempDir("evidence");
		writeFileSync(join(root, EVIDENCE_DIR_NAME), "a file where the directory should be"); // ENOTDIR, even as root
		const w = writerIn(root, { thresholdBytes: 10 });
		expect(w.status().disabled).toMatch(/cannot count existing evidence/);
		expect(w.write("c1", "read", "z".repeat(50))).toMatchObject({ kind: "disabled" });
		expect(w.status().problems.count).toBe(1);
	});

	it("records a failed write and keeps working", () => {
		const root = tempDir("evidence");
		const w = writerIn(root, { thresholdBytes: 10 });
		// The directory does not exist yet; make its parent a file after the writer started.
		mkdirSync(root, { recursive: true });
		writeFileSync(join(root, EVIDENCE_DIR_NAME), "blocker");
		const out = w.write("c1", "read", "z".repeat(50));
		expect(out).toMatchObject({ kind: "failed", reason: expect.stringContaining("read c1") });
		expect(w.status()).toMatchObject({ written: 0, usedBytes: 0, problems: { count: 1 } });
		expect(w.write("c2", "read", "short")).toMatchObject({ kind: "below-threshold" });
	});

	it("refuses a nonsensical threshold or cap by disabling itself with the reason", () => {
		const dir = join(tempDir("evidence"), EVIDENCE_DIR_NAME, "s");
		expect(new EvidenceWriter({ dir, core, thresholdBytes: 0 }).status().disabled).toContain("threshold");
		expect(new EvidenceWriter({ dir, core, capBytes: -1 }).status().disabled).toContain("cap");
	});

	it("takes a tool result's text blocks as the model saw them", () => {
		expect(
			toolResultText({
				content: [
					{ type: "text", text: "line 1" },
					{ type: "image", data: "...", mimeType: "image/png" },
					{ type: "text", text: "line 2" },
				],
			}),
		).toBe("line 1\nline 2");
		expect(toolResultText({ content: "plain" })).toBe("plain");
		expect(toolResultText({})).toBe("");
	});
});
