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

// The view's page bundle (committed too) goes beside it the same way: dist/src/view reads ../../view.
const page = new URL("../view/pi-fold-view.js", import.meta.url);
if (!existsSync(page)) {
	console.error("copy-core: view/pi-fold-view.js is missing (it is committed): rebuild it with `npm run build:view`");
	process.exit(1);
}
mkdirSync(new URL("../dist/view/", import.meta.url), { recursive: true });
copyFileSync(page, new URL("../dist/view/pi-fold-view.js", import.meta.url));
