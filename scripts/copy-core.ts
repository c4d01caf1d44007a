// The built Node entry (dist/bindings/node.js) loads the core from beside it, as bindings/node.ts
// does from the source tree: `npm run build` puts the committed core in dist/wasm after the compile
// of the bindings, so one compile serves the package and the command.
import { copyFileSync, existsSync, mkdirSync } from "node:fs";

const core = new URL("../wasm/pi-fold-core.wasm", import.meta.url);
if (!existsSync(core)) {
	console.error(
		"copy-core: wasm/pi-fold-core.wasm is missing (it is committed): restore it with `git checkout -- wasm/pi-fold-core.wasm` or rebuild it with `npm run build:wasm`",
	);
	process.exit(1);
}
mkdirSync(new URL("../dist/wasm/", import.meta.url), { recursive: true });
copyFileSync(core, new URL("../dist/wasm/pi-fold-core.wasm", import.meta.url));
