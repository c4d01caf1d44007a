// Token estimation: the core against its plain-JS twin (same features, same weights),
// chars/4, and the exact o200k tokenizer, on 1000 x ~2 KB mixed strings.
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import type { PiFoldCore } from "../../bindings/index.ts";
import { charsOver4, estimateTokensJs } from "../../harness/reference/tokens-js.ts";
import { mixedStrings } from "../lib/corpus.ts";
import { type GroupResult, ratio, runGroup, type Target, target } from "../lib/harness.ts";

export async function benchTokens(wasm: PiFoldCore): Promise<{ groups: GroupResult[]; targets: Target[] }> {
	const strings = mixedStrings(1000, 1536, 2560, 11);
	const enc = new TextEncoder();
	const bytes = strings.reduce((n, s) => n + enc.encode(s).byteLength, 0);
	const out = new Uint32Array(strings.length);
	let sink = 0;
	const g = await runGroup("estimate tokens, 1000 x ~2 KB mixed strings", bytes, [
		{ name: "core wasm estimateTokensInto", fn: () => wasm.estimateTokensInto(strings, out) },
		{
			name: "JS twin (TextEncoder + same estimator)",
			fn: () => {
				for (const s of strings) sink += estimateTokensJs(enc.encode(s));
			},
		},
		{
			name: "chars/4",
			fn: () => {
				for (const s of strings) sink += charsOver4(s);
			},
		},
		{
			name: "gpt-tokenizer o200k (exact)",
			fn: () => {
				for (const s of strings) sink += encode(s).length;
			},
		},
	]);
	if (sink < 0) console.log(sink); // keep the loops observable
	return {
		groups: [g],
		targets: [
			target(
				"estimator wasm vs its JS twin",
				ratio(g, "core wasm estimateTokensInto", "JS twin (TextEncoder + same estimator)"),
				2.5,
			),
		],
	};
}
