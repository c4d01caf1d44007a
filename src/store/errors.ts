// The one error type of the fold store. Every refusal carries a code a caller can branch on and
// names what it was about (fold, entry, hashes, file), so a tool result can quote it verbatim.
import { errorMessage } from "../values/error-message.ts";

export type StoreErrorCode =
	/** An id or hash from outside failed validation; nothing was touched. */
	| "BAD_ID"
	/** No file under the expected name. */
	| "MISSING"
	/** Fewer bytes than the record says the object has. */
	| "TRUNCATED"
	/** The bytes do not hash to their name (or a recomputed identity differs from the stated one). */
	| "MISMATCH"
	/** A fold record that is not a well-formed, supported `pi-fold.fold` record. */
	| "BAD_RECORD"
	/** The name exists but is not a regular file (a symlink, a directory, a FIFO, a device). */
	| "NOT_FILE"
	/** The filesystem refused an operation (permissions, disk full, ...). */
	| "IO";

export interface StoreErrorFields {
	/** The fold the read was on behalf of (the innermost one, for nested folds). */
	fold?: string;
	/** The session entry id, for a leaf object. */
	entry?: string;
	/** The hash (or identity) the name or record promised. */
	expected?: string;
	/** The hash (or identity) actually found. */
	actual?: string;
	/** Lengths, when a length check failed. */
	expectedBytes?: number;
	actualBytes?: number;
	/** The file involved, when there is one. */
	file?: string;
}

export class StoreError extends Error implements StoreErrorFields {
	override readonly name = "StoreError";
	readonly code: StoreErrorCode;
	readonly fold?: string;
	readonly entry?: string;
	readonly expected?: string;
	readonly actual?: string;
	readonly expectedBytes?: number;
	readonly actualBytes?: number;
	readonly file?: string;

	constructor(code: StoreErrorCode, message: string, fields: StoreErrorFields = {}, options?: { cause?: unknown }) {
		super(message, options);
		this.code = code;
		this.fold = fields.fold;
		this.entry = fields.entry;
		this.expected = fields.expected;
		this.actual = fields.actual;
		this.expectedBytes = fields.expectedBytes;
		this.actualBytes = fields.actualBytes;
		this.file = fields.file;
	}
}

export function isStoreError(err: unknown, code?: StoreErrorCode): err is StoreError {
	return err instanceof StoreError && (code === undefined || err.code === code);
}

/** Show an outside value in a message: quoted, control characters escaped, cut to ~80 characters. */
export function showValue(value: unknown, max = 80): string {
	if (typeof value === "string") {
		const cut = value.length > max ? `${value.slice(0, max)}…` : value;
		const suffix = value.length > max ? ` (${value.length} chars)` : "";
		return `${JSON.stringify(cut)}${suffix}`;
	}
	if (value === null) return "null";
	if (value === undefined) return "undefined";
	if (Array.isArray(value)) return `an array of ${value.length}`;
	if (value instanceof Uint8Array) return `${value.byteLength} bytes`;
	if (typeof value === "object") {
		const name = Object.getPrototypeOf(value)?.constructor?.name;
		return name && name !== "Object" ? `an object (${name})` : "an object";
	}
	const text = String(value);
	return `${typeof value} ${text.length > max ? `${text.slice(0, max)}…` : text}`;
}

/** The node:fs error code of an error, if it has one ("ENOENT", "EEXIST", ...). */
export function fsCode(err: unknown): string | undefined {
	const code = (err as { code?: unknown } | null)?.code;
	return typeof code === "string" ? code : undefined;
}

/** Wrap a node:fs failure as an IO StoreError naming the operation and the file. */
export function ioError(what: string, file: string, err: unknown, fields: StoreErrorFields = {}): StoreError {
	const reason = errorMessage(err);
	return new StoreError("IO", `${what} ${file}: ${reason}`, { ...fields, file }, { cause: err });
}
