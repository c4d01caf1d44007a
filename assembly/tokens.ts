// Token estimation over UTF-8 bytes, calibrated against o200k_base (gpt-tokenizer).
//
// The formula. Every byte falls in one of 14 classes (CLASS below):
//   0 lower a-z      1 upper A-Z      2 digit 0-9       3 space 0x20     4 newline \n
//   5 control: other C0 bytes (\t, \r, ...) and DEL      6 punct: any other printable ASCII
//   7 cont: UTF-8 continuation 80-BF
//   8 latin2: lead C0-CA (Latin-1 supplement, Latin extended, IPA)
//   9 other2: lead CB-DF (combining marks, Greek, Cyrillic, Hebrew, Arabic...)
//  10 indic3: lead E0-E1 (Indic scripts, Thai, Georgian, Vietnamese letters...)
//  11 symbol: lead E2, EE, F0-FF (punctuation, arrows, math, box drawing, private use, emoji)
//  12 cjk3: lead E3-E9, EF (kana, CJK ideographs, fullwidth forms)
//  13 hangul3: lead EA-ED (Hangul syllables)
// so a non-ASCII character costs its lead class plus its continuation bytes: the lead byte
// says which script, which is what o200k's per-script efficiency depends on (a CJK character
// is ~0.8 tokens, a Cyrillic one ~0.3).
// Six run features follow the pre-tokenizer of o200k, whose pieces are words, 1-3 digit
// groups and punctuation runs:
//  14 wordStart: an ASCII letter after a non-letter     15 camel: lower -> upper
//  16 digitStart: a digit after a non-digit             17 punctStart: punct after non-punct
//  18 longDigit: a digit at position >= 4 of its run (numbers split every 3 digits)
//  19 highStart: a byte >= 0x80 after a byte < 0x80
// The start of a span counts as "no byte": the first byte always starts its run.
//
// estimate = round(sum of WEIGHTS[i] * count[i]) (round half up); 0 for an empty span, at
// least 1 otherwise, saturating at u32 max. All counting is integer; the f64 weights are
// applied once per span, in feature order, so the JS twin (harness/reference/tokens-js.ts)
// gets bit-identical results.
//
// The weights come from scripts/calibrate-tokens.ts: non-negative least squares on the
// train split of a corpus cut from node_modules (code, JSON, Markdown prose, localized
// text; ~2 KB chunks, 1 in 4 held out by hash), minimizing relative error, reweighted toward
// least absolute error, with category balance chosen by cross-validation inside train.
// Median |relative error| per chunk on the HELD-OUT split (chars/4 in brackets):
//   code 3.45% (11.4%), JSON 2.73% (19.5%), prose 2.90% (6.9%), non-ASCII 7.41% (26.0%).
// A long-word feature (letters past the 8th of a run) was tried at thresholds 4-16 and got
// weight 0 every time, so it is not counted.
//
// Speed: the hot loop walks 16 bytes at a time: SIMD range compares give each class as a
// 16-bit lane mask, and u32 counters add popcounts of masks (run starts are mask & ~(mask
// << 1 | carry)). It is branch-free except for one test that skips the non-ASCII classes on
// pure-ASCII vectors. Work is cut into countBlock calls of 255 vectors, so V8's optimizing
// tier picks the loop up on long spans too. The 256-entry CLASS table is the definition: the
// scalar loop walks it byte by byte (the JS twin's loop), and selfCheckTokens checks the SIMD
// loop against it on all 256 byte values and on mixed text. ~1.9 GB/s on ASCII text here,
// ~10x the JS twin.

const CLASS: usize = memory.data<u8>([
  5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 4, 5, 5, 5, 5, 5, // 00-0F
  5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, // 10-1F
  3, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, // 20-2F
  2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 6, 6, 6, 6, 6, 6, // 30-3F
  6, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, // 40-4F
  1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 6, 6, 6, 6, 6, // 50-5F
  6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, // 60-6F
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 6, 6, 6, 6, 5, // 70-7F
  7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, // 80-8F
  7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, // 90-9F
  7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, // A0-AF
  7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, // B0-BF
  8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 8, 9, 9, 9, 9, 9, // C0-CF
  9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, // D0-DF
  10, 10, 11, 12, 12, 12, 12, 12, 12, 12, 13, 13, 13, 13, 11, 12, // E0-EF
  11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, 11, // F0-FF
]);

