// SHA-256 (FIPS 180-4): one-shot, streaming, and a 4-lane SIMD multi-buffer batch.
// The batch keeps four independent messages in the four 32-bit lanes of each v128
// and refills a lane as soon as its message ends, so lanes stay busy whatever the
// span lengths are. 4 lanes, not 8: an 8-lane variant was measured slower here
// (register spills). The unrolled compression functions are generated: sha256.gen.ts.
import { compressBlocks, compressLanes } from "./sha256.gen";

// Initial hash value.
const IV: usize = memory.data<u32>([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);

export const DIGEST_BYTES: u32 = 32;

// ---------------------------------------------------------------- scalar

const TAIL: usize = memory.data(128);

// V8 runs a Wasm function's first long call in its baseline tier and never swaps tiers
// mid-call, so long inputs go through compressBlocks in short calls: later calls pick up
// the optimized code (hashing 20 MB in one call ran ~5x slower cold).
const CHUNK_BLOCKS: u32 = 64;

function compressMany(state: usize, block: usize, blocks: u32): void {
  let p = block;
  let left = blocks;
  while (left > CHUNK_BLOCKS) {
    compressBlocks(state, p, CHUNK_BLOCKS);
    p += <usize>CHUNK_BLOCKS << 6;
    left -= CHUNK_BLOCKS;
  }
  compressBlocks(state, p, left);
}

/** Pad the last `rest` (< 64) bytes at `p` for a message of `total` bytes into TAIL; returns its block count (1 or 2). */
function padTail(tail: usize, p: usize, rest: u32, total: u64): u32 {
  memory.copy(tail, p, rest);
  store<u8>(tail + rest, 0x80);
  const blocks: u32 = rest < 56 ? 1 : 2;
  const end = tail + (<usize>blocks << 6);
  memory.fill(tail + rest + 1, 0, end - 8 - (tail + rest + 1));
  store<u64>(end - 8, bswap<u64>(total << 3));
  return blocks;
}

function writeDigest(state: usize, out: usize): void {
  for (let i: usize = 0; i < 8; i++) store<u32>(out + (i << 2), bswap<u32>(load<u32>(state + (i << 2))));
}

const ONE: usize = memory.data(32);

/** SHA-256 of `len` bytes at `ptr`, 32-byte digest written at `out`. */
export function sha256(ptr: usize, len: u32, out: usize): void {
  memory.copy(ONE, IV, 32);
  const full = len >>> 6;
  compressMany(ONE, ptr, full);
  const rest = len & 63;
  compressBlocks(ONE, TAIL, padTail(TAIL, ptr + (<usize>full << 6), rest, <u64>len));
  writeDigest(ONE, out);
}

/** Fold identity: SHA-256 over `count` child digests laid end to end at `ptr`. */
export function foldIdentity(ptr: usize, count: u32, out: usize): void {
  sha256(ptr, count << 5, out);
}

// ---------------------------------------------------------------- streaming

// The one active stream context, self-contained so a host can save and restore it
// byte for byte: state[32] | buffer[64] | buffered u32 | pad u32 | total u64.
export const STREAM_STATE_BYTES: u32 = 112;
const STREAM: usize = memory.data(STREAM_STATE_BYTES, 16);
const S_BUF: usize = 32;
const S_N: usize = 96;
const S_TOTAL: usize = 104;

export function streamStatePtr(): usize {
  return STREAM;
}

export function streamInit(): void {
  memory.copy(STREAM, IV, 32);
  store<u32>(STREAM + S_N, 0);
  store<u64>(STREAM + S_TOTAL, 0);
}

export function streamUpdate(ptr: usize, len: u32): void {
  let n = load<u32>(STREAM + S_N);
  store<u64>(STREAM + S_TOTAL, load<u64>(STREAM + S_TOTAL) + <u64>len);
  let p = ptr;
  let left = len;
  if (n > 0) {
    const take = min<u32>(64 - n, left);
    memory.copy(STREAM + S_BUF + n, p, take);
    n += take;
    p += take;
    left -= take;
    if (n < 64) {
      store<u32>(STREAM + S_N, n);
      return;
    }
    compressBlocks(STREAM, STREAM + S_BUF, 1);
    n = 0;
  }
  const full = left >>> 6;
  compressMany(STREAM, p, full);
  p += <usize>full << 6;
  left &= 63;
  memory.copy(STREAM + S_BUF, p, left);
  store<u32>(STREAM + S_N, left);
}

export function streamFinal(out: usize): void {
  const n = load<u32>(STREAM + S_N);
  compressBlocks(STREAM, TAIL, padTail(TAIL, STREAM + S_BUF, n, load<u64>(STREAM + S_TOTAL)));
  writeDigest(STREAM, out);
}

// ---------------------------------------------------------------- 4-lane batch

const STATE4: usize = memory.data(8 * 16, 16); // a..h, lane k of word j at STATE4 + 16j + 4k
const W4: usize = memory.data(16 * 16, 16); // the 16 transposed message words
const LANE_PTR: usize = memory.data(4 * 4, 16); // block pointer per lane for the next compress4
const ZERO_BLOCK: usize = memory.data(64, 16);
const TAIL4: usize = memory.data(4 * 128, 16);
// per-lane bookkeeping
const L_SRC: usize = memory.data(4 * 4, 16); // message start
const L_FULL: usize = memory.data(4 * 4, 16); // full 64-byte blocks in the message
const L_BLOCKS: usize = memory.data(4 * 4, 16); // total blocks including padding
const L_NEXT: usize = memory.data(4 * 4, 16); // next block index
const L_SPAN: usize = memory.data(4 * 4, 16); // span index, or -1 when idle

@inline function lane(table: usize, k: usize): usize {
  return table + (k << 2);
}

// byte order swap inside each 32-bit lane
const BSWAP: v128 = i8x16(3, 2, 1, 0, 7, 6, 5, 4, 11, 10, 9, 8, 15, 14, 13, 12);

/** One compression of four blocks (pointers in LANE_PTR) into STATE4. */
function compress4(): void {
  const p0 = load<u32>(LANE_PTR, 0);
  const p1 = load<u32>(LANE_PTR, 4);
  const p2 = load<u32>(LANE_PTR, 8);
  const p3 = load<u32>(LANE_PTR, 12);
  // Load 16 bytes per lane, byte-swap, then transpose 4x4 so word t of every lane shares a vector.
  for (let g: usize = 0; g < 4; g++) {
    const o = g << 4;
    const x0 = i8x16.swizzle(v128.load(<usize>p0 + o), BSWAP);
    const x1 = i8x16.swizzle(v128.load(<usize>p1 + o), BSWAP);
    const x2 = i8x16.swizzle(v128.load(<usize>p2 + o), BSWAP);
    const x3 = i8x16.swizzle(v128.load(<usize>p3 + o), BSWAP);
    const t0 = i32x4.shuffle(x0, x1, 0, 4, 1, 5);
    const t1 = i32x4.shuffle(x0, x1, 2, 6, 3, 7);
    const t2 = i32x4.shuffle(x2, x3, 0, 4, 1, 5);
    const t3 = i32x4.shuffle(x2, x3, 2, 6, 3, 7);
    const q = W4 + (g << 6);
    v128.store(q, i32x4.shuffle(t0, t2, 0, 1, 4, 5));
    v128.store(q, i32x4.shuffle(t0, t2, 2, 3, 6, 7), 16);
    v128.store(q, i32x4.shuffle(t1, t3, 0, 1, 4, 5), 32);
    v128.store(q, i32x4.shuffle(t1, t3, 2, 3, 6, 7), 48);
  }
  compressLanes(STATE4, W4);
}

/** Load span `idx` into lane `k`: IV into its state lanes, padded tail into its tail buffer. */
function startLane(k: usize, idx: u32, src: usize, len: u32): void {
  for (let j: usize = 0; j < 8; j++) store<u32>(STATE4 + (j << 4) + (k << 2), load<u32>(IV + (j << 2)));
  const full = len >>> 6;
  const tail = TAIL4 + (k << 7);
  const tailBlocks = padTail(tail, src + (<usize>full << 6), len & 63, <u64>len);
  store<u32>(lane(L_SRC, k), <u32>src);
  store<u32>(lane(L_FULL, k), full);
  store<u32>(lane(L_BLOCKS, k), full + tailBlocks);
  store<u32>(lane(L_NEXT, k), 0);
  store<i32>(lane(L_SPAN, k), <i32>idx);
}

/** Block pointer for lane `k`'s next block. */
@inline function blockOf(k: usize): usize {
  const n = load<u32>(lane(L_NEXT, k));
  const full = load<u32>(lane(L_FULL, k));
  if (n < full) return <usize>load<u32>(lane(L_SRC, k)) + (<usize>n << 6);
  return TAIL4 + (k << 7) + (<usize>(n - full) << 6);
}

function laneDigest(k: usize, out: usize): void {
  for (let j: usize = 0; j < 8; j++) {
    store<u32>(out + (j << 2), bswap<u32>(load<u32>(STATE4 + (j << 4) + (k << 2))));
  }
}

const SOLO: usize = memory.data(32);

/**
 * Hash `count` spans packed at `data`: span i is bytes [off[i], off[i+1]) relative to
 * `data`, with `offsets` holding count+1 u32 values. Digest i goes to out + 32*i.
 */
export function sha256Batch(data: usize, offsets: usize, count: u32, out: usize): void {
  let next: u32 = 0;
  let active: u32 = 0;
  // Fill the lanes.
  for (let k: usize = 0; k < 4; k++) {
    if (next < count) {
      const s = load<u32>(offsets + (<usize>next << 2));
      const e = load<u32>(offsets + (<usize>next << 2), 4);
      startLane(k, next, data + s, e - s);
      next++;
      active++;
    } else {
      store<i32>(lane(L_SPAN, k), -1);
    }
  }
  while (active > 1) {
    for (let k: usize = 0; k < 4; k++) {
      store<u32>(lane(LANE_PTR, k), load<i32>(lane(L_SPAN, k)) < 0 ? <u32>ZERO_BLOCK : <u32>blockOf(k));
    }
    compress4();
    for (let k: usize = 0; k < 4; k++) {
      const span = load<i32>(lane(L_SPAN, k));
      if (span < 0) continue;
      const n = load<u32>(lane(L_NEXT, k)) + 1;
      store<u32>(lane(L_NEXT, k), n);
      if (n < load<u32>(lane(L_BLOCKS, k))) continue;
      laneDigest(k, out + (<usize>span << 5));
      if (next < count) {
        const s = load<u32>(offsets + (<usize>next << 2));
        const e = load<u32>(offsets + (<usize>next << 2), 4);
        startLane(k, next, data + s, e - s);
        next++;
      } else {
        store<i32>(lane(L_SPAN, k), -1);
        active--;
      }
    }
  }
  // At most one lane is left: finish it with the scalar compressor.
  for (let k: usize = 0; k < 4; k++) {
    const span = load<i32>(lane(L_SPAN, k));
    if (span < 0) continue;
    for (let j: usize = 0; j < 8; j++) store<u32>(SOLO + (j << 2), load<u32>(STATE4 + (j << 4) + (k << 2)));
    const blocks = load<u32>(lane(L_BLOCKS, k));
    const full = load<u32>(lane(L_FULL, k));
    let n = load<u32>(lane(L_NEXT, k));
    if (n < full) {
      compressMany(SOLO, <usize>load<u32>(lane(L_SRC, k)) + (<usize>n << 6), full - n);
      n = full;
    }
    compressBlocks(SOLO, TAIL4 + (k << 7) + (<usize>(n - full) << 6), blocks - n);
    writeDigest(SOLO, out + (<usize>span << 5));
  }
}

// ---------------------------------------------------------------- self-check

const ABC: usize = memory.data<u8>([0x61, 0x62, 0x63]);
// SHA-256("abc"), FIPS 180-4 example B.1
const ABC_DIGEST: usize = memory.data<u8>([
  0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea, 0x41, 0x41, 0x40, 0xde, 0x5d, 0xae, 0x22, 0x23,
  0xb0, 0x03, 0x61, 0xa3, 0x96, 0x17, 0x7a, 0x9c, 0xb4, 0x10, 0xff, 0x61, 0xf2, 0x00, 0x15, 0xad,
]);
const CHECK_OFFSETS: usize = memory.data<u32>([0, 3, 3, 6, 9, 12]);
const CHECK_DATA: usize = memory.data<u8>([
  0x61, 0x62, 0x63, 0x61, 0x62, 0x63, 0x61, 0x62, 0x63, 0x61, 0x62, 0x63,
]);
const CHECK_OUT: usize = memory.data(32 * 5);
const SAVED_STREAM: usize = memory.data(STREAM_STATE_BYTES, 16);

/** "abc" one-shot, streamed in two pieces, and through the 4-lane batch (with an empty span). */
export function selfCheckSha256(): bool {
  sha256(ABC, 3, CHECK_OUT);
  if (memory.compare(CHECK_OUT, ABC_DIGEST, 32) != 0) return false;
  memory.copy(SAVED_STREAM, STREAM, STREAM_STATE_BYTES); // leave a host's active stream untouched
  streamInit();
  streamUpdate(ABC, 1);
  streamUpdate(ABC + 1, 2);
  streamFinal(CHECK_OUT);
  memory.copy(STREAM, SAVED_STREAM, STREAM_STATE_BYTES);
  if (memory.compare(CHECK_OUT, ABC_DIGEST, 32) != 0) return false;
  sha256Batch(CHECK_DATA, CHECK_OFFSETS, 5, CHECK_OUT);
  for (let i: usize = 0; i < 5; i++) {
    if (i == 1) continue; // the empty span
    if (memory.compare(CHECK_OUT + (i << 5), ABC_DIGEST, 32) != 0) return false;
  }
  return true;
}
