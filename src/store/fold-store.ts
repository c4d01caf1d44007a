// The fold store of one session: leaf objects and fold records, both content-addressed, under
//   <directory of the session file>/pi-fold/<session id>/
// in pack files (packs/<64 hex>.pack: one per write batch, pack-format.ts) and, for stores written
// before packs, loose files ({objects,records}/<2 hex>/<64 hex>); both are read alike. A fold can
// be verified from the store alone: its record names every child by hash, and its identity is
// recomputed from the verified leaves up.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { DIGEST_BYTES, fromHexInto, type PiFoldCore, type Span, toHex } from "../../bindings/index.ts";
import type { FoldId, FoldRecord, HexHash, RecordChild } from "../fold-types.ts";
import { contextPrefix, type Quarantined, type ReadContext, type ReadRequest } from "./content.ts";
import { StoreError } from "./errors.ts";
import { checkLeafSizes, countLeaves, type FoldNode } from "./fold-walk.ts";
import { checkFoldId, checkHash, checkSessionId } from "./ids.ts";
import { ContentStore } from "./objects.ts";
import { PackSet } from "./packs.ts";
import { decodeRecord, encodeRecord, validateRecord } from "./records.ts";
import { StoreBatch } from "./store-batch.ts";

/** The directory name beside the session file. */
export const STORE_DIR_NAME = "pi-fold";

/** Where a session lives, as Pi's SessionManager reports it. */
export interface SessionLocation {
	/** The session's .jsonl file; absent for `--no-session` (in-memory) sessions. */
	sessionFile?: string;
	/**
	 * Pi's session directory. Informational: the store goes next to the session file, which is in
	 * this directory for every session Pi creates; `SessionManager.open(path, dir)` can differ.
	 */
	sessionDir?: string;
	sessionId: string;
}

/** A leaf of a verified fold: the exact original bytes of one session entry. */
export interface VerifiedLeaf {
	entryId: string;
	hash: HexHash;
	bytes: Uint8Array;
	/** The innermost fold whose record lists this leaf. */
	fold: FoldId;
}

export interface VerifiedFold {
	record: FoldRecord;
	recordHash: HexHash;
	/** Every leaf under the fold, nested folds flattened, in transcript order. */
	leaves: VerifiedLeaf[];
}

/** What the caller (the session) says a record should be; checked by verifyFold. */
export interface ExpectedFold {
	id?: FoldId;
	identity?: HexHash;
}

/** Bounds on one verification walk: refused past them, with the reason. */
interface VerifyLimits {
	/** Nesting depth of fold records. */
	maxDepth: number;
	/** Leaves the fold expands to, counting a repeated child each time. */
	maxLeaves: number;
}

/**
 * Far above what a session makes (one leaf per entry; folds nest by consolidation), far below what
 * would exhaust memory: a crafted record naming one child many times, nested, is refused here.
 */
const VERIFY_LIMITS: VerifyLimits = { maxDepth: 1024, maxLeaves: 1_000_000 };

/**
 * Where new writes go: "packs" (one pack file per write batch; the default) or "loose" (one file per
 * object, the layout of stores written before packs). Both are always read.
 */
export type StoreLayout = "packs" | "loose";

export interface StoreOptions {
	layout?: StoreLayout;
}

/** What a batch holds so far, for the checks of the records staged after it. */
export interface StagedLookup {
	/** The length of a leaf object staged in the batch (its bytes hash to `hash`). */
	leafLength(hash: HexHash): number | undefined;
	/** A record staged in the batch, decoded. */
	record(hash: HexHash): FoldRecord | undefined;
}

let processTempDir: string | undefined;

/** One temporary directory per process for sessions without a file. Never removed (nothing is). */
function processTemp(): string {
	processTempDir ??= mkdtempSync(join(tmpdir(), "pi-fold-"));
	return processTempDir;
}

export class FoldStore {
	readonly root: string;
	readonly layout: StoreLayout;
	/** The pack files (undefined for a store writing the loose layout, which then reads no packs either). */
	readonly packs: PackSet | undefined;
	readonly objects: ContentStore;
	readonly records: ContentStore;
	readonly #core: PiFoldCore;

