// Lower-case hex for digests; no Node Buffer so it runs in every host.
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

export function toHex(bytes: Uint8Array, start = 0, end = bytes.byteLength): string {
	let s = "";
	for (let i = start; i < end; i++) s += HEX[bytes[i]];
	return s;
}

export function fromHex(hex: string): Uint8Array {
	if (typeof hex !== "string" || hex.length % 2 !== 0 || !/^[0-9a-f]*$/.test(hex)) {
		throw new TypeError("pi-fold core: expected lower-case hex with an even number of digits");
	}
	const out = new Uint8Array(hex.length / 2);
	for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(2 * i, 2 * i + 2), 16);
	return out;
}
