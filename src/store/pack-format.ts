// Pack files: many objects and records in one immutable file, so a batch of writes (a commit's
// leaves and records) costs one file, one fsync and one directory sync instead of one of each per
// object. The layout, little-endian:
//
//   header   24 bytes   "PIFOLDPK", u32 version (1), u32 entry count, u32 salt, 4 zero bytes
//   index    48 bytes per entry: u8 kind (0 object, 1 record), 3 zero bytes, u32 length,
//            u64 offset (from the start of the file), 32-byte SHA-256 of the entry's bytes
//   data     every entry's bytes, in index order
//
// A pack is named by the SHA-256 of its header and index (`<64 hex>.pack`): the index holds every
// entry's hash, so the name commits to the whole content, and the same batch written twice gets the
// same name. The salt is 0 unless that name is taken by a damaged pack, whose replacement must not
// need the name before the damaged one is set aside. Entries are verified against their hash on
// every read, like loose files; the index is only a map to them. Everything here is pure.
import { DIGEST_BYTES, fromHexInto } from "../../bindings/index.ts";
import type { HexHash } from "../fold-types.ts";
import type { ContentKind } from "./content.ts";

const PACK_MAGIC = "PIFOLDPK";
const PACK_VERSION = 1;
export const PACK_HEADER_BYTES = 24;
const PACK_ENTRY_BYTES = 48;
/** A pack holds at most this many entries (a batch is cut into several packs past it). */
export const PACK_MAX_ENTRIES = 65_536;
/** A pack file's name: the hash of its header and index. */
export const PACK_NAME = /^([0-9a-f]{64})\.pack$/;

const KIND_CODE: Record<ContentKind, number> = { object: 0, record: 1 };
const KINDS: readonly ContentKind[] = ["object", "record"];

export interface PackItem {
	kind: ContentKind;
	hash: HexHash;
	bytes: Uint8Array;
}

/** One entry of a pack's index. */
export interface PackEntry {
	kind: ContentKind;
	hash: HexHash;
	offset: number;
	length: number;
}

/** Bytes of the header and index of a pack with `count` entries. */
export function headBytes(count: number): number {
	return PACK_HEADER_BYTES + count * PACK_ENTRY_BYTES;
}

/** The whole file of a pack holding `items` (in that order), and its head (header and index). */
export function encodePack(items: readonly PackItem[], salt = 0): { file: Uint8Array; head: Uint8Array } {
	if (items.length === 0 || items.length > PACK_MAX_ENTRIES) {
		throw new RangeError(`a pack holds 1 to ${PACK_MAX_ENTRIES} entries, got ${items.length}`);
	}
	const head = headBytes(items.length);
	let size = head;
	for (const it of items) size += it.bytes.byteLength;
	const file = new Uint8Array(size);
	const view = new DataView(file.buffer);
	for (let i = 0; i < PACK_MAGIC.length; i++) file[i] = PACK_MAGIC.charCodeAt(i);
	view.setUint32(8, PACK_VERSION, true);
	view.setUint32(12, items.length, true);
	view.setUint32(16, salt, true);
	let offset = head;
	items.forEach((it, i) => {
		const at = PACK_HEADER_BYTES + i * PACK_ENTRY_BYTES;
		view.setUint8(at, KIND_CODE[it.kind]);
		view.setUint32(at + 4, it.bytes.byteLength, true);
		view.setBigUint64(at + 8, BigInt(offset), true);
		fromHexInto(it.hash, file, at + 16);
		file.set(it.bytes, offset);
		offset += it.bytes.byteLength;
	});
	return { file, head: file.subarray(0, head) };
}

/** What the header of a file says about it as a pack. */
type PackHeader =
	| { ok: true; count: number }
	| { ok: false; reason: string /** A pack from a newer pi-fold: left alone, never set aside. */; newer?: boolean };

export function parseHeader(bytes: Uint8Array, fileSize: number): PackHeader {
	if (bytes.byteLength < PACK_HEADER_BYTES) return { ok: false, reason: `${fileSize} bytes, shorter than a header` };
	for (let i = 0; i < PACK_MAGIC.length; i++) {
		if (bytes[i] !== PACK_MAGIC.charCodeAt(i)) return { ok: false, reason: "not a pi-fold pack (bad magic)" };
	}
	const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
	const version = view.getUint32(8, true);
	if (version !== PACK_VERSION) {
		return version > PACK_VERSION
			? { ok: false, newer: true, reason: `pack version ${version} is newer than this pi-fold reads (${PACK_VERSION})` }
			: { ok: false, reason: `unknown pack version ${version}` };
	}
	const count = view.getUint32(12, true);
	if (count === 0 || count > PACK_MAX_ENTRIES || headBytes(count) > fileSize) {
		return { ok: false, reason: `the header names ${count} entries, which a ${fileSize}-byte file cannot hold` };
	}
	return { ok: true, count };
}

/**
 * The entries of a pack's index (`head` = header and index). An entry whose kind is unknown or whose
 * bytes would lie outside the file is left out and counted: the pack is damaged.
 */
export function parseIndex(head: Uint8Array, count: number, fileSize: number): { entries: PackEntry[]; bad: number } {
	const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
	const dataStart = headBytes(count);
	const entries: PackEntry[] = [];
	let bad = 0;
	for (let i = 0; i < count; i++) {
		const at = PACK_HEADER_BYTES + i * PACK_ENTRY_BYTES;
		const kind = KINDS[view.getUint8(at)];
		const length = view.getUint32(at + 4, true);
		const offset = Number(view.getBigUint64(at + 8, true));
		if (kind === undefined || offset < dataStart || offset + length > fileSize) {
			bad++;
			continue;
		}
		// A flat string (Buffer's hex), not one concatenated digit by digit: the index keeps one per entry.
		const hash = Buffer.from(head.buffer, head.byteOffset, head.byteLength).toString(
			"hex",
			at + 16,
			at + 16 + DIGEST_BYTES,
		);
		entries.push({ kind, length, offset, hash });
	}
	return { entries, bad };
}