const LOWER: u32 = 0;
const UPPER: u32 = 1;
const DIGIT: u32 = 2;
const PUNCT: u32 = 6;
const CONT: u32 = 7;
const HANGUL: u32 = 13;
const NONE: u32 = 255; // "no previous byte"
const LONG_DIGIT: u32 = 4;

const TOKEN_FEATURES: u32 = 20;
const F_WORD: usize = 14 << 2;
const F_CAMEL: usize = 15 << 2;
const F_DIGIT: usize = 16 << 2;
const F_PUNCT: usize = 17 << 2;
const F_LONG_DIGIT: usize = 18 << 2;
const F_HIGH: usize = 19 << 2;

const WEIGHTS: usize = memory.data<f64>([
  0.045344, // lower
  0.131447, // upper
  0.030004, // digit
  0.054333, // space
  0.428964, // newline
  0.285997, // control
  0.055618, // punct
  0.160156, // cont
  0.251699, // latin2
  0.150224, // other2
  0.0, // indic3
  0.675278, // symbol
  0.445696, // cjk3
  0.276825, // hangul3
  0.708638, // wordStart
  0.637269, // camel
  1.880381, // digitStart
  0.869811, // punctStart
  0.127175, // longDigit
  0.059146, // highStart
]);

/** The feature counts of the span being estimated (u32 each). */
const FEAT: usize = memory.data(20 * 4, 16);

// ---------------------------------------------------------------- scalar

@inline function bump(slot: usize, by: u32): void {
  store<u32>(FEAT + slot, load<u32>(FEAT + slot) + by);
}

/**
 * Count bytes [start, end) into FEAT, one byte at a time through the class table: the
 * definition the SIMD loop must match (selfCheckTokens compares them), and the JS twin's loop.
 */
function countScalar(start: usize, end: usize): void {
  let prev = NONE;
  let digitRun: u32 = 0;
  let wordStart: u32 = 0, camel: u32 = 0, digitStart: u32 = 0, punctStart: u32 = 0, longDigit: u32 = 0, highStart: u32 = 0;
  for (let p = start; p < end; p++) {
    const c = <u32>load<u8>(CLASS + <usize>load<u8>(p));
    bump(<usize>c << 2, 1);
    if (c == DIGIT) {
      if (prev != DIGIT) digitStart++;
      if (++digitRun >= LONG_DIGIT) longDigit++;
    } else {
      digitRun = 0;
      if (c <= UPPER) {
        if (prev > UPPER) wordStart++;
        else if (c == UPPER && prev == LOWER) camel++;
      } else if (c == PUNCT) {
        if (prev != PUNCT) punctStart++;
      } else if (c >= CONT && (prev < CONT || prev > HANGUL)) highStart++;
    }
    prev = c;
  }
  bump(F_WORD, wordStart);
  bump(F_CAMEL, camel);
  bump(F_DIGIT, digitStart);
  bump(F_PUNCT, punctStart);
  bump(F_LONG_DIGIT, longDigit);
  bump(F_HIGH, highStart);
}

// ---------------------------------------------------------------- SIMD

// Per vector, range compares give 0/-1 lanes per class and i8x16.bitmask turns them into
// 16-bit masks. Counts are popcounts of masks, in integer registers: "starts a run" is
// `m & ~(m << 1 | carry)`, the carry being the previous vector's top lane. (8-bit lane
// accumulators were tried first: with the constants they overflowed the 16 vector registers
// and the spills made the loop 1.4x slower.) The rare non-ASCII lead classes are counted in
// 8-bit lanes in memory, only for vectors that have a byte >= 0x80.

/** Lanes where lo <= x < lo + n (unsigned), by rotating the range to the bottom of i8. */
@inline function inRange(x: v128, lo: i32, n: i32): v128 {
  return i8x16.lt_s(i8x16.sub(x, i8x16.splat(<i8>(lo + 128))), i8x16.splat(<i8>(n - 128)));
}
@inline function isByte(x: v128, b: i32): v128 {
  return i8x16.eq(x, i8x16.splat(<i8>b));
}
@inline function bits(m: v128): u32 {
  return <u32>i8x16.bitmask(m);
}
/** Lanes of `m` whose previous lane (or `prev`'s lane 15) is clear. */
@inline function starts(m: u32, prev: u32): u32 {
  return m & ~((m << 1) | (prev >> 15));
}
/** Add 8-bit lane counts into a 4 x u32 total. */
@inline function flush(tot: usize, acc: v128): void {
  v128.store(tot, i32x4.add(v128.load(tot), i32x4.extadd_pairwise_i16x8_u(i16x8.extadd_pairwise_i8x16_u(acc))));
}

