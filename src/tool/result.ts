// The shapes every pi_fold_context answer shares: model-facing text plus typed details.
import type { AgentToolResult } from "@earendil-works/pi-coding-agent";
import type { StatusDetails } from "./status.ts";

/** Details of a refused call or an internal failure: nothing changed. */
export interface RefusalDetails {
	ok: false;
	action: string | null;
	refusal: string;
}

/** Pi wants one details type per tool: the union of every action's details. */
export type FoldToolDetails = StatusDetails | RefusalDetails;

export type FoldToolResult = AgentToolResult<FoldToolDetails>;

export function answer(text: string, details: FoldToolDetails, isError = false): FoldToolResult {
	return { content: [{ type: "text", text }], details, isError };
}

/** A refusal arrives as an error tool result the model can read and correct. */
export function refuse(action: string | null, reason: string): FoldToolResult {
	return answer(`pi_fold_context refused: ${reason}`, { ok: false, action, refusal: reason }, true);
}
