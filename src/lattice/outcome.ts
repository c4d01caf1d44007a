// Every lattice operation answers with an outcome: applied whole, or refused with a reason and
// nothing changed. Inside the lattice a refusal is thrown as `Refused` so each check reads as one
// line; the FoldLattice methods catch it at the boundary and return it as data, so nothing ever
// throws into Pi's agent loop.

export interface Refusal {
	readonly ok: false;
	readonly reason: string;
}

export type Outcome<T extends object = object> = ({ readonly ok: true } & T) | Refusal;

/** A refusal on its way to the operation boundary. */
export class Refused extends Error {
	override readonly name = "Refused";
}

export function refuse(reason: string): never {
	throw new Refused(reason);
}

/** A value for a reason text: strings quoted (and shortened), everything else by kind. */
export function show(value: unknown): string {
	if (typeof value === "string") return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
	if (typeof value === "number" || typeof value === "boolean" || value === undefined) return String(value);
	if (value === null) return "null";
	if (Array.isArray(value)) return `an array of ${value.length}`;
	return `a ${typeof value}`;
}
