// A child's tool calls as an index line names them: grouped by tool (`read ×3 src/{a,b}.ts; bash …`),
// every tool by name and count, then the principal arguments that name the most calls per
// character, grown fairly across the groups of several lines; what does not fit is counted.
import { clip, codePointLength } from "../values/text-fit.ts";
import { principalArgs, principalText } from "./call-args.ts";
import { factor } from "./factor.ts";

/** A call as the index reads it (the brief writer's reading of a span satisfies this). */
export interface IndexCall {
	name: string;
	/** The call's arguments as the model gave them. */
	input: unknown;
	result?: { text: string; chars: number; isError: boolean };
}

interface ToolGroup {
	name: string;
	count: number;
	/** Distinct principal arguments, most used first (ties: first used first). */
	values: { text: string; uses: number; first: number }[];
}

/** How an index line writes a principal value (a shared directory said once: path-root.ts). */
export type Naming = (text: string) => string;
export const asItIs: Naming = (text) => text;

function toolGroups(calls: readonly IndexCall[], naming: Naming): ToolGroup[] {
	const groups = new Map<string, ToolGroup & { byText: Map<string, ToolGroup["values"][number]> }>();
	calls.forEach((c, i) => {
		let g = groups.get(c.name);
		if (!g) {
			g = { name: c.name, count: 0, values: [], byText: new Map() };
			groups.set(c.name, g);
		}
		g.count++;
		const p = principalArgs(c.input)[0];
		if (!p) return;
		const text = naming(principalText(p));
		const known = g.byText.get(text);
		if (known) known.uses++;
		else {
			const v = { text, uses: 1, first: i };
			g.byText.set(text, v);
			g.values.push(v);
		}
	});
	return [...groups.values()].map(({ byText: _b, ...g }) => ({
		...g,
		values: [...g.values].sort((a, b) => b.uses - a.uses || a.first - b.first),
	}));
}

export const toolName = (name: string) => clip(name, 40);
const groupHead = (g: ToolGroup) => `${toolName(g.name)}${g.count > 1 ? ` ×${g.count}` : ""}`;

/** `name ×n values` with the `k` most used values (shown in first-use order), and how many are left. */
function groupText(g: ToolGroup, k: number): string {
	if (k === 0) return groupHead(g);
	const shown = g.values
		.slice(0, k)
		.sort((a, b) => a.first - b.first)
		.map((v) => v.text);
	const more = g.values.length - k;
	return `${groupHead(g)} ${factor(shown)}${more > 0 ? ` +${more} more` : ""}`;
}

/** Each group's shown values, grown greedily; the text of a group depends on its own state only. */
export class GroupsState {
	readonly groups: ToolGroup[];
	readonly k: number[];
	readonly #len: number[];
	#next: (number | undefined)[] = [];

	constructor(calls: readonly IndexCall[], naming: Naming = asItIs) {
		this.groups = toolGroups(calls, naming);
		this.k = this.groups.map(() => 0);
		this.#len = this.groups.map((g) => codePointLength(groupText(g, 0)));
		this.#next = this.groups.map((_, i) => this.#delta(i));
	}

	#delta(i: number): number | undefined {
		const g = this.groups[i];
		if (this.k[i] >= g.values.length) return undefined;
		return Math.max(1, codePointLength(groupText(g, this.k[i] + 1)) - this.#len[i]);
	}

	get length(): number {
		return this.#len.reduce((a, b) => a + b, 0) + 2 * Math.max(0, this.groups.length - 1);
	}

	/** The best next value (calls named per character added) that costs at most `room`. */
	best(room: number): { i: number; gain: number; cost: number } | undefined {
		let best: { i: number; gain: number; cost: number } | undefined;
		this.groups.forEach((g, i) => {
			const cost = this.#next[i];
			if (cost === undefined || cost > room) return;
			const gain = g.values[this.k[i]].uses;
			if (!best || gain * best.cost > best.gain * cost) best = { i, gain, cost };
		});
		return best;
	}

	grow(i: number): void {
		this.k[i]++;
		this.#len[i] = codePointLength(groupText(this.groups[i], this.k[i]));
		this.#next[i] = this.#delta(i);
	}

	get complete(): boolean {
		return this.groups.every((g, i) => this.k[i] >= g.values.length);
	}

	/** Calls whose principal argument the text does not show (`+n more`). */
	get unnamed(): number {
		let n = 0;
		this.groups.forEach((g, i) => {
			for (const v of g.values.slice(this.k[i])) n += v.uses;
		});
		return n;
	}

	text(): string {
		return this.groups.map((g, i) => groupText(g, this.k[i])).join("; ");
	}
}

/** Grow several groups' states within `room` code points in all, best value per character first. */
export function growAll(states: readonly GroupsState[], room: number): number {
	let left = room;
	for (;;) {
		let pick: { s: GroupsState; i: number; gain: number; cost: number } | undefined;
		for (const s of states) {
			const b = s.best(left);
			if (b && (!pick || b.gain * pick.cost > pick.gain * b.cost)) pick = { s, ...b };
		}
		if (!pick) return left;
		pick.s.grow(pick.i);
		left -= pick.cost;
	}
}

/**
 * Tool groups (`read ×3 src/{a,b}.ts; bash …`) within `n` code points: every tool by name and
 * count, then the principal arguments that name the most calls per character; what does not fit
 * is counted (`+4 more`).
 */
export function toolGroupsText(calls: readonly IndexCall[], n: number): string {
	const state = new GroupsState(calls);
	if (state.groups.length === 0 || n <= 0) return "";
	if (state.length > n) return clip(state.text(), n);
	growAll([state], n - state.length);
	return state.text();
}
