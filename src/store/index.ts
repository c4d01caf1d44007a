// The fold store's public surface: content-addressed objects, fold records, verified reads.

export { FOLD_ID_HEX_DIGITS, isFoldId, isHexHash } from "../fold-types.ts";
export { FINAL_MODE, finalNameOfTemp, isTempName } from "./atomic.ts";
export type { ContentKind, ContentStats, Quarantined, ReadContext, ReadRequest } from "./content.ts";
export { isStoreError, StoreError, type StoreErrorCode, type StoreErrorFields } from "./errors.ts";
export {
	type ExpectedFold,
	FoldStore,
	type SessionLocation,
	STORE_DIR_NAME,
	type StoreLayout,
	type StoreOptions,
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
export { isQuarantineName } from "./loose.ts";
export { ContentStore } from "./objects.ts";
export { isPackQuarantineName } from "./pack-io.ts";
export type { PackSet } from "./packs.ts";
export {
	decodeRecord,
	encodeRecord,
	MAX_BRIEF_CHARS,
	RECORD_FORMAT,
	RECORD_VERSION,
	validateRecord,
} from "./records.ts";
export { StoreBatch } from "./store-batch.ts";
