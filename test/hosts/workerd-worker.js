// ES-module worker for test/workerd.test.ts. workerd hands the core over as a compiled
// WebAssembly.Module (a Wasm module binding), which is how edge workers get Wasm: no fetch, no bytes.

import { runCoreChecks } from "./core-checks.js";
import { loadCore } from "./dist/index.js";
import coreModule from "./pi-fold-core.wasm";

export default {
	async fetch(request) {
		if (new URL(request.url).pathname !== "/checks") return new Response("not found", { status: 404 });
		try {
			return Response.json({
				userAgent: navigator.userAgent,
				wasmIsModule: coreModule instanceof WebAssembly.Module,
				results: runCoreChecks(loadCore(coreModule)),
			});
		} catch (err) {
			return new Response(String(err?.stack ?? err), { status: 500 });
		}
	},
};
