// The JS twin of assembly/tokens.ts: the same byte classes, the same integer features and
// the same weights, in plain scalar JavaScript over a Uint8Array. Results are bit-identical
// to the Wasm core (tests prove it on random input), so the calibration script can fit on
// these features and the benchmark has an honest baseline. See assembly/tokens.ts for the
// reasoning behind each class and feature.

/** Byte classes (indices into the first 15 features). */
export const CLASS_NAMES = [
	"lower", // a-z
	"upper", // A-Z
	"digit", // 0-9
	"space", // 0x20
	"newline", // \n
	"control", // other C0 controls (\t, \r, ...) and DEL
	"punct", // every other printable ASCII byte
	"cont", // UTF-8 continuation 0x80-0xBF
	"latin2", // 2-byte lead C0-CA: Latin-1 supplement, Latin extended, IPA
	"other2", // 2-byte lead CB-DF: Greek, Cyrillic, Hebrew, Arabic, combining marks...
	"indic3", // 3-byte lead E0-E1: Indic, Thai, Georgian, Vietnamese (Latin ext. additional)...
	"symbol", // lead E2, EE, F0-FF: punctuation, arrows, math, box drawing, dingbats; private use; emoji
	"cjk3", // 3-byte lead E3-E9, EF: kana, CJK ideographs, fullwidth forms
	"hangul3", // 3-byte lead EA-ED: Hangul syllables, Yi
] as const;

export const FEATURE_NAMES = [
	...CLASS_NAMES,
	"wordStart", // ASCII letter after a non-letter
	"camel", // lower -> upper
	"digitStart", // digit after a non-digit
	"punctStart", // punct after a non-punct
	"longDigit", // digit at position >= 4 of its run
	"highStart", // byte >= 0x80 after a byte < 0x80
] as const;

export const FEATURE_COUNT = FEATURE_NAMES.length;

// Class ids, in CLASS_NAMES order.
const LOWER = 0;
const UPPER = 1;
const DIGIT = 2;
const PUNCT = 6;
const CONT = 7;
const LAST_HIGH = 13; // the last high-byte class

/** The 256-entry class table (the same bytes as CLASS in assembly/tokens.ts). */
const CLASS_TABLE: Uint8Array = (() => {
	const t = new Uint8Array(256);
	for (let b = 0; b < 256; b++) {
		let c: number;
		if (b >= 0x61 && b <= 0x7a) c = LOWER;
		else if (b >= 0x41 && b <= 0x5a) c = UPPER;
		else if (b >= 0x30 && b <= 0x39) c = DIGIT;
		else if (b === 0x20) c = 3;
		else if (b === 0x0a) c = 4;
		else if (b < 0x20 || b === 0x7f) c = 5;
		else if (b < 0x80) c = PUNCT;
		else if (b < 0xc0) c = CONT;
		else if (b <= 0xca) c = 8;
		else if (b <= 0xdf) c = 9;
		else if (b <= 0xe1) c = 10;
		else if (b === 0xe2 || b === 0xee || b >= 0xf0) c = 11;
		else if (b <= 0xe9 || b === 0xef) c = 12;
		else c = 13; // EA-ED
		t[b] = c;
	}
	return t;
})();

/** Weights, in FEATURE_NAMES order; printed by scripts/calibrate-tokens.ts (same numbers as assembly/tokens.ts). */
export const WEIGHTS: readonly number[] = [
	0.045344, 0.131447, 0.030004, 0.054333, 0.428964, 0.285997, 0.055618, 0.160156, 0.251699, 0.150224, 0.0, 0.675278,
	0.445696, 0.276825, 0.708638, 0.637269, 1.880381, 0.869811, 0.127175, 0.059146,
];

const LONG_DIGIT = 4;

/** The integer feature counts of `bytes`, written to `out` (FEATURE_COUNT u32). */
export function tokenFeatures(bytes: Uint8Array, out: Uint32Array = new Uint32Array(FEATURE_COUNT)): Uint32Array {
	out.fill(0);
	let wordStart = 0;
	let camel = 0;
	let digitStart = 0;
	let punctStart = 0;
	let longDigit = 0;
	let highStart = 0;
	let prev = 255; // no byte before the span: not a letter, digit, punct or high byte
	let digitRun = 0;
	const n = bytes.length;
	for (let i = 0; i < n; i++) {
		const c = CLASS_TABLE[bytes[i]];
		out[c]++;
		if (c === DIGIT) {
			if (prev !== DIGIT) digitStart++;
			if (++digitRun >= LONG_DIGIT) longDigit++;
		} else {
			digitRun = 0;
			if (c <= UPPER) {
				if (prev > UPPER) wordStart++;
				else if (c === UPPER && prev === LOWER) camel++;
			} else if (c === PUNCT) {
				if (prev !== PUNCT) punctStart++;
			} else if (c >= CONT && (prev < CONT || prev > LAST_HIGH)) highStart++;
		}
		prev = c;
	}
	const k = CLASS_NAMES.length;
	out[k] = wordStart;
	out[k + 1] = camel;
	out[k + 2] = digitStart;
	out[k + 3] = punctStart;
	out[k + 4] = longDigit;
	out[k + 5] = highStart;
	return out;
}

/** Weighted sum, rounded to nearest; 0 for no bytes, else at least 1, saturating at u32 max. */
export function estimateFromFeatures(features: ArrayLike<number>, weights: readonly number[] = WEIGHTS): number {
	let bytes = 0;
	for (let c = 0; c < CLASS_NAMES.length; c++) bytes += features[c];
	if (bytes === 0) return 0;
	let sum = 0;
	for (let i = 0; i < FEATURE_COUNT; i++) sum += weights[i] * features[i];
	const r = Math.floor(sum + 0.5);
	return Math.max(1, Math.min(r, 0xffff_ffff));
}

const scratch = new Uint32Array(FEATURE_COUNT);

/** The twin of the core's estimateTokens. */
export function estimateTokensJs(bytes: Uint8Array): number {
	return estimateFromFeatures(tokenFeatures(bytes, scratch));
}

/** The usual heuristic (Pi's own estimate): ceil(UTF-16 length / 4). */
export function charsOver4(text: string): number {
	return Math.ceil(text.length / 4);
}
