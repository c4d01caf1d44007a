// Evidence ingestion: a tool result over a size threshold is also written, as it was
// produced, to a read-only (0444) file under the session's `pi-fold-evidence/` directory: an
// exact-recovery anchor the agent can read with ordinary tools even after its result is folded.
// Capped per session; past the cap a result is skipped and counted. Nothing here may fail a tool
// call: every error becomes a recorded problem that `status` shows.
//
// Layout: <directory of the session file>/pi-fold-evidence/<session id>/<sha256>-<tool>-<call id>.txt
// One directory per session (like the fold store) so the cap, counted from the files already
// there when the writer starts, is this session's and no other's.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { type PiFoldCore, toHex } from "../../bindings/index.ts";
import { isTempName, publishOnce } from "../store/atomic.ts";
import { errorMessage } from "../vocabulary.ts";

export const EVIDENCE_DIR_NAME = "pi-fold-evidence";
export const DEFAULT_EVIDENCE_CAP_BYTES = 512 * 1024 * 1024;
/** Results of at least this many UTF-8 bytes become evidence files (twice the default minFoldChars). */
const DEFAULT_EVIDENCE_THRESHOLD_BYTES = 16 * 1024;
/** Problems kept for status (the newest); older ones are only counted. */
const MAX_KEPT_PROBLEMS = 20;

/** The evidence directory of a session, or undefined for a session without a file (nothing to anchor to). */
export function evidenceDirFor(location: { sessionFile?: string; sessionId: string }): string | undefined {
	if (!location.sessionFile) return undefined;
	const id = location.sessionId.replace(/[^A-Za-z0-9._-]/g, "_");
	return join(dirname(resolve(location.sessionFile)), EVIDENCE_DIR_NAME, id);
}

/** The text of a tool result as the model saw it: its text blocks, joined by newlines. */
export function toolResultText(result: { content?: unknown }): string {
	const { content } = result;
	if (typeof content === "string") return content;
	if (!Array.isArray(content)) return "";
	const texts: string[] = [];
	for (const block of content) {
		if (block && block.type === "text" && typeof block.text === "string") texts.push(block.text);
	}
	return texts.join("\n");
}

/** A name part from outside (tool name, call id), reduced to safe file-name characters. */
function namePart(value: string): string {
	const safe = value.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 64);
	return safe.length > 0 ? safe : "unnamed";
}

type EvidenceOutcome =
	| { kind: "below-threshold"; bytes: number }
	| { kind: "written"; file: string; bytes: number }
	| { kind: "exists"; file: string; bytes: number }
	| { kind: "over-cap"; bytes: number }
	| { kind: "disabled"; reason: string }
	| { kind: "failed"; reason: string };

export interface EvidenceStatus {
	dir: string | undefined;
	/** Why nothing is written, when that is so. */
	disabled?: string;
	thresholdBytes: number;
	capBytes: number;
	/** Bytes of evidence on disk for this session (found at start plus written since). */
	usedBytes: number;
	/** Files found at start plus written since. */
	files: number;
	written: number;
	skippedOverCap: { count: number; bytes: number };
	problems: { count: number; recent: string[] };
}

interface EvidenceOptions {
	/** The session's evidence directory (evidenceDirFor); undefined disables the writer. */
	dir: string | undefined;
	core: PiFoldCore;
	thresholdBytes?: number;
	capBytes?: number;
}

export class EvidenceWriter {
	readonly dir: string | undefined;
	readonly thresholdBytes: number;
	readonly capBytes: number;
	readonly #core: PiFoldCore;
	#disabled: string | undefined;
	#usedBytes = 0;
	#files = 0;
	#written = 0;
	#skipped = { count: 0, bytes: 0 };
	#problems = { count: 0, recent: [] as string[] };
	/** Names this writer already holds on disk: a repeated result costs no I/O. */
	readonly #known = new Set<string>();

	/** Counts the evidence already on disk for this session; never throws. */
	constructor(options: EvidenceOptions) {
		this.dir = options.dir;
		this.#core = options.core;
		this.thresholdBytes = options.thresholdBytes ?? DEFAULT_EVIDENCE_THRESHOLD_BYTES;
		this.capBytes = options.capBytes ?? DEFAULT_EVIDENCE_CAP_BYTES;
		if (!Number.isSafeInteger(this.thresholdBytes) || this.thresholdBytes < 1) {
			this.#disabled = `evidence threshold must be a positive integer, got ${String(options.thresholdBytes)}`;
		} else if (!Number.isSafeInteger(this.capBytes) || this.capBytes < 0) {
			this.#disabled = `evidence cap must be a non-negative integer, got ${String(options.capBytes)}`;
		} else if (this.dir === undefined) {
			this.#disabled = "the session has no file, so there is no session directory to anchor evidence in";
		} else {
			this.#countExisting(this.dir);
		}
	}