// Loop constants, loaded once per block: as memory loads they stay out of the optimizer's
// constant propagation, so V8 keeps them in registers instead of rebuilding them per vector.
const K: usize = memory.data<u32>([
  0x20202020, 0x20202020, 0x20202020, 0x20202020, // space; also folds A-Z onto a-z
  0xe1e1e1e1, 0xe1e1e1e1, 0xe1e1e1e1, 0xe1e1e1e1, // 'a' + 128
  0x9a9a9a9a, 0x9a9a9a9a, 0x9a9a9a9a, 0x9a9a9a9a, // 26 - 128
  0xb0b0b0b0, 0xb0b0b0b0, 0xb0b0b0b0, 0xb0b0b0b0, // '0' + 128
  0x8a8a8a8a, 0x8a8a8a8a, 0x8a8a8a8a, 0x8a8a8a8a, // 10 - 128
  0x0a0a0a0a, 0x0a0a0a0a, 0x0a0a0a0a, 0x0a0a0a0a, // newline
  0xa1a1a1a1, 0xa1a1a1a1, 0xa1a1a1a1, 0xa1a1a1a1, // '!' + 128
  0xdededede, 0xdededede, 0xdededede, 0xdededede, // 94 - 128 (printable '!'..'~')
], 16);

// Bitmasks of the vector before the next block: letter, lower, digit, digit pairs, punct, high.
const CARRY: usize = memory.data(6 * 4, 16);
// 4 x u32 totals of the high-byte classes: cont, latin2, other2, indic3, symbol, cjk3.
const TOT: usize = memory.data(6 * 16, 16);
// Their 8-bit lane counts within one block (touched only by vectors with a byte >= 0x80).
const HACC: usize = memory.data(6 * 16, 16);
// u32 counts of the span so far, from the bitmasks.
const COUNTS: usize = memory.data(13 * 4, 16);
const C_LETTER: usize = 0;
const C_LOWER: usize = 4;
const C_DIGIT: usize = 8;
const C_SPACE: usize = 12;
const C_PUNCT: usize = 16;
const C_NEWLINE: usize = 20;
const C_HIGH: usize = 24;
const C_WORD: usize = 28;
const C_CAMEL: usize = 32;
const C_DIGIT_START: usize = 36;
const C_PUNCT_START: usize = 40;
const C_LONG_DIGIT: usize = 44;
const C_HIGH_START: usize = 48;

@inline function addCount(slot: usize, n: u32): void {
  store<u32>(COUNTS + slot, load<u32>(COUNTS + slot) + n);
}
@inline function count(slot: usize): u32 {
  return load<u32>(COUNTS + slot);
}

// Up to 255 vectors per block: an 8-bit lane counts at most one per vector.
const BLOCK_VECTORS: u32 = 255;

