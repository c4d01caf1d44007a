// File access for the pack files (packs.ts): reading a head or an entry, a pack's entries, whether
// a pack is still there, and the names damaged packs are set aside under.
import { lstatSync, readSync } from "node:fs";
import { fsCode, ioError, StoreError } from "./errors.ts";
import { type PackEntry, parseIndex } from "./pack-format.ts";
import type { PackFile } from "./packs.ts";

/** The quarantine name of a set-aside pack: `<64 hex>.pack.damaged-<ms>-<pid>-<8 hex>`. */
const PACK_QUARANTINE = /^[0-9a-f]{64}\.pack\.damaged-\d+-\d+-[0-9a-f]{8}$/;

export function isPackQuarantineName(name: string): boolean {
	return PACK_QUARANTINE.test(name);
}

/** A pack's entries, from its head (none for a pack whose head could not be read). */
export function entriesOf(pack: PackFile): PackEntry[] {
	return pack.head ? parseIndex(pack.head.bytes, pack.head.count, pack.head.size).entries : [];
}

export function isFile(path: string): boolean {
	try {
		return lstatSync(path).isFile();
	} catch (err) {
		if (fsCode(err) === "ENOENT" || fsCode(err) === "ENOTDIR") return false;
		throw ioError("cannot stat pack", path, err);
	}
}

/** `length` bytes at `offset`; fewer when the file ends early, if `short` allows it (the caller verifies). */
export function readExactly(fd: number, offset: number, length: number, path: string, short = false): Uint8Array {
	const out = new Uint8Array(length);
	let got = 0;
	try {
		while (got < length) {
			const n = readSync(fd, out, got, length - got, offset + got);
			if (n === 0) break;
			got += n;
		}
	} catch (err) {
		throw ioError("cannot read pack", path, err);
	}
	if (got < length && !short) throw new StoreError("TRUNCATED", `pack ${path} ends after ${got} of ${length} bytes`);
	return got < length ? out.subarray(0, got) : out;
}
