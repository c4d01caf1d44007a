// The small seeded generator the property tests draw their cases from, so a failing seed replays.

/** xorshift32 from `seed` (0 starts from 1): each call returns an integer in [0, k). */
export function seededInts(seed: number): (k: number) => number {
	let x = seed >>> 0 || 1;
	return (k: number) => {
		x ^= x << 13;
		x ^= x >>> 17;
		x ^= x << 5;
		return (x >>> 0) % k;
	};
}
