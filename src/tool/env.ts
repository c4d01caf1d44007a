// What the tool's actions may use. Injected (not imported) so tests can substitute a failing core.
import type { CoreState } from "../core.ts";
import type { RuntimeStatus } from "../runtime/runtime.ts";

export interface ToolEnv {
	core: () => CoreState;
	packageVersion: () => string;
	piVersion: () => string | undefined;
	/** The folding runtime's state, when a runtime runs (absent in tests of the tool alone). */
	runtime?: () => RuntimeStatus | undefined;
}