/** Count `n` (<= 255) 16-byte vectors at `p`, the vector before p being described by CARRY. */
function countBlock(p: usize, n: u32): void {
  const kSpace = v128.load(K, 0);
  const kAlphaBias = v128.load(K, 16);
  const kAlphaLen = v128.load(K, 32);
  const kDigitBias = v128.load(K, 48);
  const kDigitLen = v128.load(K, 64);
  const kNewline = v128.load(K, 80);
  const kPrintBias = v128.load(K, 96);
  const kPrintLen = v128.load(K, 112);
  let pLetter = load<u32>(CARRY, 0);
  let pLower = load<u32>(CARRY, 4);
  let pDigit = load<u32>(CARRY, 8);
  let pDigit2 = load<u32>(CARRY, 12);
  let pPunct = load<u32>(CARRY, 16);
  let pHigh = load<u32>(CARRY, 20);
  const zero = i8x16.splat(0);
  let letters: u32 = 0, lowers: u32 = 0, digits: u32 = 0, spaces: u32 = 0, puncts: u32 = 0;
  let newlines: u32 = 0, highs: u32 = 0, word: u32 = 0, camel: u32 = 0;
  let digitStart: u32 = 0, punctStart: u32 = 0, longDigit: u32 = 0, highStart: u32 = 0;
  for (let k: usize = 0; k < 6; k++) v128.store(HACC + (k << 4), zero);
  const end = p + (<usize>n << 4);
  for (let q = p; q < end; q += 16) {
    const x = v128.load(q);
    const letter = i8x16.lt_s(i8x16.sub(v128.or(x, kSpace), kAlphaBias), kAlphaLen);
    const digit = i8x16.lt_s(i8x16.sub(x, kDigitBias), kDigitLen);
    const punct = v128.andnot(i8x16.lt_s(i8x16.sub(x, kPrintBias), kPrintLen), v128.or(letter, digit));
    const mLetter = bits(letter);
    const mLower = bits(i8x16.lt_s(i8x16.sub(x, kAlphaBias), kAlphaLen));
    const mDigit = bits(digit);
    const mPunct = bits(punct);
    const mDigit2 = mDigit & ((mDigit << 1) | (pDigit >> 15));
    letters += popcnt<u32>(mLetter);
    lowers += popcnt<u32>(mLower);
    digits += popcnt<u32>(mDigit);
    puncts += popcnt<u32>(mPunct);
    spaces += popcnt<u32>(bits(i8x16.eq(x, kSpace)));
    newlines += popcnt<u32>(bits(i8x16.eq(x, kNewline)));
    word += popcnt<u32>(starts(mLetter, pLetter));
    camel += popcnt<u32>(mLetter & ~mLower & ((mLower << 1) | (pLower >> 15)));
    digitStart += popcnt<u32>(starts(mDigit, pDigit));
    longDigit += popcnt<u32>(mDigit2 & ((mDigit2 << 2) | (pDigit2 >> 14)));
    punctStart += popcnt<u32>(starts(mPunct, pPunct));
    const mHigh = bits(x);
    if (mHigh != 0) {
      highs += popcnt<u32>(mHigh);
      highStart += popcnt<u32>(starts(mHigh, pHigh));
      const symbol = v128.or(v128.or(isByte(x, 0xe2), isByte(x, 0xee)), inRange(x, 0xf0, 16));
      v128.store(HACC, i8x16.sub(v128.load(HACC, 0), inRange(x, 0x80, 64)), 0);
      v128.store(HACC, i8x16.sub(v128.load(HACC, 16), inRange(x, 0xc0, 11)), 16);
      v128.store(HACC, i8x16.sub(v128.load(HACC, 32), inRange(x, 0xcb, 21)), 32);
      v128.store(HACC, i8x16.sub(v128.load(HACC, 48), inRange(x, 0xe0, 2)), 48);
      v128.store(HACC, i8x16.sub(v128.load(HACC, 64), symbol), 64);
      v128.store(HACC, i8x16.sub(v128.load(HACC, 80), v128.or(inRange(x, 0xe3, 7), isByte(x, 0xef))), 80);
    }
    pLetter = mLetter;
    pLower = mLower;
    pDigit = mDigit;
    pDigit2 = mDigit2;
    pPunct = mPunct;
    pHigh = mHigh;
  }
  store<u32>(CARRY, pLetter, 0);
  store<u32>(CARRY, pLower, 4);
  store<u32>(CARRY, pDigit, 8);
  store<u32>(CARRY, pDigit2, 12);
  store<u32>(CARRY, pPunct, 16);
  store<u32>(CARRY, pHigh, 20);
  for (let k: usize = 0; k < 6; k++) flush(TOT + (k << 4), v128.load(HACC + (k << 4)));
  addCount(C_LETTER, letters);
  addCount(C_LOWER, lowers);
  addCount(C_DIGIT, digits);
  addCount(C_SPACE, spaces);
  addCount(C_PUNCT, puncts);
  addCount(C_NEWLINE, newlines);
  addCount(C_HIGH, highs);
  addCount(C_WORD, word);
  addCount(C_CAMEL, camel);
  addCount(C_DIGIT_START, digitStart);
  addCount(C_PUNCT_START, punctStart);
  addCount(C_LONG_DIGIT, longDigit);
  addCount(C_HIGH_START, highStart);
}

