// Fold records on disk: msgpack, strictly validated both ways.
//
// Encoding is deterministic so equal records get equal bytes, hence equal hashes (a record is
// content-addressed like an object): the record is rebuilt with a fixed key order before packing,
// and msgpackr is set to plain, "preferred" msgpack: no records extension and no shared
// structures (any msgpack decoder can read it, e.g. in a browser or another language), minimal
// map headers (variableMapSize), doubles never narrowed to float32, no bundled strings. The bytes
// are never re-checked for canonical form on read: a later msgpackr could pick a different (still
// valid) header width, and old records must stay readable.
import { FLOAT32_OPTIONS, Packr, Unpackr } from "msgpackr";
import {
	BRIEF_MAX_CHARS,
	type BriefProvenance,
	type FoldKind,
	type FoldRecord,
	type RecordChild,
} from "../fold-types.ts";
import { errorMessage } from "../values/error-message.ts";
import { StoreError, showValue } from "./errors.ts";
import { checkEntryId, checkFoldId, checkHash, foldIdOf } from "./ids.ts";

export const RECORD_FORMAT = "pi-fold.fold";
export const RECORD_VERSION = 1;
/** A brief's length in UTF-16 units at most: BRIEF_MAX_CHARS code points take at most twice as many. */
export const MAX_BRIEF_CHARS = 2 * BRIEF_MAX_CHARS;

const KINDS: readonly FoldKind[] = ["tool-batch", "chapter", "consolidation", "peek"];
const PROVENANCES: readonly BriefProvenance[] = ["deterministic", "supplied"];
const RECORD_KEYS = ["format", "v", "id", "identity", "kind", "brief", "provenance", "children"];
const LEAF_KEYS = ["type", "entryId", "hash", "bytes"];
const FOLD_KEYS = ["type", "id", "identity", "record"];
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

const packr = new Packr({
	useRecords: false,
	variableMapSize: true,
	useFloat32: FLOAT32_OPTIONS.NEVER,
	bundleStrings: false,
	structuredClone: false,
	moreTypes: false,
	encodeUndefinedAsNil: false,
});
const unpackr = new Unpackr({ useRecords: false, mapsAsObjects: true, structuredClone: false });

function bad(where: string, problem: string): never {
	throw new StoreError("BAD_RECORD", `${where}: ${problem}`);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
	if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
	const proto = Object.getPrototypeOf(value);
	return proto === Object.prototype || proto === null;
}

/** Exactly these own keys: a record with extra or missing fields is not one we wrote. */
function checkKeys(where: string, what: string, value: Record<string, unknown>, keys: readonly string[]): void {
	const own = Object.keys(value);
	const extra = own.filter((k) => !keys.includes(k));
	const missing = keys.filter((k) => !Object.hasOwn(value, k));
	if (extra.length > 0) bad(where, `${what} has unknown field(s) ${extra.map((k) => showValue(k, 40)).join(", ")}`);
	if (missing.length > 0) bad(where, `${what} lacks field(s) ${missing.join(", ")}`);
}

function checkChild(where: string, value: unknown, i: number): RecordChild {
	const what = `children[${i}]`;
	if (!isPlainObject(value)) bad(where, `${what} must be an object, got ${showValue(value)}`);
	if (value.type === "leaf") {
		checkKeys(where, what, value, LEAF_KEYS);
		const entryId = checkEntryId(value.entryId, `${where}: ${what}.entryId`);
		const hash = checkHash(value.hash, `${where}: ${what}.hash`);
		const bytes = value.bytes;
		if (typeof bytes !== "number" || !Number.isSafeInteger(bytes) || bytes < 0) {
			bad(where, `${what}.bytes must be a whole number of bytes >= 0, got ${showValue(bytes)}`);
		}
		return { type: "leaf", entryId, hash, bytes };
	}
	if (value.type === "fold") {
		checkKeys(where, what, value, FOLD_KEYS);
		const id = checkFoldId(value.id, `${where}: ${what}.id`);
		const identity = checkHash(value.identity, `${where}: ${what}.identity`);
		const record = checkHash(value.record, `${where}: ${what}.record`);
		if (id !== foldIdOf(identity)) bad(where, `${what}.id ${id} does not match its identity ${identity}`);
		return { type: "fold", id, identity, record };
	}
	return bad(where, `${what}.type must be "leaf" or "fold", got ${showValue(value.type)}`);
}

/**
 * Check that `value` is a well-formed version-1 fold record and return it rebuilt in canonical
 * key order. Ids and hashes are refused with BAD_ID, everything else with BAD_RECORD.
 * `where` names the record in messages ("record 5e3a...", "fold record to store").
 */
export function validateRecord(value: unknown, where = "fold record"): FoldRecord {
	if (!isPlainObject(value)) bad(where, `expected a fold record object, got ${showValue(value)}`);
	if (value.format !== RECORD_FORMAT) {
		bad(where, `unknown format ${showValue(value.format)} (this pi-fold reads ${JSON.stringify(RECORD_FORMAT)})`);
	}
	if (value.v !== RECORD_VERSION) {
		const newer = typeof value.v === "number" && value.v > RECORD_VERSION;
		bad(
			where,
			newer
				? `version v=${value.v} is newer than this pi-fold reads (v=${RECORD_VERSION}); upgrade pi-fold`
				: `version must be ${RECORD_VERSION}, got ${showValue(value.v)}`,
		);
	}
	checkKeys(where, "the record", value, RECORD_KEYS);
	const id = checkFoldId(value.id, `${where}: id`);
	const identity = checkHash(value.identity, `${where}: identity`);
	if (id !== foldIdOf(identity))
		bad(where, `id ${id} does not match identity ${identity} (expected ${foldIdOf(identity)})`);
	const kind = value.kind as FoldKind;
	if (!KINDS.includes(kind)) bad(where, `kind must be one of ${KINDS.join(", ")}, got ${showValue(value.kind)}`);
	const provenance = value.provenance as BriefProvenance;
	if (!PROVENANCES.includes(provenance)) {
		bad(where, `provenance must be one of ${PROVENANCES.join(", ")}, got ${showValue(value.provenance)}`);
	}
	const brief = value.brief;
	if (typeof brief !== "string") bad(where, `brief must be a string, got ${showValue(brief)}`);
	if (brief.length > MAX_BRIEF_CHARS) bad(where, `brief has ${brief.length} characters, at most ${MAX_BRIEF_CHARS}`);
	if (LONE_SURROGATE.test(brief)) bad(where, "brief is not well-formed Unicode (lone surrogate)");
	const children = value.children;
	if (!Array.isArray(children)) bad(where, `children must be an array, got ${showValue(children)}`);
	if (children.length === 0) bad(where, "children is empty: a fold has at least one child");
	return {
		format: RECORD_FORMAT,
		v: RECORD_VERSION,
		id,
		identity,
		kind,
		brief,
		provenance,
		children: children.map((c, i) => checkChild(where, c, i)),
	};
}

/** The deterministic msgpack bytes of a (validated) record. */
export function encodeRecord(record: FoldRecord, where = "fold record"): Uint8Array {
	const canonical = validateRecord(record, where);
	// Copy: msgpackr returns a view into a buffer it reuses for later packs.
	return new Uint8Array(packr.pack(canonical));
}

/** Decode and strictly validate record bytes. `where` names the record in messages. */
export function decodeRecord(bytes: Uint8Array, where = "fold record"): FoldRecord {
	let value: unknown;
	try {
		value = unpackr.unpack(bytes);
	} catch (err) {
		bad(where, `not a msgpack value (${errorMessage(err)})`);
	}
	return validateRecord(value, where);
}
