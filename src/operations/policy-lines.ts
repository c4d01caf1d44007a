// Which policy decides commits, in words: the band, or the cost model with its last reckoning in
// money (what the marks free, what they must free, the rewrite and the saving), the cold-cache
// commits and the idle refreshes stopped. The agent's status and /fold-status say it alike.
import type { PolicyStatus } from "./status.ts";

const usd = (x: number) => `$${x < 0.01 ? x.toFixed(4) : x.toFixed(2)}`;
const tokens = (n: number) => Math.round(n).toLocaleString("en-US");

const when = (turn: number | undefined) =>
	turn === undefined ? "before a prompt's first request" : `after turn ${turn}`;

/** Which policy decides commits, and (under the cost model) the next commit in money. */
export function policyLines(p: PolicyStatus, rawBatches: number): string[] {
	if (p.policy === "band") return [`policy: the band above (${p.bandWhy ?? "set"})`];
	const cache =
		p.cache.state === "warm"
			? "warm"
			: p.cache.why === "expired"
				? `cold (idle ${Math.round(p.cache.idleSeconds)} s, past its ${p.cache.ttlSeconds} s lifetime)`
				: "cold (the provider read nothing back on the last two requests)";
	const lines = [
		`policy: cost model (commits when folding pays for its rewrite; never past the band's top); the newest ${rawBatches} tool batches stay raw; prompt cache ${cache}`,
	];
	const l = p.last;
	if (l) {
		lines.push(
			`last reckoning (${when(l.turn)}): ${l.commit ? "committed" : "waited"}: ${l.why}; the marks past the working set free ~${tokens(l.freed)} tokens ` +
				`(pays off from ~${tokens(l.trigger)} at ~${tokens(l.growth)} tokens a request); rewrite ~${tokens(l.rewrite)} tokens = ${usd(l.rewriteCost)}, ` +
				`saving ${usd(l.savingPerRequest)} a request after it${Number.isFinite(l.breakEven) ? ` (paid back in ${l.breakEven} requests)` : ""}`,
		);
	}
	if (p.lastCold) {
		lines.push(
			`cold-cache commits: ${p.coldCommits}; the last ${when(p.lastCold.turn)}, ~${tokens(p.lastCold.freed)} tokens freed at no rewrite cost`,
		);
	}
	if (p.warmingStopped > 0) {
		lines.push(
			`idle cache refreshes stopped: ${p.warmingStopped} (each cost more than the prefix the next commit keeps)`,
		);
	}
	return lines;
}
