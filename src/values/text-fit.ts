// Cutting text to a budget of Unicode code points, deterministically: the brief and notice writers
// share these. Cuts never land inside a surrogate pair, and whitespace runs are collapsed to one
// space so a short excerpt spends its characters on content. Nothing here scans a whole large text
// more than once (a tool result may be megabytes).

const HIGH_SURROGATE = /[\uD800-\uDBFF]/;

/** Code points in `s` (a lone surrogate counts once). */
export function codePointLength(s: string): number {
	// Most text has no surrogate at all: the regex engine finds that out far faster than a loop.
	if (!HIGH_SURROGATE.test(s)) return s.length;
	let n = 0;
	for (let i = 0; i < s.length; i++) {
		const c = s.charCodeAt(i);
		if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
			const d = s.charCodeAt(i + 1);
			if (d >= 0xdc00 && d <= 0xdfff) i++;
		}
		n++;
	}
	return n;
}

/** The UTF-16 index just past the first `n` code points of `s` (never inside a pair). */
function headIndex(s: string, n: number): number {
	let i = 0;
	for (let k = 0; k < n && i < s.length; k++) {
		const c = s.charCodeAt(i);
		const d = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
		i += c >= 0xd800 && c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff ? 2 : 1;
	}
	return i;
}

/** The UTF-16 index where the last `n` code points of `s` begin (never inside a pair). */
function tailIndex(s: string, n: number): number {
	let i = s.length;
	for (let k = 0; k < n && i > 0; k++) {
		const d = s.charCodeAt(i - 1);
		const c = i >= 2 ? s.charCodeAt(i - 2) : 0;
		i -= d >= 0xdc00 && d <= 0xdfff && c >= 0xd800 && c <= 0xdbff ? 2 : 1;
	}
	return i;
}

/** The first `n` code points of `s`. */
export function headOf(s: string, n: number): string {
	return s.slice(0, headIndex(s, Math.max(0, n)));
}

/** The last `n` code points of `s`. */
export function tailOf(s: string, n: number): string {
	return s.slice(tailIndex(s, Math.max(0, n)));
}

/** Whitespace runs as one space, trimmed. */
export function oneLine(s: string): string {
	return s.replace(/\s+/g, " ").trim();
}

/** `s` on one line, at most `n` code points; a cut ends in "…". */
export function clip(s: string, n: number): string {
	if (n <= 0) return "";
	// Look at a bounded prefix only: collapsing never makes text longer, so 4n + 64 units suffice.
	const window = s.length > 4 * n + 64 ? s.slice(0, headIndex(s, 4 * n + 64)) : s;
	const flat = oneLine(window);
	if (window.length === s.length && codePointLength(flat) <= n) return flat;
	return `${headOf(flat, n - 1)}…`;
}

/** `s` on one line, at most `n` code points; a cut keeps both ends around a "…". */
export function clipMiddle(s: string, n: number): string {
	if (n <= 0) return "";
	if (n < 8) return clip(s, n);
	const big = s.length > 8 * n + 128;
	// A long text is only looked at near its ends (collapsing never lengthens text).
	const flat = big ? `${oneLine(headOf(s, 4 * n))} ${oneLine(tailOf(s, 4 * n))}` : oneLine(s);
	if (!big && codePointLength(flat) <= n) return flat;
	const h = Math.ceil((n - 1) / 2);
	return `${headOf(flat, h)}…${tailOf(flat, n - 1 - h)}`;
}

/** Thousands separators without a locale (toLocaleString depends on the host). */
export function count(n: number): string {
	return String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
}

/**
 * The head and tail of `s` in at most `n` code points, on one line, with the omitted middle named
 * (`… [12,345 chars omitted] …`). `total` is `s`'s code point length when the caller knows it.
 */
export function headTail(s: string, n: number, total = codePointLength(s)): string {
	if (n <= 0) return "";
	const whole = total <= 4 * n + 64 ? oneLine(s) : undefined;
	if (whole !== undefined && codePointLength(whole) <= n) return whole;
	// The marker's width depends on the omitted count, which is at most `total`.
	const markerWidth = ` … [${count(total)} chars omitted] … `.length;
	const room = n - markerWidth;
	if (room < 8) return clip(s, n);
	const h = Math.ceil(room / 2);
	const t = room - h;
	// Take raw code points, then flatten: raw counts give an exact omitted figure.
	let headRaw = h;
	let tailRaw = t;
	let head = oneLine(headOf(s, headRaw));
	let tail = oneLine(tailOf(s, tailRaw));
	// Collapsing whitespace frees room: widen the raw windows a bounded number of times.
	for (let k = 0; k < 4 && headRaw + tailRaw < total; k++) {
		const spareHead = h - codePointLength(head);
		const spareTail = t - codePointLength(tail);
		if (spareHead <= 0 && spareTail <= 0) break;
		headRaw = Math.min(total - tailRaw, headRaw + Math.max(0, spareHead));
		tailRaw = Math.min(total - headRaw, tailRaw + Math.max(0, spareTail));
		head = oneLine(headOf(s, headRaw));
		tail = oneLine(tailOf(s, tailRaw));
	}
	head = headOf(head, h);
	tail = tailOf(tail, t);
	const omitted = Math.max(0, total - headRaw - tailRaw);
	return `${head} … [${count(omitted)} chars omitted] … ${tail}`;
}

/**
 * Max-min fair integer shares of `budget` for parts wanting `demands`: no part gets more than it
 * wants, and what a small part leaves is split among the larger ones. Deterministic (ties by index).
 */
export function fairShares(demands: readonly number[], budget: number): number[] {
	const shares = demands.map(() => 0);
	const order = demands.map((_, i) => i).sort((a, b) => demands[a] - demands[b] || a - b);
	let left = Math.max(0, Math.floor(budget));
	order.forEach((i, k) => {
		const give = Math.min(Math.max(0, demands[i]), Math.floor(left / (order.length - k)));
		shares[i] = give;
		left -= give;
	});
	return shares;
}

/** Bytes of `s` as UTF-8. */
export function utf8Length(s: string): number {
	let n = 0;
	for (let i = 0; i < s.length; i++) {
		const c = s.charCodeAt(i);
		if (c < 0x80) n += 1;
		else if (c < 0x800) n += 2;
		else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
			const d = s.charCodeAt(i + 1);
			if (d >= 0xdc00 && d <= 0xdfff) {
				n += 4;
				i++;
			} else n += 3;
		} else n += 3;
	}
	return n;
}

/**
 * `shown` of `items` keeping both ends (how a span starts and how it ends): the first half, rounded
 * up, then the last; `firstCount` is where what was left out would be named.
 */
export function keepEnds<T>(items: readonly T[], shown: number): { picked: readonly T[]; firstCount: number } {
	const firstCount = Math.ceil(shown / 2);
	const picked =
		shown === items.length
			? items
			: [...items.slice(0, firstCount), ...items.slice(items.length - (shown - firstCount))];
	return { picked, firstCount };
}
