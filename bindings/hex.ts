// Lower-case hex for digests; no Node Buffer so it runs in every host.
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

export function toHex(bytes: Uint8Array, start = 0, end = bytes.byteLength): string {
	let s = "";
	for (let i = start; i < end; i++) s += HEX[bytes[i]];
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
