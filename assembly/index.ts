// pi-fold core: the four hot paths, one file each. Every export takes pointers into
// linear memory (see scratch.ts); none allocates.
import { selfCheckLattice } from "./lattice";
import { selfCheckSelect } from "./select";
import { selfCheckSha256 } from "./sha256";
import { selfCheckTokens } from "./tokens";

export { scratch, scratchBase } from "./scratch";
export {
  sha256,
  foldIdentity,
  sha256Batch,
  streamInit,
  streamUpdate,
  streamFinal,
  streamStatePtr,
} from "./sha256";
export * from "./tokens";
export * from "./lattice";
export * from "./select";

/** Core ABI version, major << 16 | minor << 8 | patch. Bump minor on any export change. */
export function coreVersion(): u32 {
  return (1 << 16) | (2 << 8) | 0;
}

// self-check bits, one per hot path
export const SELF_CHECK_SHA256: u32 = 1;
export const SELF_CHECK_TOKENS: u32 = 2;
export const SELF_CHECK_LATTICE: u32 = 4;
export const SELF_CHECK_SELECT: u32 = 8;

/** Known-answer checks run inside the module; 0 when all pass, else the failing bits. */
export function selfCheck(): u32 {
  let failed: u32 = 0;
  if (!selfCheckSha256()) failed |= SELF_CHECK_SHA256;
  if (!selfCheckTokens()) failed |= SELF_CHECK_TOKENS;
  if (!selfCheckLattice()) failed |= SELF_CHECK_LATTICE;
  if (!selfCheckSelect()) failed |= SELF_CHECK_SELECT;
  return failed;
}
