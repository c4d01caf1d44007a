// The three lines the demo starts with, before any table: what pi-fold kept, what Pi's native
// compaction lost, and what pi-fold cost, each against native, in plain words from one run's figures.
import type { ArmReport } from "../../src/report/arm-report.ts";
import type { SessionResult } from "./session-compare.ts";

const int = (n: number) => Math.round(n).toLocaleString("en-US");
const usd = (x: number) => `$${x.toFixed(2)}`;
const times = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}x` : "n/a");
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function values(a: ArmReport): { visible: number; recovered: number; lost: number } {
	return a.values ?? { visible: 0, recovered: 0, lost: 0 };
}

export function leadLines(r: SessionResult): string[] {
	const fold = r.reports["pi-fold"];
	const native = r.reports.native;
	const n = r.values.length;
	const f = values(fold);
	const v = values(native);
	const kept = f.visible + f.recovered;
	const compactions = native.compactions ?? 0;
	return [
		`Kept: with pi-fold, ${kept} of the ${n} values planted along the session could still be read ` +
			`(${f.visible} in the window, ${f.recovered} read back byte for byte from its fold store).`,
		`Native lost: with Pi's own compaction, ${v.lost} of the ${n} ${v.lost === 1 ? "was" : "were"} gone for good` +
			(compactions === 0
				? " (it never compacted in this run)."
				: ` (its ${plural(compactions, "summary", "summaries")} dropped them; no original is kept to read back).`),
		`Cost: pi-fold ${usd(fold.cost)} vs native ${usd(native.cost)} (${times(fold.cost, native.cost)}); ` +
			`tokens sent ${int(fold.totalTokens)} vs ${int(native.totalTokens)} (${times(fold.totalTokens, native.totalTokens)}); ` +
			`largest request ${int(fold.peakPromptTokens)} vs ${int(native.peakPromptTokens)} tokens.`,
	];
}