@inline function total(k: usize): u32 {
  const t = v128.load(TOT + (k << 4));
  return <u32>(i32x4.extract_lane(t, 0) + i32x4.extract_lane(t, 1) + i32x4.extract_lane(t, 2) + i32x4.extract_lane(t, 3));
}

// The last partial vector is copied here, zero-padded: a 0x00 byte is a control byte that
// starts no run, and control is what is left once every other class is counted, so the
// padding counts nowhere.
const TAIL: usize = memory.data(16, 16);

/** Count the features of `len` bytes at `ptr` into FEAT; `simd` false runs the scalar table loop. */
function countFeatures(ptr: usize, len: u32, simd: bool): void {
  memory.fill(FEAT, 0, TOKEN_FEATURES << 2);
  if (!simd) {
    countScalar(ptr, ptr + <usize>len);
    return;
  }
  // Zero carries: "no byte before the span" is not a letter, digit, punct or high byte.
  memory.fill(CARRY, 0, 6 * 4);
  memory.fill(TOT, 0, 6 * 16);
  memory.fill(COUNTS, 0, 13 * 4);
  let p = ptr;
  let left = len >>> 4;
  while (left > 0) {
    const n = min<u32>(left, BLOCK_VECTORS);
    countBlock(p, n);
    p += <usize>n << 4;
    left -= n;
  }
  const rest = len & 15;
  if (rest > 0) {
    v128.store(TAIL, i8x16.splat(0));
    memory.copy(TAIL, p, rest);
    countBlock(TAIL, 1);
  }
  const lower = count(C_LOWER), upper = count(C_LETTER) - lower, digit = count(C_DIGIT), space = count(C_SPACE);
  const newline = count(C_NEWLINE), punct = count(C_PUNCT), high = count(C_HIGH);
  bump(0, lower);
  bump(4, upper);
  bump(8, digit);
  bump(12, space);
  bump(16, newline);
  bump(20, len - lower - upper - digit - space - newline - punct - high); // control: the rest of ASCII
  bump(24, punct);
  let hangul = high;
  for (let k: usize = 0; k < 6; k++) {
    const n = total(k); // cont, latin2, other2, indic3, symbol, cjk3
    bump((<usize>CONT + k) << 2, n);
    hangul -= n;
  }
  bump(<usize>HANGUL << 2, hangul);
  bump(F_WORD, count(C_WORD));
  bump(F_CAMEL, count(C_CAMEL));
  bump(F_DIGIT, count(C_DIGIT_START));
  bump(F_PUNCT, count(C_PUNCT_START));
  bump(F_LONG_DIGIT, count(C_LONG_DIGIT));
  bump(F_HIGH, count(C_HIGH_START));
}

/** round(sum of weight * count) over FEAT, at least 1, saturating at u32 max. */
function weighFeatures(): u32 {
  let sum: f64 = 0;
  for (let i: usize = 0; i < <usize>TOKEN_FEATURES; i++) {
    sum += load<f64>(WEIGHTS + (i << 3)) * <f64>load<u32>(FEAT + (i << 2));
  }
  const r = Math.floor(sum + 0.5);
  if (r < 1) return 1;
  if (r > <f64>u32.MAX_VALUE) return u32.MAX_VALUE;
  return <u32>r;
}

// ---------------------------------------------------------------- exports

/** Estimated o200k tokens of `len` UTF-8 bytes at `ptr`: 0 when empty, else at least 1. */
export function estimateTokens(ptr: usize, len: u32): u32 {
  if (len == 0) return 0;
  countFeatures(ptr, len, true);
  return weighFeatures();
}

/**
 * Estimate `count` spans packed at `data`: span i is bytes [off[i], off[i+1]) relative to
 * `data`, `offsets` holding count+1 u32. Writes a u32 per span at out + 4*i and returns the
 * total, saturating at u32 max.
 */
export function estimateTokensBatch(data: usize, offsets: usize, count: u32, out: usize): u32 {
  let sum: u64 = 0;
  for (let i: usize = 0; i < <usize>count; i++) {
    const s = load<u32>(offsets + (i << 2));
    const e = load<u32>(offsets + (i << 2), 4);
    const t = e > s ? estimateTokens(data + <usize>s, e - s) : 0;
    store<u32>(out + (i << 2), t);
    sum += t;
  }
  return sum > <u64>u32.MAX_VALUE ? u32.MAX_VALUE : <u32>sum;
}

