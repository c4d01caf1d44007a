// The page's few DOM helpers: an element from a tag, attributes and children; the same for SVG.
type Child = Node | string | number | undefined | null | false;

function append(el: Element, kids: readonly Child[]): void {
	for (const k of kids) {
		if (k === undefined || k === null || k === false) continue;
		el.append(typeof k === "object" ? k : String(k));
	}
}

/** An HTML element; attributes left undefined are not set. */
export function h<K extends keyof HTMLElementTagNameMap>(
	tag: K,
	attrs: Record<string, string | number | undefined> = {},
	...kids: Child[]
): HTMLElementTagNameMap[K] {
	const el = document.createElement(tag);
	for (const [k, v] of Object.entries(attrs)) if (v !== undefined) el.setAttribute(k, String(v));
	append(el, kids);
	return el;
}

const SVG_NS = "http://www.w3.org/2000/svg";

export function s(tag: string, attrs: Record<string, string | number | undefined> = {}, ...kids: Child[]): SVGElement {
	const el = document.createElementNS(SVG_NS, tag) as SVGElement;
	for (const [k, v] of Object.entries(attrs)) if (v !== undefined) el.setAttribute(k, String(v));
	append(el, kids);
	return el;
}

export const num = (n: number) => Math.round(n).toLocaleString("en-US");

/** Dollars, with the cents a request's small cost needs: $12.34, $0.123, $0.0042. */
export function usd(n: number): string {
	const digits = n >= 1 || n === 0 ? 2 : Math.min(6, 1 - Math.floor(Math.log10(n)) + 1);
	return `$${n.toLocaleString("en-US", { minimumFractionDigits: Math.min(2, digits), maximumFractionDigits: digits })}`;
}
