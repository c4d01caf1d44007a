// The in-memory fold lattice: folds over the active branch's context entries.
export { ENTRY_ROLES, type EntryRole, type LatticeEntry, type ToolBatches } from "./entries.ts";
export type { FoldChild, FoldLeaf, FoldView, RootSpan, WindowItem } from "./fold.ts";
export { BRIEF_MAX_CHARS, briefLength, FOLD_KINDS, FOLD_STATES, wellFormedText } from "./fold-values.ts";
export { FoldLattice } from "./lattice.ts";
export type { SavedFold, SavedLattice } from "./load.ts";
export type { BriefResult } from "./ops/briefs.ts";
export type { ConsolidateOptions, ConsolidateResult } from "./ops/consolidate.ts";
export type { ExtendResult } from "./ops/extend.ts";
export type { MarkManyResult, MarkOptions, MarkRequest, MarkResult, UnmarkResult } from "./ops/marks.ts";
export type { PinResult } from "./ops/pins.ts";
export type { ReboundaryOptions, ReboundaryResult } from "./ops/reboundary.ts";
export type { CommitResult, ExpandResult } from "./ops/states.ts";
export type { Outcome, Refusal } from "./outcome.ts";
export type { LatticeColumns, LatticeCore } from "./structure.ts";
export type { LatticeSnapshot } from "./views.ts";
