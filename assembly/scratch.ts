// One growable scratch region after the static data. The host lays out each call's
// inputs and outputs in it, so no call allocates. The core never uses managed memory:
// it is built with the stub runtime, and the build fails if an allocator is reachable.

/** Start of the scratch region (16-byte aligned, right after static data). */
export function scratchBase(): usize {
  return (__heap_base + 15) & ~(<usize>15);
}

/**
 * Make sure `bytes` of scratch exist and return the region's start, or 0 when memory
 * cannot grow that far. Growing detaches the host's views of `memory.buffer`.
 */
export function scratch(bytes: u32): usize {
  const base = scratchBase();
  const need = <u64>base + <u64>bytes;
  const have = <u64>memory.size() << 16;
  if (need > have) {
    const pages = <i32>((need - have + 0xffff) >> 16);
    if (memory.grow(pages) < 0) return 0;
  }
  return base;
}
