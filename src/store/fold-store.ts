// The fold store of one session: leaf objects and fold records, both content-addressed, under
//   <directory of the session file>/pi-fold/<session id>/{objects,records}/<2 hex>/<64 hex>
// A fold can be verified from the store alone: its record names every child by hash, and its
// identity is recomputed from the verified leaves up.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { DIGEST_BYTES, fromHexInto, type PiFoldCore, type Span, toHex } from "../../bindings/index.ts";
import type { FoldId, FoldRecord, HexHash, RecordChild } from "../fold-types.ts";
import { StoreError } from "./errors.ts";
import { checkFoldId, checkHash, checkSessionId } from "./ids.ts";
import { ContentStore, contextPrefix, type ReadContext, type ReadRequest } from "./objects.ts";
import { decodeRecord, encodeRecord, validateRecord } from "./records.ts";

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

interface FoldNode {
	record: FoldRecord;
	trail: FoldId[];
	/** Per child: the index of a leaf, or the nested node. */
	refs: (number | FoldNode)[];
	computed?: HexHash;
}

let processTempDir: string | undefined;

/** One temporary directory per process for sessions without a file. Never removed (nothing is). */
function processTemp(): string {
	processTempDir ??= mkdtempSync(join(tmpdir(), "pi-fold-"));
	return processTempDir;
}

export class FoldStore {
	readonly root: string;
	readonly objects: ContentStore;
	readonly records: ContentStore;
	readonly #core: PiFoldCore;

	/** A store at `root` (created lazily, on the first write). */
	constructor(root: string, core: PiFoldCore) {
		this.root = resolve(root);
		this.objects = new ContentStore(join(this.root, "objects"), "object", core);
		this.records = new ContentStore(join(this.root, "records"), "record", core);
		this.#core = core;
	}

	/** The store of a Pi session: next to its file, or in the process's temp dir if it has none. */
	static forSession(location: SessionLocation, core: PiFoldCore): FoldStore {
		const id = checkSessionId(location.sessionId);
		if (location.sessionFile === undefined || location.sessionFile === "") return FoldStore.temporary(core, id);
		return new FoldStore(join(dirname(resolve(location.sessionFile)), STORE_DIR_NAME, id), core);
	}

	/** A store in a temporary directory created once per process (for `--no-session`). */
	static temporary(core: PiFoldCore, sessionId = "no-session"): FoldStore {
		return new FoldStore(join(processTemp(), STORE_DIR_NAME, checkSessionId(sessionId)), core);
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

	/** putRecord, asynchronously (see putRecordsAsync). */
	async putRecordAsync(record: FoldRecord): Promise<HexHash> {
		return (await this.putRecordsAsync([record]))[0];
	}

	/** The checks of putRecord; returns the record's canonical bytes. */
	#checkedRecord(record: FoldRecord): Uint8Array {
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
			if (child.type === "leaf") leafReads.push({ hash: child.hash, ctx: this.#leafContext(trail, child) });
			else this.#loadChild(trail, child);
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
	 * Verify a fold from the store alone and return its leaves for expansion. Reads every record
	 * under it, reads each leaf object once, hashes them all in batches, then recomputes each
	 * fold's identity bottom-up from the verified hashes and compares it with its record.
	 */
	verifyFold(recordHash: HexHash, expect: ExpectedFold = {}): VerifiedFold {
		checkHash(recordHash, "record hash");
		if (expect.id !== undefined) checkFoldId(expect.id, "expected fold id");
		if (expect.identity !== undefined) checkHash(expect.identity, "expected fold identity");
		const ctx = expect.id === undefined ? undefined : { fold: expect.id, trail: [expect.id] };
		const record = this.readRecord(recordHash, ctx);
		this.#checkStated(ctx?.trail ?? [], recordHash, record, expect);

		// Pass 1: walk the records depth first (an explicit stack, so no nesting depth can overflow
		// the call stack), collecting leaves in transcript order.
		const root: FoldNode = { record, trail: [record.id], refs: [] };
		const leaves: Omit<VerifiedLeaf, "bytes">[] = [];
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
				top.node.refs.push(leaves.length);
				leaves.push({ entryId: child.entryId, hash: child.hash, fold: top.node.record.id });
				reads.push({ hash: child.hash, ctx: this.#leafContext(top.node.trail, child) });
			} else {
				const node: FoldNode = { record: this.#loadChild(top.node.trail, child), trail: [], refs: [] };
				node.trail = [...top.node.trail, node.record.id];
				top.node.refs.push(node);
				stack.push({ node, next: 0 });
			}
		}

		// Pass 2: every leaf object read once, hashed in batches, checked against name and length.
		const bytes = this.objects.readMany(reads);

		// Pass 3: identities from the verified leaf hashes up, children before parents.
		for (const node of postOrder) {
			node.computed = this.#identityOf(
				node.refs.map((ref) => (typeof ref === "number" ? leaves[ref].hash : ref.computed!)),
			);
			if (node.computed !== node.record.identity) {
				throw new StoreError(
					"MISMATCH",
					`fold ${node.trail.join(" > ")}: identity does not verify: the record states ${node.record.identity}, its children hash to ${node.computed}`,
					{ fold: node.record.id, expected: node.record.identity, actual: node.computed },
				);
			}
		}
		return { record, recordHash, leaves: leaves.map((leaf, i) => ({ ...leaf, bytes: bytes[i] })) };
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
