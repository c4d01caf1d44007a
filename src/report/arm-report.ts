// One arm's aggregate (pi-fold, native compaction, no management...) from per-request usage records.
//
// API (pure, host-neutral):
// - `RequestRecord`: a `RequestUsage` (see price-card.ts) plus an optional `kind` label ("work", "summary"...).
//   Records are taken as the provider reports them; nothing is estimated here.
// - `ArmExtras`: optional figures an arm may carry beyond usage: commits / compactions, rewrites (attributed /
//   unattributed), planted values (visible / recovered / lost), wall clock and the manager's added time per
//   request (median / p95), requests over the context window. Absent fields render as "—" in the table.
// - `summarizeArm(name, records, card?, extras?)` -> `ArmReport`: the totals below, at the given price card
//   (or a Pricing: each record at the card of its `model`).
//   Definitions: totalTokens = Σ(input + cacheRead + cacheWrite + output); freshInput = Σ(input + cacheWrite)
//   (prompt tokens not served from the cache); billedCalls = requests that used any tokens; cost = Σ costOf;
//   pooledCacheShare = Σ cacheRead / Σ promptTokens (0 with no prompt tokens); peakPromptTokens = max promptTokens.
// - `usageFromProvider(u)`: a record from pi-ai's `Usage` shape ({input, output, cacheRead, cacheWrite}).
import { costOf, DEFAULT_PRICE_CARD, type PriceCard, type Pricing, type RequestUsage } from "./price-card.ts";

export interface RequestRecord extends RequestUsage {
	kind?: string;
	/** "provider/id" of the model the request went to, when a Pricing must choose its card. */
	model?: string;
}

export interface ArmExtras {
	/** pi-fold commits (epoch rewrites) */
	commits?: number;
	/** native compactions (summaries that replaced history) */
	compactions?: number;
	rewrites?: { attributed: number; unattributed: number };
	values?: { visible: number; recovered: number; lost: number };
	wallMs?: number;
	addedMsPerRequest?: { median: number; p95: number };
	/** requests larger than the model's context window (a real provider would refuse them) */
	overWindow?: number;
}

export interface ArmReport extends ArmExtras {
	name: string;
	requests: number;
	totalTokens: number;
	freshInput: number;
	cacheRead: number;
	cacheWrite: number;
	output: number;
	billedCalls: number;
	/** dollars */
	cost: number;
	/** Σ cacheRead / Σ promptTokens */
	pooledCacheShare: number;
	peakPromptTokens: number;
	priceCard: string;
}

/** A record from the usage shape pi-ai reports on an assistant message. */
export function usageFromProvider(
	u: { input: number; output: number; cacheRead: number; cacheWrite: number },
	kind?: string,
): RequestRecord {
	const record: RequestRecord = {
		input: u.input,
		cacheRead: u.cacheRead,
		cacheWrite: u.cacheWrite,
		output: u.output,
		promptTokens: u.input + u.cacheRead + u.cacheWrite,
	};
	if (kind !== undefined) record.kind = kind;
	return record;
}

export function summarizeArm(
	name: string,
	records: readonly RequestRecord[],
	card: PriceCard | Pricing = DEFAULT_PRICE_CARD,
	extras: ArmExtras = {},
): ArmReport {
	let input = 0;
	let cacheRead = 0;
	let cacheWrite = 0;
	let output = 0;
	let prompt = 0;
	let peak = 0;
	let billed = 0;
	let cost = 0;
	for (const r of records) {
		input += r.input;
		cacheRead += r.cacheRead;
		cacheWrite += r.cacheWrite;
		output += r.output;
		prompt += r.promptTokens;
		peak = Math.max(peak, r.promptTokens);
		if (r.promptTokens + r.output > 0) billed++;
		cost += costOf(r, card);
	}
	return {
		name,
		requests: records.length,
		totalTokens: input + cacheRead + cacheWrite + output,
		freshInput: input + cacheWrite,
		cacheRead,
		cacheWrite,
		output,
		billedCalls: billed,
		cost,
		pooledCacheShare: prompt > 0 ? cacheRead / prompt : 0,
		peakPromptTokens: peak,
		priceCard: card.name,
		...extras,
	};
}
