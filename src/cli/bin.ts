#!/usr/bin/env node
// The `pi-fold` command as installed (package.json "bin"). The replay loads Pi, which needs Node
// >= 22.19; on an older Node that would fail inside an import with an unrelated message, so this file
// checks first, with nothing but launch-check.ts loaded, then hands over to cli.ts.
import { nodeVersionProblem, ownVersion } from "../replay/launch-check.ts";

const argv = process.argv.slice(2);
if (argv[0] === "--version" || argv[0] === "-V") {
	process.stdout.write(`pi-fold ${ownVersion()}\n`);
} else {
	const problem = nodeVersionProblem(process.versions.node);
	if (problem) {
		process.stderr.write(`pi-fold: ${problem}\n`);
		process.exitCode = 1;
	} else {
		await import("./cli.ts");
	}
}