// ---------------------------------------------------------------- self-check

// "fooBar(42);" -> lower 5 (f o o a r), upper 1, digit 2, punct 3, wordStart 1, camel 1,
// digitStart 1, punctStart 2 ("(" and ");"): pure counting, independent of the weights.
const FOO: usize = memory.data<u8>([0x66, 0x6f, 0x6f, 0x42, 0x61, 0x72, 0x28, 0x34, 0x32, 0x29, 0x3b]);
// "中文": lead E4 and E6 (cjk3), four continuation bytes, one high run.
const CJK: usize = memory.data<u8>([0xe4, 0xb8, 0xad, 0xe6, 0x96, 0x87]);
const HELLO: usize = memory.data<u8>([0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x20, 0x77, 0x6f, 0x72, 0x6c, 0x64]);
// Every byte value once (i * 37 mod 256), then a 65-byte snippet over and over: 65 is odd,
// so 16 repeats put every feature on every lane, vector edges included.
const SNIPPET_BYTES: u32 = 65;
// "const fooBar = 123456; // Ün 中文🙂\n\t{"k":[7,89]}\r\nЖ가＋~"
const SNIPPET: usize = memory.data<u8>([
  0x63, 0x6f, 0x6e, 0x73, 0x74, 0x20, 0x66, 0x6f, 0x6f, 0x42, 0x61, 0x72, 0x20, 0x3d, 0x20, 0x31,
  0x32, 0x33, 0x34, 0x35, 0x36, 0x3b, 0x20, 0x2f, 0x2f, 0x20, 0xc3, 0x9c, 0x6e, 0x20, 0xe4, 0xb8,
  0xad, 0xe6, 0x96, 0x87, 0xf0, 0x9f, 0x99, 0x82, 0x0a, 0x09, 0x7b, 0x22, 0x6b, 0x22, 0x3a, 0x5b,
  0x37, 0x2c, 0x38, 0x39, 0x5d, 0x7d, 0x0d, 0x0a, 0xd0, 0x96, 0xea, 0xb0, 0x80, 0xef, 0xbc, 0x8b,
  0x7e,
]);
const MIX_BYTES: u32 = 256 + 65 * 17;
const MIX: usize = memory.data(256 + 65 * 17, 16);
const SCALAR_FEAT: usize = memory.data(20 * 4, 16);

function featureIs(i: usize, want: u32): bool {
  return load<u32>(FEAT + (i << 2)) == want;
}

/**
 * Known answers: the integer counts of two strings (by hand, see above), the weighted
 * estimates of the empty span (0), "a" (the floor of 1) and "hello world" (10 lower + 1 space
 * + 2 word starts = 1.93 -> 2, which is also o200k's count), and the SIMD path agreeing with
 * the scalar table loop on all 256 byte values and on mixed text.
 */
export function selfCheckTokens(): bool {
  countFeatures(FOO, 11, true);
  if (!(featureIs(0, 5) && featureIs(1, 1) && featureIs(2, 2) && featureIs(6, 3))) return false;
  if (!(featureIs(14, 1) && featureIs(15, 1) && featureIs(16, 1) && featureIs(17, 2) && featureIs(18, 0))) return false;
  countFeatures(CJK, 6, true);
  if (!(featureIs(12, 2) && featureIs(7, 4) && featureIs(19, 1) && featureIs(14, 0))) return false;
  if (estimateTokens(HELLO, 0) != 0 || estimateTokens(HELLO, 1) != 1 || estimateTokens(HELLO, 11) != 2) return false;
  for (let i: usize = 0; i < 256; i++) store<u8>(MIX + i, <u8>(i * 37));
  for (let i: usize = 256; i < <usize>MIX_BYTES; i++) {
    store<u8>(MIX + i, load<u8>(SNIPPET + (i - 256) % <usize>SNIPPET_BYTES));
  }
  for (let start: u32 = 0; start < 768; start += 256) {
    countFeatures(MIX + <usize>start, MIX_BYTES - start, false);
    memory.copy(SCALAR_FEAT, FEAT, TOKEN_FEATURES << 2);
    countFeatures(MIX + <usize>start, MIX_BYTES - start, true);
    if (memory.compare(SCALAR_FEAT, FEAT, TOKEN_FEATURES << 2) != 0) return false;
  }
  return true;
}
