// Reading a session file stays linear in its size, whatever it holds: each byte is looked at once
// for line ends and decoded at most once (newline-free junk used to be split again at every chunk,
// quadratic), junk that cannot be JSON is not kept, and what a bad line echoes is made printable.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { removeTempDirs, tempDir } from "../harness/pi-harness.ts";
import { type ReadWork, readSessionFile, skippedWarning } from "../src/replay/session-lines.ts";

afterAll(removeTempDirs);

const HEADER = `${JSON.stringify({ type: "session", version: 3, id: "s-1", timestamp: "t", cwd: "/tmp" })}\n`;
const USER = `${JSON.stringify({ type: "message", id: "e1", parentId: null, timestamp: "t", message: { role: "user", content: "hi" } })}\n`;
const MB = 1024 * 1024;

function file(name: string, text: string | Buffer): string {
	const path = join(tempDir("session-reading"), name);
	writeFileSync(path, text);
	return path;
}

const work = (): ReadWork => ({ scanned: 0, decoded: 0 });
// biome-ignore lint/suspicious/noControlCharactersInRegex: what must not reach a terminal
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe("reading a session file", () => {
	it("a line of 24 MB without a newline after the header: every byte looked at once, decoded once", () => {
		const size = 24 * MB;
		const path = file("brace-junk.jsonl", Buffer.concat([Buffer.from(HEADER), Buffer.alloc(size, "{")]));
		const w = work();
		const checked = readSessionFile(path, w);
		expect(checked.skippedCount).toBe(1);
		expect(w.scanned).toBe(HEADER.length + size);
		expect(w.decoded).toBeLessThanOrEqual(HEADER.length + size);
	});

	it("24 MB of junk that cannot be JSON, after the header: looked at once, only its first bytes kept", () => {
		const size = 24 * MB;
		const path = file(
			"junk.jsonl",
			Buffer.concat([Buffer.from(HEADER), Buffer.alloc(size, "x"), Buffer.from(`\n${USER}`)]),
		);
		const w = work();
		const checked = readSessionFile(path, w);
		expect(checked.entries).toHaveLength(2);
		expect(checked.skipped).toEqual([`line 2: not valid JSON (it starts "${"x".repeat(64)}")`]);
		expect(w.scanned).toBe(HEADER.length + size + 1 + USER.length);
		expect(w.decoded).toBeLessThan(HEADER.length + USER.length + 100);
	});

	it("a file that is junk from its first byte is refused after its first chunk, not read to the end", () => {
		const path = file("all-junk.jsonl", Buffer.alloc(24 * MB, "x"));
		const w = work();
		expect(() => readSessionFile(path, w)).toThrow(
			/not a valid Pi session:\n {2}line 1: not valid JSON \(it starts "x+"\)$/,
		);
		expect(w.scanned).toBeLessThanOrEqual(MB);
	});

	it("control bytes a bad line holds are shown escaped, never sent to the terminal as they are", () => {
		// V8's message quotes the line: the escapes in it would reach the terminal.
		const bad = '{"type":x\u001b]0;pwned\u0007\u001b[2J}';
		const path = file("control.jsonl", `${HEADER}${USER}${bad}\n\u001b[31m red\n`);
		const warning = skippedWarning(readSessionFile(path)) ?? "";
		expect(warning).toContain("line 3: not valid JSON");
		expect(warning).toContain("\\u001b");
		expect(warning).not.toMatch(CONTROL);
		const header = file("control-header.jsonl", `{"type":x\u001b[2J}\n`);
		expect(() => readSessionFile(header)).toThrow(/\\u001b/);
		try {
			readSessionFile(header);
		} catch (err) {
			expect((err as Error).message).not.toMatch(CONTROL);
		}
	});

	it("one skipped line is one line that is not an entry; two are lines", () => {
		const one = skippedWarning(readSessionFile(file("one.jsonl", `${HEADER}${USER}nope\n`)));
		expect(one).toContain("skipped 1 line that is not a session entry (as Pi does)");
		const two = skippedWarning(readSessionFile(file("two.jsonl", `${HEADER}nope\n${USER}nope\n`)));
		expect(two).toContain("skipped 2 lines that are not session entries (as Pi does)");
	});
});
