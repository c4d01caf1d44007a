// Fit the token-estimator weights on the TRAIN split of the corpus against the exact
// tokenizer (gpt-tokenizer, o200k_base), print them as code for assembly/tokens.ts and its
// JS twin, and report median |relative error| per ~2 KB chunk on train and held-out.
//
//   node scripts/calibrate-tokens.ts
//
// The fit: non-negative least squares on the integer features of harness/reference/tokens-js.ts
// (identical to the core's), minimizing relative error, made robust (the corpus includes
// runic and Braille test text that no weight set should chase) by iteratively reweighted
// least squares toward least absolute relative error. Two knobs, category balance and the
// number of reweighting rounds, are chosen by 3-fold cross-validation inside train, folds
// grouped by file so near-duplicate chunks never sit on both sides. Held-out chunks are only
// ever scored, never fitted or used to choose anything.
import { encode } from "gpt-tokenizer/encoding/o200k_base";
import { loadCoreFile } from "../bindings/node.ts";
import {
	CLASS_NAMES,
	charsOver4,
	estimateFromFeatures,
	FEATURE_COUNT,
	FEATURE_NAMES,
	tokenFeatures,
	WEIGHTS,
} from "../harness/reference/tokens-js.ts";
import { buildTokenCorpus, fnv1a, median, scriptOf, type TokenCategory } from "./token-corpus.ts";

const CATEGORIES: TokenCategory[] = ["code", "json", "prose", "non-ascii"];

export interface Sample {
	category: TokenCategory;
	split: "train" | "heldout";
	file: string;
	text: string;
	tokens: number;
	features: Uint32Array;
}

/** The exact count: o200k_base, special-token text treated as ordinary text. */
export function exactTokens(text: string): number {
	return encode(text, { disallowedSpecial: new Set() }).length;
}

export function loadSamples(): Sample[] {
	const enc = new TextEncoder();
	return buildTokenCorpus().map((c) => ({
		category: c.category,
		split: c.split,
		file: c.source.slice(0, c.source.lastIndexOf("#")),
		text: c.text,
		tokens: exactTokens(c.text),
		features: tokenFeatures(enc.encode(c.text)),
	}));
}

// ---------------------------------------------------------------- linear algebra

/** Solve the symmetric system A x = b restricted to `idx` (Gaussian elimination, partial pivoting). */
function solveOn(A: number[][], b: number[], idx: number[]): number[] {
	const n = idx.length;
	const M = idx.map((i) => [...idx.map((j) => A[i][j]), b[i]]);
	for (let col = 0; col < n; col++) {
		let piv = col;
		for (let r = col + 1; r < n; r++) if (Math.abs(M[r][col]) > Math.abs(M[piv][col])) piv = r;
		[M[col], M[piv]] = [M[piv], M[col]];
		const d = M[col][col];
		if (d === 0) continue;
		for (let r = 0; r < n; r++) {
			if (r === col || M[r][col] === 0) continue;
			const f = M[r][col] / d;
			for (let k = col; k <= n; k++) M[r][k] -= f * M[col][k];
		}
	}
	const x = new Array<number>(A.length).fill(0);
	idx.forEach((i, k) => {
		x[i] = M[k][k] === 0 ? 0 : M[k][n] / M[k][k];
	});
	return x;
}

/**
 * Lawson–Hanson NNLS on the normal equations: minimize the weighted squared error subject to
 * every weight >= 0 (a feature can only add tokens, which keeps estimates monotone and sane
 * on text unlike the corpus). A tiny ridge keeps never-seen features at 0.
 */
