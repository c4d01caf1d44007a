// The fold store's public surface: content-addressed objects, fold records, verified reads.

export { FOLD_ID_HEX_DIGITS, isFoldId, isHexHash } from "../fold-types.ts";
export { FINAL_MODE, finalNameOfTemp, isTempName } from "./atomic.ts";
export { isStoreError, StoreError, type StoreErrorCode, type StoreErrorFields } from "./errors.ts";
export {
	type ExpectedFold,
	FoldStore,
	type SessionLocation,
	STORE_DIR_NAME,
	type VerifiedFold,
	type VerifiedLeaf,
} from "./fold-store.ts";
export {
	checkEntryId,
	checkFoldId,
	checkHash,
	checkSessionId,
	foldIdOf,
} from "./ids.ts";
export { type ContentKind, type ContentStats, ContentStore, type ReadContext, type ReadRequest } from "./objects.ts";
export {
	decodeRecord,
	encodeRecord,
	MAX_BRIEF_CHARS,
	RECORD_FORMAT,
	RECORD_VERSION,
	validateRecord,
} from "./records.ts";
