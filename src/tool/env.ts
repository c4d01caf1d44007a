// What the tool's actions may use. Injected (not imported) so tests can substitute a failing core.
import type { CoreState } from "../core.ts";

export interface ToolEnv {
	core: () => CoreState;
	packageVersion: () => string;
	piVersion: () => string | undefined;
}
