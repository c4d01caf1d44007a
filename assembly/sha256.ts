// SHA-256 (FIPS 180-4): one-shot, streaming, and a 4-lane SIMD multi-buffer batch.
// The batch keeps four independent messages in the four 32-bit lanes of each v128
// and refills a lane as soon as its message ends, so lanes stay busy whatever the
// span lengths are. 4 lanes, not 8: an 8-lane variant was measured slower here
// (register spills).

// Round constants.
const K: usize = memory.data<u32>([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

// Initial hash value.
const IV: usize = memory.data<u32>([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);

export const DIGEST_BYTES: u32 = 32;

// ---------------------------------------------------------------- scalar

const W: usize = memory.data(64 * 4);
const TAIL: usize = memory.data(128);

@inline function s0(x: u32): u32 {
  return rotr<u32>(x, 7) ^ rotr<u32>(x, 18) ^ (x >>> 3);
}
@inline function s1(x: u32): u32 {
  return rotr<u32>(x, 17) ^ rotr<u32>(x, 19) ^ (x >>> 10);
}

/** Compress `blocks` consecutive 64-byte blocks at `block` into the 8-word state at `state`. */
function compressBlocks(state: usize, block: usize, blocks: u32): void {
  let a = load<u32>(state, 0);
  let b = load<u32>(state, 4);
  let c = load<u32>(state, 8);
  let d = load<u32>(state, 12);
  let e = load<u32>(state, 16);
  let f = load<u32>(state, 20);
  let g = load<u32>(state, 24);
  let h = load<u32>(state, 28);
  for (let n: u32 = 0; n < blocks; n++) {
    const p = block + (<usize>n << 6);
    for (let i: usize = 0; i < 16; i++) store<u32>(W + (i << 2), bswap<u32>(load<u32>(p + (i << 2))));
    for (let i: usize = 16; i < 64; i++) {
      const q = W + (i << 2);
      store<u32>(q, load<u32>(q - 64) + s0(load<u32>(q - 60)) + load<u32>(q - 28) + s1(load<u32>(q - 8)));
    }
    const a0 = a, b0 = b, c0 = c, d0 = d, e0 = e, f0 = f, g0 = g, h0 = h;
    // 8 rounds per iteration with the working variables renamed instead of shifted.
    for (let i: usize = 0; i < 64; i += 8) {
      {
        const t1 = h + (rotr<u32>(e, 6) ^ rotr<u32>(e, 11) ^ rotr<u32>(e, 25)) + ((e & f) ^ (~e & g)) + load<u32>(K + ((i + 0) << 2)) + load<u32>(W + ((i + 0) << 2));
        d += t1;
        h = t1 + (rotr<u32>(a, 2) ^ rotr<u32>(a, 13) ^ rotr<u32>(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      }
      {
        const t1 = g + (rotr<u32>(d, 6) ^ rotr<u32>(d, 11) ^ rotr<u32>(d, 25)) + ((d & e) ^ (~d & f)) + load<u32>(K + ((i + 1) << 2)) + load<u32>(W + ((i + 1) << 2));
        c += t1;
        g = t1 + (rotr<u32>(h, 2) ^ rotr<u32>(h, 13) ^ rotr<u32>(h, 22)) + ((h & a) ^ (h & b) ^ (a & b));
      }
      {
        const t1 = f + (rotr<u32>(c, 6) ^ rotr<u32>(c, 11) ^ rotr<u32>(c, 25)) + ((c & d) ^ (~c & e)) + load<u32>(K + ((i + 2) << 2)) + load<u32>(W + ((i + 2) << 2));
        b += t1;
        f = t1 + (rotr<u32>(g, 2) ^ rotr<u32>(g, 13) ^ rotr<u32>(g, 22)) + ((g & h) ^ (g & a) ^ (h & a));
      }
      {
        const t1 = e + (rotr<u32>(b, 6) ^ rotr<u32>(b, 11) ^ rotr<u32>(b, 25)) + ((b & c) ^ (~b & d)) + load<u32>(K + ((i + 3) << 2)) + load<u32>(W + ((i + 3) << 2));
        a += t1;
        e = t1 + (rotr<u32>(f, 2) ^ rotr<u32>(f, 13) ^ rotr<u32>(f, 22)) + ((f & g) ^ (f & h) ^ (g & h));
      }
      {
        const t1 = d + (rotr<u32>(a, 6) ^ rotr<u32>(a, 11) ^ rotr<u32>(a, 25)) + ((a & b) ^ (~a & c)) + load<u32>(K + ((i + 4) << 2)) + load<u32>(W + ((i + 4) << 2));
        h += t1;
        d = t1 + (rotr<u32>(e, 2) ^ rotr<u32>(e, 13) ^ rotr<u32>(e, 22)) + ((e & f) ^ (e & g) ^ (f & g));
      }
      {
        const t1 = c + (rotr<u32>(h, 6) ^ rotr<u32>(h, 11) ^ rotr<u32>(h, 25)) + ((h & a) ^ (~h & b)) + load<u32>(K + ((i + 5) << 2)) + load<u32>(W + ((i + 5) << 2));
        g += t1;
        c = t1 + (rotr<u32>(d, 2) ^ rotr<u32>(d, 13) ^ rotr<u32>(d, 22)) + ((d & e) ^ (d & f) ^ (e & f));
      }
      {
        const t1 = b + (rotr<u32>(g, 6) ^ rotr<u32>(g, 11) ^ rotr<u32>(g, 25)) + ((g & h) ^ (~g & a)) + load<u32>(K + ((i + 6) << 2)) + load<u32>(W + ((i + 6) << 2));
        f += t1;
        b = t1 + (rotr<u32>(c, 2) ^ rotr<u32>(c, 13) ^ rotr<u32>(c, 22)) + ((c & d) ^ (c & e) ^ (d & e));
      }
      {
        const t1 = a + (rotr<u32>(f, 6) ^ rotr<u32>(f, 11) ^ rotr<u32>(f, 25)) + ((f & g) ^ (~f & h)) + load<u32>(K + ((i + 7) << 2)) + load<u32>(W + ((i + 7) << 2));
        e += t1;
        a = t1 + (rotr<u32>(b, 2) ^ rotr<u32>(b, 13) ^ rotr<u32>(b, 22)) + ((b & c) ^ (b & d) ^ (c & d));
      }
    }
    a += a0; b += b0; c += c0; d += d0; e += e0; f += f0; g += g0; h += h0;
  }
  store<u32>(state, a, 0);
  store<u32>(state, b, 4);
  store<u32>(state, c, 8);
  store<u32>(state, d, 12);
  store<u32>(state, e, 16);
  store<u32>(state, f, 20);
  store<u32>(state, g, 24);
  store<u32>(state, h, 28);
}

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
const STREAM: usize = memory.data(112, 16);
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
const W4: usize = memory.data(64 * 16, 16);
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

@inline function rotv(x: v128, n: i32): v128 {
  return v128.or(i32x4.shr_u(x, n), i32x4.shl(x, 32 - n));
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
  for (let i: usize = 16; i < 64; i++) {
    const q = W4 + (i << 4);
    const w15 = v128.load(q - 240);
    const w2 = v128.load(q - 32);
    const sg0 = v128.xor(v128.xor(rotv(w15, 7), rotv(w15, 18)), i32x4.shr_u(w15, 3));
    const sg1 = v128.xor(v128.xor(rotv(w2, 17), rotv(w2, 19)), i32x4.shr_u(w2, 10));
    v128.store(q, i32x4.add(i32x4.add(v128.load(q - 256), sg0), i32x4.add(v128.load(q - 112), sg1)));
  }
  let a = v128.load(STATE4, 0);
  let b = v128.load(STATE4, 16);
  let c = v128.load(STATE4, 32);
  let d = v128.load(STATE4, 48);
  let e = v128.load(STATE4, 64);
  let f = v128.load(STATE4, 80);
  let g = v128.load(STATE4, 96);
  let h = v128.load(STATE4, 112);
  // 8 rounds per iteration with the working variables renamed instead of shifted.
  for (let i: usize = 0; i < 64; i += 8) {
    {
      const kw = i32x4.add(i32x4.splat(load<u32>(K + ((i + 0) << 2))), v128.load(W4 + ((i + 0) << 4)));
      const t1 = i32x4.add(i32x4.add(h, v128.xor(v128.xor(rotv(e, 6), rotv(e, 11)), rotv(e, 25))), i32x4.add(v128.bitselect(f, g, e), kw));
      d = i32x4.add(d, t1);
      h = i32x4.add(t1, i32x4.add(v128.xor(v128.xor(rotv(a, 2), rotv(a, 13)), rotv(a, 22)), v128.bitselect(c, b, v128.xor(a, b))));
    }
    {
      const kw = i32x4.add(i32x4.splat(load<u32>(K + ((i + 1) << 2))), v128.load(W4 + ((i + 1) << 4)));
      const t1 = i32x4.add(i32x4.add(g, v128.xor(v128.xor(rotv(d, 6), rotv(d, 11)), rotv(d, 25))), i32x4.add(v128.bitselect(e, f, d), kw));
      c = i32x4.add(c, t1);
      g = i32x4.add(t1, i32x4.add(v128.xor(v128.xor(rotv(h, 2), rotv(h, 13)), rotv(h, 22)), v128.bitselect(b, a, v128.xor(h, a))));
    }
    {
      const kw = i32x4.add(i32x4.splat(load<u32>(K + ((i + 2) << 2))), v128.load(W4 + ((i + 2) << 4)));
      const t1 = i32x4.add(i32x4.add(f, v128.xor(v128.xor(rotv(c, 6), rotv(c, 11)), rotv(c, 25))), i32x4.add(v128.bitselect(d, e, c), kw));
      b = i32x4.add(b, t1);
      f = i32x4.add(t1, i32x4.add(v128.xor(v128.xor(rotv(g, 2), rotv(g, 13)), rotv(g, 22)), v128.bitselect(a, h, v128.xor(g, h))));
    }
    {
      const kw = i32x4.add(i32x4.splat(load<u32>(K + ((i + 3) << 2))), v128.load(W4 + ((i + 3) << 4)));
      const t1 = i32x4.add(i32x4.add(e, v128.xor(v128.xor(rotv(b, 6), rotv(b, 11)), rotv(b, 25))), i32x4.add(v128.bitselect(c, d, b), kw));
      a = i32x4.add(a, t1);
      e = i32x4.add(t1, i32x4.add(v128.xor(v128.xor(rotv(f, 2), rotv(f, 13)), rotv(f, 22)), v128.bitselect(h, g, v128.xor(f, g))));
    }
    {
      const kw = i32x4.add(i32x4.splat(load<u32>(K + ((i + 4) << 2))), v128.load(W4 + ((i + 4) << 4)));
      const t1 = i32x4.add(i32x4.add(d, v128.xor(v128.xor(rotv(a, 6), rotv(a, 11)), rotv(a, 25))), i32x4.add(v128.bitselect(b, c, a), kw));
      h = i32x4.add(h, t1);
      d = i32x4.add(t1, i32x4.add(v128.xor(v128.xor(rotv(e, 2), rotv(e, 13)), rotv(e, 22)), v128.bitselect(g, f, v128.xor(e, f))));
    }
    {
      const kw = i32x4.add(i32x4.splat(load<u32>(K + ((i + 5) << 2))), v128.load(W4 + ((i + 5) << 4)));
      const t1 = i32x4.add(i32x4.add(c, v128.xor(v128.xor(rotv(h, 6), rotv(h, 11)), rotv(h, 25))), i32x4.add(v128.bitselect(a, b, h), kw));
      g = i32x4.add(g, t1);
      c = i32x4.add(t1, i32x4.add(v128.xor(v128.xor(rotv(d, 2), rotv(d, 13)), rotv(d, 22)), v128.bitselect(f, e, v128.xor(d, e))));
    }
    {
      const kw = i32x4.add(i32x4.splat(load<u32>(K + ((i + 6) << 2))), v128.load(W4 + ((i + 6) << 4)));
      const t1 = i32x4.add(i32x4.add(b, v128.xor(v128.xor(rotv(g, 6), rotv(g, 11)), rotv(g, 25))), i32x4.add(v128.bitselect(h, a, g), kw));
      f = i32x4.add(f, t1);
      b = i32x4.add(t1, i32x4.add(v128.xor(v128.xor(rotv(c, 2), rotv(c, 13)), rotv(c, 22)), v128.bitselect(e, d, v128.xor(c, d))));
    }
    {
      const kw = i32x4.add(i32x4.splat(load<u32>(K + ((i + 7) << 2))), v128.load(W4 + ((i + 7) << 4)));
      const t1 = i32x4.add(i32x4.add(a, v128.xor(v128.xor(rotv(f, 6), rotv(f, 11)), rotv(f, 25))), i32x4.add(v128.bitselect(g, h, f), kw));
      e = i32x4.add(e, t1);
      a = i32x4.add(t1, i32x4.add(v128.xor(v128.xor(rotv(b, 2), rotv(b, 13)), rotv(b, 22)), v128.bitselect(d, c, v128.xor(b, c))));
    }
  }
  v128.store(STATE4, i32x4.add(a, v128.load(STATE4, 0)), 0);
  v128.store(STATE4, i32x4.add(b, v128.load(STATE4, 16)), 16);
  v128.store(STATE4, i32x4.add(c, v128.load(STATE4, 32)), 32);
  v128.store(STATE4, i32x4.add(d, v128.load(STATE4, 48)), 48);
  v128.store(STATE4, i32x4.add(e, v128.load(STATE4, 64)), 64);
  v128.store(STATE4, i32x4.add(f, v128.load(STATE4, 80)), 80);
  v128.store(STATE4, i32x4.add(g, v128.load(STATE4, 96)), 96);
  v128.store(STATE4, i32x4.add(h, v128.load(STATE4, 112)), 112);
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
const SAVED_STREAM: usize = memory.data(112, 16);

/** "abc" one-shot, streamed in two pieces, and through the 4-lane batch (with an empty span). */
export function selfCheckSha256(): bool {
  sha256(ABC, 3, CHECK_OUT);
  if (memory.compare(CHECK_OUT, ABC_DIGEST, 32) != 0) return false;
  memory.copy(SAVED_STREAM, STREAM, 112); // leave a host's active stream untouched
  streamInit();
  streamUpdate(ABC, 1);
  streamUpdate(ABC + 1, 2);
  streamFinal(CHECK_OUT);
  memory.copy(STREAM, SAVED_STREAM, 112);
  if (memory.compare(CHECK_OUT, ABC_DIGEST, 32) != 0) return false;
  sha256Batch(CHECK_DATA, CHECK_OFFSETS, 5, CHECK_OUT);
  for (let i: usize = 0; i < 5; i++) {
    if (i == 1) continue; // the empty span
    if (memory.compare(CHECK_OUT + (i << 5), ABC_DIGEST, 32) != 0) return false;
  }
  return true;
}
