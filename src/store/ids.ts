// Validation of every id and hash that comes from outside (tool arguments, session entries, record
// contents) before it can reach a path or a message. Each check returns the value, typed, or
// throws a BAD_ID StoreError naming the field and the (truncated) value.
import { type FoldId, type HexHash, foldIdOf as idOf, isFoldId, isHexHash } from "../fold-types.ts";
import { StoreError, showValue } from "./errors.ts";

// Pi's own rule for session ids (`assertValidSessionId`: alphanumerics, ".", "_", "-", starting and
// ending with an alphanumeric) widened to allow "_" and "-" at the ends, capped at 128 characters.
// A leading or trailing "." is refused, so "." and ".." (and hidden names) can never appear.
const SESSION_ID = /^(?![.])[A-Za-z0-9._-]{1,128}(?<![.])$/;
// Pi entry ids are 8 hex digits (or a full uuid on collision); they never become paths, but they
// appear in messages, so they get the same conservative alphabet.
const ENTRY_ID = /^[A-Za-z0-9._-]{1,128}$/;

function refuse(field: string, value: unknown, rule: string): never {
	throw new StoreError("BAD_ID", `${field} must be ${rule}, got ${showValue(value)}`);
}

export function checkHash(value: unknown, field = "hash"): HexHash {
	if (!isHexHash(value)) refuse(field, value, "a SHA-256 as exactly 64 lower-case hex digits");
	return value;
}

export function checkFoldId(value: unknown, field = "fold id"): FoldId {
	if (!isFoldId(value)) refuse(field, value, '"f" followed by 10 lower-case hex digits');
	return value;
}

export function checkSessionId(value: unknown, field = "session id"): string {
	if (typeof value !== "string" || !SESSION_ID.test(value)) {
		refuse(field, value, '1 to 128 characters of A-Z a-z 0-9 "." "_" "-", not starting or ending with "."');
	}
	return value;
}

export function checkEntryId(value: unknown, field = "entry id"): string {
	if (typeof value !== "string" || !ENTRY_ID.test(value)) {
		refuse(field, value, '1 to 128 characters of A-Z a-z 0-9 "." "_" "-"');
	}
	return value;
}

/** The fold id of an identity: "f" + its first 10 hex digits. */
export function foldIdOf(identity: HexHash): FoldId {
	return idOf(checkHash(identity, "identity"));
}
