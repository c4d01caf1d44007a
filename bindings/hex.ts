// Lower-case hex for digests; no Node Buffer so it runs in every host.
const DIGITS = Array.from("0123456789abcdef", (c) => c.charCodeAt(0));
/** Char codes of the hex being built, reused; one chunk of digits per fromCharCode call. */
const CHUNK = 4096;
const codes = new Uint16Array(2 * CHUNK);

export function toHex(bytes: Uint8Array, start = 0, end = bytes.byteLength): string {
	// One flat string from char codes: concatenating two digits at a time would leave a rope of
	// string pieces behind every digest kept (about 1 KB each where 64 bytes are needed).
	let s = "";
	for (let from = start; from < end; from += CHUNK) {
		const to = Math.min(end, from + CHUNK);
		for (let i = from, j = 0; i < to; i++, j += 2) {
			codes[j] = DIGITS[bytes[i] >>> 4];
			codes[j + 1] = DIGITS[bytes[i] & 15];
		}
		s += String.fromCharCode.apply(null, codes.subarray(0, 2 * (to - from)) as unknown as number[]);
	}
	return s;
}

// char code -> nibble, 255 for anything that is not a lower-case hex digit
const NIBBLE = new Uint8Array(128).fill(255);
for (let i = 0; i < 16; i++) NIBBLE["0123456789abcdef".charCodeAt(i)] = i;

/** Decode lower-case hex into `out` at `offset`; refuses anything else before writing. */
export function fromHexInto(hex: string, out: Uint8Array, offset = 0): void {
	if (typeof hex !== "string" || hex.length % 2 !== 0 || offset + hex.length / 2 > out.byteLength) {
		throw new TypeError("pi-fold core: expected lower-case hex with an even number of digits that fits the output");
	}
	for (let i = 0; i < hex.length; i++) {
		const c = hex.charCodeAt(i);
		if (c > 127 || NIBBLE[c] === 255) throw new TypeError("pi-fold core: expected lower-case hex digits only");
	}
	for (let i = 0, j = offset; i < hex.length; i += 2, j++) {
		out[j] = (NIBBLE[hex.charCodeAt(i)] << 4) | NIBBLE[hex.charCodeAt(i + 1)];
	}
}

export function fromHex(hex: string): Uint8Array {
	const out = new Uint8Array(typeof hex === "string" ? hex.length >>> 1 : 0);
	fromHexInto(hex, out);
	return out;
}
