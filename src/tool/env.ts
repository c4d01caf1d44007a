// What the tool's actions may use. Injected (not imported) so tests can substitute a failing core.
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";
import type { FoldActions } from "../operations/actions.ts";
import type { CoreState } from "../operations/core-report.ts";
import type { RuntimeStatus } from "../operations/status.ts";

export interface ToolEnv {
	core: () => CoreState;
	packageVersion: () => string;
	piVersion: () => string | undefined;
	/** The folding runtime's state, when a runtime runs (absent in tests of the tool alone). */
	runtime?: () => RuntimeStatus | undefined;
	/** The runtime's operations on folds, when a runtime runs. */
	actions?: () => FoldActions | undefined;
}

/** The call being answered: its id (a peek follows its own result) and Pi's context (model, session). */
export interface ToolCall {
	toolCallId: string;
	ctx?: ExtensionContext;
}
