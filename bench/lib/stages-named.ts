// Which of the workload's stages the last window still names: each stage opens with its note
// ("Stage k: …", harness/workload.ts), so a window that says "Stage k" somewhere (a brief, an index
// line, or the raw entry itself) still tells the agent where stage k's work is. Read from the
// window as the lattice shows it, in the same words the model reads.
import type { SessionEntry } from "@earendil-works/pi-coding-agent";
import type { FoldLattice } from "../../src/lattice/index.ts";
import { entryText } from "../../src/session/entry-text.ts";

export interface StagesNamed {
	stages: number;
	named: number;
	/** The stages (numbered from 0) the window does not name (at most 20). */
	missing: number[];
}

export function stagesNamed(lattice: FoldLattice, sources: readonly SessionEntry[], stages: number): StagesNamed {
	const byId = new Map(sources.map((s) => [s.id, s]));
	const texts = lattice.window().map((w) => {
		if (w.type === "fold") return lattice.get(w.id)?.brief ?? "";
		const e = byId.get(w.entryId);
		return e ? entryText(JSON.stringify(e)) : "";
	});
	const window = texts.join("\n");
	const missing: number[] = [];
	for (let k = 0; k < stages; k++) if (!new RegExp(`\\bStage ${k}\\b`).test(window)) missing.push(k);
	return { stages, named: stages - missing.length, missing: missing.slice(0, 20) };
}
