// pi-fold's Pi extension entry (package.json "pi.extensions"). Pi loads it with jiti, so the
// bindings' .ts sources and the .wasm next to them are used straight from the installed package.
import { fileURLToPath } from "node:url";
import type { ExtensionAPI } from "@earendil-works/pi-coding-agent";
import { CORE_WASM_URL, nodeCore } from "../bindings/node.ts";
import { coreLoader } from "./core.ts";
import { registerFoldTool } from "./tool/register.ts";
import { hostPiVersion, packageVersion } from "./versions.ts";

export default function piFold(pi: ExtensionAPI): void {
	registerFoldTool(pi, {
		// Loaded on first use, not here: Pi runs extension factories also for commands that start no session.
		core: coreLoader(nodeCore, fileURLToPath(CORE_WASM_URL)),
		packageVersion,
		piVersion: hostPiVersion,
	});
}
