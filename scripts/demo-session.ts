// Records a short real Pi session offline, for the demo when no session file is at hand:
// Pi 1.6's AgentSession with a scripted faux model that reads, lists and greps real files.

import { fileURLToPath } from "node:url";
import { fauxAssistantMessage, fauxText, fauxToolCall } from "@earendil-works/pi-ai";
import { makeSession } from "../harness/pi-harness.ts";

export async function recordDemoSession(): Promise<string> {
	const cwd = fileURLToPath(new URL("../node_modules/@earendil-works/pi-tui/dist/", import.meta.url));
	const t = await makeSession({ cwd, persist: true });
	const files = ["tui.js", "terminal.js", "components/editor.js", "components/select-list.js", "utils.js"];
	t.script([
		...files.map((path, i) =>
			fauxAssistantMessage(
				[
					fauxText(`Reading ${path}.`),
					fauxToolCall("read", { path }, { id: `r${i}` }),
					fauxToolCall("ls", { path: "." }, { id: `l${i}` }),
				],
				{ stopReason: "toolUse" },
			),
		),
		fauxAssistantMessage(fauxToolCall("bash", { command: "wc -l *.js | tail -1" }, { id: "b0" }), {
			stopReason: "toolUse",
		}),
		fauxAssistantMessage(fauxText("Read the TUI core files; ready for the next step.")),
	]);
	await t.session.prompt("Read the main TUI files and summarize how rendering works.");
	const file = t.session.sessionFile;
	t.dispose();
	if (!file) throw new Error("Pi did not write a session file");
	return file;
}
