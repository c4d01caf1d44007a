// How a command answers a person. With a UI (the TUI, RPC mode): ctx.ui.notify. In print mode
// (`pi -p "/fold-status"`) Pi prints only the model's last answer and its notify is silent, so the
// answer goes to the terminal itself: stdout, errors to stderr. Pi has moved process.stdout.write to
// stderr for that mode (to keep stdout for its own output), so the answer is written to file
// descriptor 1 directly. JSON mode keeps stdout for its event stream: nothing is written there.
import { writeSync } from "node:fs";
import type { ExtensionContext } from "@earendil-works/pi-coding-agent";

export type Level = "info" | "warning" | "error";

export function say(ctx: Pick<ExtensionContext, "mode" | "ui">, text: string, level: Level = "info"): void {
	if (ctx.mode === "print") {
		try {
			writeSync(level === "error" ? 2 : 1, `${text}\n`);
			return;
		} catch {
			// A closed or full pipe: fall through to Pi's own channel.
		}
	}
	ctx.ui.notify(text, level);
}
