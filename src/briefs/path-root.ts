// One directory many calls share, said once. A large consolidation's calls mostly name files under
// one project directory (`/Users/x/workspaces/repo/packages/app/…`): repeated in every tool group of
// every index line, it can take a quarter of the brief. The brief declares it once as `$R` and the
// index lines write `$R/src/main.ts`, as a shell variable reads; a reader (or index coverage) puts it back.

/** The name the brief gives the shared directory. */
export const ROOT_NAME = "$R";

/** How the brief declares it, on a line of its own. */
const DECLARED = /^\$R = (\S+)$/;

/** Directories shorter than this are not worth a declaration. */
const MIN_ROOT_CHARS = 16;

/** Characters a path does not hold: where one ends. */
const NOT_PATH = `\\s"'\`,;{}()`;
/** Absolute or home-relative paths in a text: starting a word (not the tail of a relative path). */
const PATH = new RegExp(`(?<![^${NOT_PATH}=])(?:~|/)[^${NOT_PATH}]*`, "g");

/**
 * The directory whose naming once saves the most characters over `texts` (each occurrence becomes
 * `$R`), when that saves more than the declaration costs twice over; undefined otherwise, or when a
 * text already holds `$R`.
 */
export function sharedRoot(texts: readonly string[]): string | undefined {
	if (texts.some((t) => t.includes(ROOT_NAME))) return undefined;
	const uses = new Map<string, number>();
	for (const t of texts) {
		for (const m of t.matchAll(PATH)) {
			// Every directory along the path (`cd /repo && …` names one too), long enough to be a project's.
			const path = m[0].endsWith("/") ? m[0] : `${m[0]}/`;
			for (let i = path.indexOf("/", 1); i > 0; i = path.indexOf("/", i + 1)) {
				const dir = path.slice(0, i);
				if (dir.length >= MIN_ROOT_CHARS) uses.set(dir, (uses.get(dir) ?? 0) + 1);
			}
		}
	}
	let best: { dir: string; saved: number } | undefined;
	for (const [dir, n] of uses) {
		const saved = n * (dir.length - ROOT_NAME.length);
		if (!best || saved > best.saved || (saved === best.saved && dir.length > best.dir.length)) best = { dir, saved };
	}
	return best && best.saved > 2 * codeLength(declareRoot(best.dir)) ? best.dir : undefined;
}

const codeLength = (s: string) => [...s].length;

/** The brief's line declaring `root`. */
export function declareRoot(root: string): string {
	return `${ROOT_NAME} = ${root}`;
}

const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** `text` with `root` written as `$R` wherever it is a whole directory (a path below it, or the path itself). */
export function underRoot(root: string | undefined): (text: string) => string {
	if (root === undefined) return (text) => text;
	const at = new RegExp(`(?<![^${NOT_PATH}=])${escaped(root)}(?=[/${NOT_PATH}]|$)`, "g");
	return (text) => text.replace(at, ROOT_NAME);
}

/** A brief's lines with a declared `$R` put back (the declaration itself stays as it is). */
export function rootExpanded(lines: readonly string[]): string[] {
	const root = lines.map((l) => DECLARED.exec(l)?.[1]).find((r) => r !== undefined);
	if (root === undefined) return [...lines];
	return lines.map((l) => (DECLARED.test(l) ? l : l.split(ROOT_NAME).join(root)));
}