export function nnls(A: number[][], b: number[]): number[] {
	const m = b.length;
	const R = A.map((row, i) => row.map((v, j) => (i === j ? v * (1 + 1e-9) + 1e-12 : v)));
	const passive = new Set<number>();
	let x = new Array<number>(m).fill(0);
	const tol = 1e-12 * Math.max(...b.map(Math.abs), 1e-300);
	for (let outer = 0; outer < 10 * m; outer++) {
		const grad = b.map((bi, i) => bi - R[i].reduce((s, a, j) => s + a * x[j], 0));
		let t = -1;
		for (let i = 0; i < m; i++) if (!passive.has(i) && grad[i] > tol && (t < 0 || grad[i] > grad[t])) t = i;
		if (t < 0) break;
		passive.add(t);
		for (;;) {
			const z = solveOn(R, b, [...passive]);
			let alpha = 1;
			for (const i of passive) if (z[i] <= 0) alpha = Math.min(alpha, x[i] / (x[i] - z[i]));
			if (alpha === 1) {
				x = z;
				break;
			}
			for (const i of passive) x[i] += alpha * (z[i] - x[i]);
			for (const i of [...passive]) {
				if (x[i] <= 1e-15) {
					passive.delete(i);
					x[i] = 0;
				}
			}
			if (passive.size === 0) break;
		}
	}
	return x;
}

// ---------------------------------------------------------------- fitting

export interface FitOptions {
	/** Category balance: each row weighs (1 / rows in its category) ** balance. */
	balance: number;
	/** Rounds of reweighting toward least absolute relative error (0 = plain relative least squares). */
	irls: number;
}

const IRLS_FLOOR = 0.01; // residuals under 1% count as 1% so near-exact chunks do not dominate

export function fitWeights(rows: readonly Sample[], opts: FitOptions): number[] {
	const perCategory = new Map<TokenCategory, number>();
	for (const r of rows) perCategory.set(r.category, (perCategory.get(r.category) ?? 0) + 1);
	const base = rows.map((r) => (1 / r.tokens ** 2) * (1 / perCategory.get(r.category)!) ** opts.balance);
	let rowWeight = base;
	let w: number[] = [];
	for (let round = 0; round <= opts.irls; round++) {
		const A = Array.from({ length: FEATURE_COUNT }, () => new Array<number>(FEATURE_COUNT).fill(0));
		const b = new Array<number>(FEATURE_COUNT).fill(0);
		rows.forEach((r, k) => {
			const f = r.features;
			for (let i = 0; i < FEATURE_COUNT; i++) {
				if (f[i] === 0) continue;
				const wi = rowWeight[k] * f[i];
				b[i] += wi * r.tokens;
				for (let j = 0; j < FEATURE_COUNT; j++) A[i][j] += wi * f[j];
			}
		});
		w = nnls(A, b);
		rowWeight = rows.map((r, k) => {
			const rel = Math.abs(dot(w, r.features) - r.tokens) / r.tokens;
			return base[k] / Math.max(rel, IRLS_FLOOR);
		});
	}
	return w;
}

function dot(w: readonly number[], f: Uint32Array): number {
	let s = 0;
	for (let i = 0; i < FEATURE_COUNT; i++) s += w[i] * f[i];
	return s;
}

export const relErr = (estimate: number, exact: number) => Math.abs(estimate - exact) / exact;

/** Mean over categories of the median relative error (non-ASCII at half weight: few, noisy chunks). */
function score(rows: readonly Sample[], w: readonly number[]): number {
	let total = 0;
	for (const c of CATEGORIES) {
		const errs = rows.filter((r) => r.category === c).map((r) => relErr(estimateFromFeatures(r.features, w), r.tokens));
		total += median(errs) * (c === "non-ascii" ? 0.5 : 1);
	}
	return total / 3.5;
}

/** 3-fold cross-validation inside train, folds grouped by source file. */
function crossValidate(train: readonly Sample[], opts: FitOptions): number {
	let total = 0;
	for (let fold = 0; fold < 3; fold++) {
		const inFold = (r: Sample) => (fnv1a(r.file) >>> 4) % 3 === fold;
		total += score(
			train.filter(inFold),
			fitWeights(
				train.filter((r) => !inFold(r)),
				opts,
			),
		);
	}
	return total / 3;
}

// ---------------------------------------------------------------- report

const pct = (x: number) => `${(100 * x).toFixed(2)}%`.padStart(8);