	/** A store at `root` (created lazily, on the first write). */
	constructor(root: string, core: PiFoldCore, opts: StoreOptions = {}) {
		this.root = resolve(root);
		this.layout = opts.layout ?? "packs";
		this.packs = this.layout === "packs" ? new PackSet(join(this.root, "packs"), core) : undefined;
		this.objects = new ContentStore(join(this.root, "objects"), "object", core, this.packs);
		this.records = new ContentStore(join(this.root, "records"), "record", core, this.packs);
		this.#core = core;
	}

	/** The store of a Pi session: next to its file, or in the process's temp dir if it has none. */
	static forSession(location: SessionLocation, core: PiFoldCore, opts: StoreOptions = {}): FoldStore {
		const id = checkSessionId(location.sessionId);
		if (location.sessionFile === undefined || location.sessionFile === "") return FoldStore.temporary(core, id, opts);
		return new FoldStore(join(dirname(resolve(location.sessionFile)), STORE_DIR_NAME, id), core, opts);
	}

	/** A store in a temporary directory created once per process (for `--no-session`). */
	static temporary(core: PiFoldCore, sessionId = "no-session", opts: StoreOptions = {}): FoldStore {
		return new FoldStore(join(processTemp(), STORE_DIR_NAME, checkSessionId(sessionId)), core, opts);
	}

	/** Be told of every damaged file this store sets aside (objects, records and packs alike). */
	onQuarantine(report: (q: Quarantined) => void): void {
		this.objects.onQuarantine = report;
		this.records.onQuarantine = report;
		if (this.packs) this.packs.onQuarantine = report;
	}

	/**
	 * A write batch: leaves and records staged together (each record checked against the store and
	 * what the batch holds), then written at once, as one pack, durable when commit returns.
	 */
	batch(): StoreBatch {
		return new StoreBatch(this);
	}

	/** Store the exact bytes of session entries (strings as UTF-8); returns their hashes, in order. */
	putLeaves(spans: readonly Span[]): HexHash[] {
		return this.objects.putMany(spans);
	}

	/** putLeaves with the fsyncs run concurrently off the main thread; durable when it resolves. */
	putLeavesAsync(spans: readonly Span[]): Promise<HexHash[]> {
		return this.objects.putManyAsync(spans);
	}

	/**
	 * Store a fold record; returns its hash. Refused (and nothing written) unless the record is
	 * well formed, its identity is the hash of its children's hashes, every leaf object is present
	 * and verifies with the stated length, and every child fold's record is present and is that fold.
	 */
	putRecord(record: FoldRecord): HexHash {
		return this.putRecords([record])[0];
	}