	#countExisting(dir: string): void {
		let names: string[];
		try {
			names = readdirSync(dir);
		} catch (err) {
			if ((err as NodeJS.ErrnoException).code === "ENOENT") return; // nothing written yet
			// Without the count the cap cannot be kept: write nothing rather than overshoot it.
			this.#disabled = `cannot count existing evidence in ${dir}: ${(err as Error).message}`;
			this.#problem(this.#disabled);
			return;
		}
		for (const name of names) {
			if (isTempName(name)) continue; // an interrupted write, not evidence
			try {
				const st = statSync(join(dir, name));
				if (!st.isFile()) continue;
				this.#usedBytes += st.size;
				this.#files++;
				this.#known.add(name);
			} catch (err) {
				this.#problem(`cannot stat existing evidence ${name}: ${(err as Error).message}`);
			}
		}
	}

	#problem(reason: string): void {
		this.#problems.count++;
		this.#problems.recent.push(reason);
		if (this.#problems.recent.length > MAX_KEPT_PROBLEMS) this.#problems.recent.shift();
	}

	/** Write one tool result's text (or bytes) as evidence if it is over the threshold. Never throws. */
	write(toolCallId: string, toolName: string, content: string | Uint8Array): EvidenceOutcome {
		try {
			return this.#write(toolCallId, toolName, content);
		} catch (err) {
			const reason = `evidence for ${toolName} ${toolCallId}: ${errorMessage(err)}`;
			this.#problem(reason);
			return { kind: "failed", reason };
		}
	}

	#write(toolCallId: string, toolName: string, content: string | Uint8Array): EvidenceOutcome {
		// Most results are small: measured, not copied, at every turn boundary.
		const size = typeof content === "string" ? Buffer.byteLength(content, "utf8") : content.byteLength;
		if (size < this.thresholdBytes) return { kind: "below-threshold", bytes: size };
		const bytes = typeof content === "string" ? Buffer.from(content, "utf8") : content;
		if (this.#disabled !== undefined || this.dir === undefined) {
			return { kind: "disabled", reason: this.#disabled ?? "no evidence directory" };
		}
		const name = `${toHex(this.#core.sha256(bytes))}-${namePart(String(toolName))}-${namePart(String(toolCallId))}.txt`;
		const file = join(this.dir, name);
		if (this.#known.has(name)) return { kind: "exists", file, bytes: bytes.byteLength };
		if (this.#usedBytes + bytes.byteLength > this.capBytes) {
			this.#skipped.count++;
			this.#skipped.bytes += bytes.byteLength;
			return { kind: "over-cap", bytes: bytes.byteLength };
		}
		const outcome = publishOnce(this.dir, name, bytes);
		if (outcome === "exists") {
			// Written by another writer of this session since we counted: it must hold these bytes.
			const found = readFileSync(file);
			if (!Buffer.from(bytes).equals(found)) {
				const reason = `evidence file ${file} exists with other bytes (${found.byteLength} vs ${bytes.byteLength})`;
				this.#problem(reason);
				return { kind: "failed", reason };
			}
			this.#known.add(name);
			this.#usedBytes += found.byteLength;
			this.#files++;
			return { kind: "exists", file, bytes: bytes.byteLength };
		}
		this.#known.add(name);
		this.#usedBytes += bytes.byteLength;
		this.#files++;
		this.#written++;
		return { kind: "written", file, bytes: bytes.byteLength };
	}

	status(): EvidenceStatus {
		return {
			dir: this.dir,
			...(this.#disabled !== undefined ? { disabled: this.#disabled } : {}),
			thresholdBytes: this.thresholdBytes,
			capBytes: this.capBytes,
			usedBytes: this.#usedBytes,
			files: this.#files,
			written: this.#written,
			skippedOverCap: { ...this.#skipped },
			problems: { count: this.#problems.count, recent: [...this.#problems.recent] },
		};
	}
}