function table(samples: readonly Sample[], estimators: [string, (s: Sample) => number][]): void {
	console.log(
		`${"category".padEnd(10)} ${"split".padEnd(8)} ${"chunks".padStart(6)} ${estimators.map(([n]) => n.padStart(10)).join("")}`,
	);
	const groups: [string, (s: Sample) => boolean][] = CATEGORIES.map((c) => [c, (s) => s.category === c]);
	for (const script of ["cjk", "cyrillic", "latin", "symbols", "other"]) {
		groups.push([` ${script}`, (s) => s.category === "non-ascii" && scriptOf(s.text) === script]);
	}
	for (const split of ["train", "heldout"] as const) {
		for (const [name, keep] of groups) {
			const rows = samples.filter((s) => s.split === split && keep(s));
			if (rows.length === 0) continue;
			const cells = estimators.map(([, est]) => pct(median(rows.map((r) => relErr(est(r), r.tokens)))).padStart(10));
			console.log(`${name.padEnd(10)} ${split.padEnd(8)} ${String(rows.length).padStart(6)} ${cells.join("")}`);
		}
	}
}

function printWeights(w: readonly number[]): void {
	// Six decimals, written the way biome formats number literals, so a paste is stable.
	const lit = (x: number) => {
		const r = Number(x.toFixed(6));
		return Number.isInteger(r) ? r.toFixed(1) : String(r);
	};
	console.log("\n// ---- paste into assembly/tokens.ts (WEIGHTS) ----");
	console.log("const WEIGHTS: usize = memory.data<f64>([");
	w.forEach((x, i) => {
		console.log(`  ${lit(x)}, // ${FEATURE_NAMES[i]}`);
	});
	console.log("]);");
	console.log("\n// ---- paste into harness/reference/tokens-js.ts (WEIGHTS) ----");
	console.log(`export const WEIGHTS: readonly number[] = [${w.map(lit).join(", ")}];`);
}

function main(): void {
	const t0 = performance.now();
	const samples = loadSamples();
	const train = samples.filter((s) => s.split === "train");
	console.log(
		`corpus: ${samples.length} chunks (${train.length} train, ${samples.length - train.length} held out), tokenized in ${(performance.now() - t0).toFixed(0)} ms`,
	);

	let best: FitOptions = { balance: 0, irls: 0 };
	let bestScore = Number.POSITIVE_INFINITY;
	for (const balance of [0, 0.5, 1]) {
		for (const irls of [0, 8]) {
			const cv = crossValidate(train, { balance, irls });
			console.log(`cv balance=${balance} irls=${irls}: ${pct(cv)}`);
			if (cv < bestScore) {
				bestScore = cv;
				best = { balance, irls };
			}
		}
	}
	console.log(`chosen: balance=${best.balance} irls=${best.irls}`);
	const fitted = fitWeights(train, best).map((x) => Number(x.toFixed(6)));
	printWeights(fitted);

	// The built core, when there is one (calibrating comes before pasting and rebuilding).
	let wasm: ((text: string) => number) | undefined;
	try {
		const core = loadCoreFile();
		if (typeof core.estimateTokens === "function") wasm = (text) => core.estimateTokens(text);
	} catch {
		wasm = undefined;
	}
	const estimators: [string, (s: Sample) => number][] = [
		["fitted", (s) => estimateFromFeatures(s.features, fitted)],
		["in-code", (s) => estimateFromFeatures(s.features, WEIGHTS)],
		["chars/4", (s) => charsOver4(s.text)],
	];
	if (wasm) estimators.splice(2, 0, ["wasm", (s) => wasm(s.text)]);
	console.log("\nmedian |relative error| per chunk vs o200k_base");
	table(samples, estimators);
	if (wasm) {
		const mismatch = samples.filter((s) => wasm(s.text) !== estimateFromFeatures(s.features, WEIGHTS));
		console.log(`\nwasm vs JS twin: ${mismatch.length} mismatching chunks of ${samples.length}`);
	} else console.log("\nwasm: no built core with estimateTokens (run node scripts/build-wasm.ts)");
	console.log(`classes: ${CLASS_NAMES.join(", ")}`);
}

if (import.meta.url === `file://${process.argv[1]}`) main();