	/** putRecord for several records, published together; each is checked (in order) before any is written. */
	putRecords(records: readonly FoldRecord[]): HexHash[] {
		return this.records.putMany(records.map((r) => this.#checkedRecord(r)));
	}

	/** putRecords with the fsyncs run concurrently off the main thread; durable when it resolves. */
	putRecordsAsync(records: readonly FoldRecord[]): Promise<HexHash[]> {
		return this.records.putManyAsync(records.map((r) => this.#checkedRecord(r)));
	}

	/** The hash a record would be stored under (validated and encoded as putRecord does; nothing written). */
	recordHash(record: FoldRecord): HexHash {
		return this.records.hashAll([encodeRecord(validateRecord(record, "fold record"), "fold record")])[0];
	}

	/** The checks of putRecord; returns the record's canonical bytes. */
	#checkedRecord(record: FoldRecord): Uint8Array {
		return this.checkRecord(record);
	}

	/**
	 * The checks of putRecord, with leaves and child records staged in a batch counting as stored
	 * (their bytes are in hand, hashed): returns the record's canonical bytes, or throws.
	 */
	checkRecord(record: FoldRecord, staged?: StagedLookup): Uint8Array {
		const where = "fold record to store";
		const canonical = validateRecord(record, where);
		const trail = [canonical.id];
		const stated = this.#identityOf(canonical.children.map((c) => (c.type === "leaf" ? c.hash : c.identity)));
		if (stated !== canonical.identity) {
			throw new StoreError(
				"MISMATCH",
				`${where} ${canonical.id}: identity ${canonical.identity} does not match its children, which hash to ${stated}`,
				{ fold: canonical.id, expected: canonical.identity, actual: stated },
			);
		}
		const leafReads: ReadRequest[] = [];
		for (const child of canonical.children) {
			if (child.type === "fold") {
				const inBatch = staged?.record(child.record);
				if (inBatch) this.#checkStated([...trail, child.id], child.record, inBatch, child);
				else this.#loadChild(trail, child);
				continue;
			}
			const known = staged?.leafLength(child.hash);
			if (known === undefined) leafReads.push({ hash: child.hash, ctx: this.#leafContext(trail, child) });
			else if (known !== child.bytes) {
				throw new StoreError(
					"BAD_RECORD",
					`${contextPrefix(this.#leafContext(trail, child))}object ${child.hash} verifies but the record says ${child.bytes} bytes and it has ${known}`,
					{
						fold: canonical.id,
						entry: child.entryId,
						expected: child.hash,
						expectedBytes: child.bytes,
						actualBytes: known,
					},
				);
			}
		}
		this.objects.readMany(leafReads);
		return encodeRecord(canonical, where);
	}

	/** Read and strictly decode one record (verified against its hash). */
	readRecord(hash: HexHash, ctx?: ReadContext): FoldRecord {
		checkHash(hash, "record hash");
		const bytes = this.records.read(hash, ctx);
		return decodeRecord(bytes, `${contextPrefix(ctx)}record ${hash}`);
	}

	/**
	 * Verify a fold from the store alone and return its leaves for expansion. Each distinct record
	 * under it is read and checked once (a record may name the same child many times: verification
	 * must not grow with the number of paths to it), each distinct leaf object is read once, all
	 * are hashed in batches, then each record's identity is recomputed bottom-up from the verified
	 * hashes. The walk is bounded (nesting depth, total leaves) and refuses past the bounds.
	 */
	verifyFold(recordHash: HexHash, expect: ExpectedFold = {}, limits: VerifyLimits = VERIFY_LIMITS): VerifiedFold {
		checkHash(recordHash, "record hash");
		if (expect.id !== undefined) checkFoldId(expect.id, "expected fold id");
		if (expect.identity !== undefined) checkHash(expect.identity, "expected fold identity");
		const ctx = expect.id === undefined ? undefined : { fold: expect.id, trail: [expect.id] };
		const record = this.readRecord(recordHash, ctx);
		this.#checkStated(ctx?.trail ?? [], recordHash, record, expect);

		// Pass 1: every distinct record, depth first with an explicit stack (no nesting depth can
		// overflow the call stack); a child's stated id and identity are checked before descending.
		const root: FoldNode = { record, trail: [record.id], refs: [], leafCount: 0 };
		const nodes = new Map<HexHash, FoldNode>([[recordHash, root]]);
		const leafIndex = new Map<HexHash, number>();
		const reads: ReadRequest[] = [];
		const postOrder: FoldNode[] = [];
		const stack: { node: FoldNode; next: number }[] = [{ node: root, next: 0 }];
		while (stack.length > 0) {
			const top = stack[stack.length - 1];
			const { children } = top.node.record;
			if (top.next === children.length) {
				postOrder.push(top.node);
				stack.pop();
				continue;
			}
			const child = children[top.next++];
			if (child.type === "leaf") {
				let at = leafIndex.get(child.hash);
				if (at === undefined) {
					at = reads.length;
					leafIndex.set(child.hash, at);
					reads.push({ hash: child.hash, ctx: this.#leafContext(top.node.trail, child) });
				}
				top.node.refs.push({ leaf: at, entryId: child.entryId, bytes: child.bytes });
				continue;
			}
			const known = nodes.get(child.record);
			if (known) {
				this.#checkStated([...top.node.trail, child.id], child.record, known.record, child);
				top.node.refs.push(known);
				continue;
			}
			const trail = [...top.node.trail, child.id];
			if (trail.length > limits.maxDepth) {
				throw new StoreError(
					"BAD_RECORD",
					`fold ${trail.slice(0, 3).join(" > ")} > …: folds nest more than ${limits.maxDepth} deep; not verified`,
					{ fold: record.id },
				);
			}
			const node: FoldNode = { record: this.#loadChild(top.node.trail, child), trail, refs: [], leafCount: 0 };
			nodes.set(child.record, node);
			top.node.refs.push(node);
			stack.push({ node, next: 0 });
		}
		countLeaves(postOrder, limits.maxLeaves);

		// Pass 2: every distinct leaf object read once, hashed in batches, checked against name and length.
		const bytes = this.objects.readMany(reads);
		checkLeafSizes(postOrder, reads, bytes);

		// Pass 3: identities from the verified leaf hashes up, each distinct record once.
		for (const node of postOrder) {
			node.computed = this.#identityOf(node.refs.map((ref) => ("leaf" in ref ? reads[ref.leaf].hash : ref.computed!)));
			if (node.computed !== node.record.identity) {
				throw new StoreError(
					"MISMATCH",
					`fold ${node.trail.join(" > ")}: identity does not verify: the record states ${node.record.identity}, its children hash to ${node.computed}`,
					{ fold: node.record.id, expected: node.record.identity, actual: node.computed },
				);
			}
		}

		// Every leaf in transcript order (bounded above), nested folds flattened.
		const leaves: VerifiedLeaf[] = [];
		const flatten: { node: FoldNode; next: number }[] = [{ node: root, next: 0 }];
		while (flatten.length > 0) {
			const top = flatten[flatten.length - 1];
			if (top.next === top.node.refs.length) {
				flatten.pop();
				continue;
			}
			const ref = top.node.refs[top.next++];
			if ("leaf" in ref) {
				const hash = reads[ref.leaf].hash;
				leaves.push({ entryId: ref.entryId, hash, bytes: bytes[ref.leaf], fold: top.node.record.id });
			} else flatten.push({ node: ref, next: 0 });
		}
		return { record, recordHash, leaves };
	}

	#leafContext(trail: readonly FoldId[], leaf: Extract<RecordChild, { type: "leaf" }>): ReadContext {
		return { fold: trail[trail.length - 1], trail, entry: leaf.entryId, bytes: leaf.bytes };
	}

	/** Read a child fold's record and check it is the fold its parent names. */
	#loadChild(parentTrail: readonly FoldId[], child: Extract<RecordChild, { type: "fold" }>): FoldRecord {
		const trail = [...parentTrail, child.id];
		const record = this.readRecord(child.record, { fold: child.id, trail });
		this.#checkStated(trail, child.record, record, child);
		return record;
	}

	/** The record found under `hash` must be the fold the referrer (parent or session) names. */
	#checkStated(trail: readonly FoldId[], hash: HexHash, record: FoldRecord, stated: ExpectedFold): void {
		const prefix = trail.length > 0 ? `fold ${trail.join(" > ")}: ` : "";
		if (stated.identity !== undefined && stated.identity !== record.identity) {
			throw new StoreError(
				"MISMATCH",
				`${prefix}record ${hash} is fold ${record.id} with identity ${record.identity}, expected identity ${stated.identity}`,
				{ fold: trail[trail.length - 1] ?? record.id, expected: stated.identity, actual: record.identity },
			);
		}
		if (stated.id !== undefined && stated.id !== record.id) {
			throw new StoreError("MISMATCH", `${prefix}record ${hash} is fold ${record.id}, expected ${stated.id}`, {
				fold: stated.id,
				expected: stated.id,
				actual: record.id,
			});
		}
	}

	/** SHA-256 over the ordered child hashes (core.foldIdentity), hex. */
	#identityOf(hashes: readonly HexHash[]): HexHash {
		const packed = new Uint8Array(hashes.length * DIGEST_BYTES);
		hashes.forEach((h, i) => {
			fromHexInto(h, packed, i * DIGEST_BYTES);
		});
		return toHex(this.#core.foldIdentity(packed));
	}
}
