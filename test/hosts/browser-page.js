// Runs in the Chromium page (served by test/browser.test.ts): loads the core both ways a page can,
// streaming compile from fetch and a synchronous compile of the bytes, and runs the checks on each.
import { loadCore, loadCoreAsync } from "/dist/index.js";
import { runCoreChecks } from "/hosts/core-checks.js";

const WASM_URL = "/wasm/pi-fold-core.wasm";

export async function run() {
	const streamed = await loadCoreAsync(fetch(WASM_URL));
	const bytes = new Uint8Array(await (await fetch(WASM_URL)).arrayBuffer());
	return {
		userAgent: navigator.userAgent,
		// loadCoreAsync takes the streaming path only where compileStreaming exists.
		compileStreaming: typeof WebAssembly.compileStreaming === "function",
		streaming: runCoreChecks(streamed),
		sync: runCoreChecks(loadCore(bytes)),
	};
}
