// `pi-fold peek SESSION ID`: one fold's exact originals, read from the store beside the session file
// and verified by SHA-256, without Pi. The text view is the one the agent's peek shows (each entry
// with a header line, nested folds marked); --raw prints the exact session-file lines instead.
import { entryText } from "../session/entry-text.ts";
import { VIEW_SEPARATOR, viewLayout } from "../session/fold-source.ts";
import { type SessionFolds, verifiedFold } from "./session-folds.ts";

interface PeekCommand {
	id: string;
	/** The leaves as the exact session-file lines they were, one per line. */
	raw: boolean;
}

export function peekOutput(s: SessionFolds, cmd: PeekCommand): string {
	const fold = verifiedFold(s, cmd.id);
	const decoder = new TextDecoder("utf-8", { fatal: true });
	const texts = fold.leaves.map((l) => decoder.decode(l.bytes));
	if (cmd.raw) return texts.join("\n");
	const kindOf = (id: string) => {
		if (id === fold.record.id) return fold.record.kind;
		const hash = s.records.get(id);
		return hash === undefined ? "fold" : s.store.readRecord(hash).kind;
	};
	const parts = viewLayout(
		fold.record.id,
		fold.leaves.map((l) => l.fold),
		{ get: (id) => ({ kind: kindOf(id), state: "folded" }) },
	);
	const body = parts.map((p) => ("marker" in p ? p.marker : entryText(texts[p.leaf])));
	const bytes = fold.leaves.reduce((n, l) => n + l.bytes.length, 0);
	const head = [
		`fold ${fold.record.id} (${fold.record.kind}): ${fold.leaves.length} entries, ${bytes} bytes, verified by SHA-256 from ${s.store.root}`,
		`brief: ${fold.record.brief}`,
	];
	return [head.join("\n"), ...body].join(VIEW_SEPARATOR);
}
