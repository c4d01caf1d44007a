// The Pi session harness that tests, benchmarks and the demo share: a real Pi AgentSession, fully
// offline, answered by pi-ai's scripted faux provider. Every request the provider receives is
// captured, so a caller can read exactly what the model saw (tool results included). Nothing
// touches ~/.pi: agent, session and work dirs are temp dirs.
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
	type FauxModelDefinition,
	type FauxProviderHandle,
	type FauxResponseStep,
	fauxProvider,
	type Message,
	type ToolResultMessage,
	type TranscriptContext,
} from "@earendil-works/pi-ai";
import {
	type AgentSession,
	createAgentSession,
	DefaultResourceLoader,
	type ExtensionError,
	type ExtensionFactory,
	ModelRuntime,
	SessionManager,
	SettingsManager,
} from "@earendil-works/pi-coding-agent";

export const FAUX_PROVIDER = "pi-fold-faux";
export const FAUX_MODEL = "faux-1";

const tempDirs: string[] = [];

/** A fresh temp dir, removed by removeTempDirs() (call it from afterAll). */
export function tempDir(prefix: string): string {
	const dir = mkdtempSync(join(tmpdir(), `pi-fold-${prefix}-`));
	tempDirs.push(dir);
	return dir;
}

export function removeTempDirs(): void {
	for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** The variables that keep Pi offline, quiet and away from the real home dir. */
export interface PiEnv {
	HOME: string;
	PI_CODING_AGENT_DIR: string;
	PI_OFFLINE: "1";
	PI_SKIP_VERSION_CHECK: "1";
	PI_TELEMETRY: "0";
	/** pi-fold's settings file lives under it: a test never reads the real one. */
	XDG_CONFIG_HOME: string;
}

/** Fresh temp HOME and agent dir plus the offline switches, for a child process or this one. */
export function piEnv(): PiEnv {
	const root = tempDir("env");
	const env: PiEnv = {
		HOME: join(root, "home"),
		PI_CODING_AGENT_DIR: join(root, "agent"),
		PI_OFFLINE: "1",
		PI_SKIP_VERSION_CHECK: "1",
		PI_TELEMETRY: "0",
		XDG_CONFIG_HOME: join(root, "config"),
	};
	mkdirSync(env.HOME, { recursive: true });
	mkdirSync(env.PI_CODING_AGENT_DIR, { recursive: true });
	return env;
}

let isolated: PiEnv | undefined;

/** Point this test process at a temp HOME/agent dir once (vitest runs each file in its own fork). */
function isolateProcess(): PiEnv {
	isolated ??= piEnv();
	Object.assign(process.env, isolated);
	return isolated;
}

/** One provider request as the faux provider received it. */
interface CapturedRequest {
	context: TranscriptContext;
	sessionId: string | undefined;
}

/** A model's cost as Pi's catalog has it: pi-ai's faux definition types it without `tiers`, and passes them on. */
export type FauxCost = NonNullable<FauxModelDefinition["cost"]> & {
	tiers?: { inputTokensAbove: number; input: number; output: number; cacheRead: number; cacheWrite: number }[];
};

export interface SessionOptions {
	/** Inline extensions, loaded as Pi loads extension factories. */
	extensions?: ExtensionFactory[];
	/** Extension sources Pi resolves and loads itself (a package folder: its `pi.extensions`, with jiti), as `pi -e` does. */
	extensionPaths?: string[];
	/**
	 * Pi's `tools` selection. Default: read, bash and ls plus every extension tool (a list of only
	 * +/- entries edits the default set; a plain list would be an allowlist hiding extension tools).
	 * grep/find need rg/fd, which the machine may lack.
	 */
	tools?: string[];
	contextWindow?: number;
	maxTokens?: number;
	/** The faux model's catalog cost ($ per M tokens), price tiers included (Pi's ModelCost). */
	cost?: FauxCost;
	/** The faux model's declared prompt cache lifetimes (seconds), as a catalog model declares them. */
	promptCache?: { short?: number; long?: number };
	/** More models of the faux provider (for a model switch: `session.setModel`). */
	extraModels?: (Omit<FauxModelDefinition, "cost"> & { cost?: FauxCost })[];
	/** Working dir for the session's tools; default: an empty temp dir. */
	cwd?: string;
	/** Settings overrides (merged over the offline defaults). */
	settings?: Record<string, unknown>;
	/** Write the session to a .jsonl in a temp session dir (default: in memory). */
	persist?: boolean;
	/** Resume this session file instead of starting a new session (implies persist). */
	open?: string;
	/** The session directory (default: a fresh temp dir). */
	sessionDir?: string;
}

export interface TestSession {
	session: AgentSession;
	faux: FauxProviderHandle;
	/** Every request, in order, captured before the scripted step answers it. */
	captured: CapturedRequest[];
	/** Extension errors Pi reported (a healthy run leaves this empty). */
	extensionErrors: ExtensionError[];
	/** Replace the scripted responses; each step records its request first. */
	script(steps: FauxResponseStep[]): void;
	append(steps: FauxResponseStep[]): void;
	agentDir: string;
	sessionDir: string;
	cwd: string;
	dispose(): void;
}

export async function makeSession(opts: SessionOptions = {}): Promise<TestSession> {
	isolateProcess();
	const agentDir = tempDir("agent");
	const sessionDir = opts.sessionDir ?? tempDir("sessions");
	const cwd = opts.cwd ?? tempDir("work");
	const faux = fauxProvider({
		provider: FAUX_PROVIDER,
		api: FAUX_PROVIDER,
		models: [
			{
				id: FAUX_MODEL,
				contextWindow: opts.contextWindow ?? 128_000,
				maxTokens: opts.maxTokens ?? 4096,
				...(opts.cost ? { cost: opts.cost } : {}),
			},
			...(opts.extraModels ?? []),
		],
		tokenSize: { min: 64, max: 64 }, // fewer stream deltas, faster runs
	});
	const modelRuntime = await ModelRuntime.create({
		authPath: join(agentDir, "auth.json"),
		modelsPath: null,
		refreshOnCreate: false,
	});
	modelRuntime.registerNativeProvider(faux.provider);
	const model = modelRuntime.getModel(FAUX_PROVIDER, FAUX_MODEL);
	if (!model) throw new Error(`faux model ${FAUX_PROVIDER}/${FAUX_MODEL} did not register`);
	if (opts.promptCache) model.promptCache = { ...opts.promptCache };
	const settingsManager = SettingsManager.inMemory({
		cacheWarming: "off", // warm-up requests would consume scripted responses
		retry: { enabled: false }, // an exhausted script should fail fast, not back off
		...opts.settings,
	} as Parameters<typeof SettingsManager.inMemory>[0]);
	const resourceLoader = new DefaultResourceLoader({
		cwd,
		agentDir,
		settingsManager,
		noExtensions: true, // no discovery: only the inline factories load
		noSkills: true,
		noPromptTemplates: true,
		noThemes: true,
		noContextFiles: true,
		disabledBuiltinExtensions: ["mcp", "codemode", "tool_search"],
		extensionFactories: opts.extensions ?? [],
		additionalExtensionPaths: opts.extensionPaths ?? [],
	});
	await resourceLoader.reload();
	const sessionManager = opts.open
		? SessionManager.open(opts.open, sessionDir)
		: opts.persist
			? SessionManager.create(cwd, sessionDir)
			: SessionManager.inMemory(cwd);
	const { session, extensionsResult } = await createAgentSession({
		cwd,
		agentDir,
		modelRuntime,
		model,
		thinkingLevel: "off",
		resourceLoader,
		sessionManager,
		settingsManager,
		tools: opts.tools ?? ["-edit", "-write", "+ls"],
	});
	if (extensionsResult.errors.length > 0) {
		throw new Error(`extensions failed to load: ${JSON.stringify(extensionsResult.errors)}`);
	}
	const extensionErrors: ExtensionError[] = [];
	// In the SDK, session_start fires only here.
	await session.bindExtensions({ onError: (e) => void extensionErrors.push(e) });
	const captured: CapturedRequest[] = [];
	const capture =
		(step: FauxResponseStep): FauxResponseStep =>
		(context, options, state, m) => {
			captured.push({ context: structuredClone(context), sessionId: options?.sessionId });
			return typeof step === "function" ? step(context, options, state, m) : step;
		};
	return {
		session,
		faux,
		captured,
		extensionErrors,
		script: (steps) => faux.setResponses(steps.map(capture)),
		append: (steps) => faux.appendResponses(steps.map(capture)),
		agentDir,
		sessionDir,
		cwd,
		dispose: () => session.dispose(),
	};
}

/**
 * A prompt cache that expires: the faux provider reads back the previous request's prefix only when
 * it went out within `ttlSeconds` of this one by `clock` (a simulation's time); past that, the
 * request is written to the cache whole, as a provider whose entry expired would bill it. The
 * provider's cache is keyed by session id, so an expiry starts a new key.
 */
export function expireCache(h: Pick<TestSession, "faux">, ttlSeconds: number, clock: () => number): void {
	const provider = h.faux.provider as unknown as Record<"stream" | "streamSimple", (...a: unknown[]) => unknown>;
	let last: number | undefined;
	let epoch = 0;
	const keyed = (options: unknown): unknown => {
		const o = options as { sessionId?: string } | undefined;
		if (!o?.sessionId) return options;
		const now = clock();
		if (last !== undefined && now - last > ttlSeconds * 1000) epoch++;
		last = now;
		return { ...o, sessionId: `${o.sessionId}#${epoch}` };
	};
	for (const name of ["stream", "streamSimple"] as const) {
		const original = provider[name];
		provider[name] = (model: unknown, context: unknown, options: unknown) => original(model, context, keyed(options));
	}
}

/** The text blocks of a message, joined. */
export function textOf(message: Pick<Message, "content">): string {
	const { content } = message;
	if (typeof content === "string") return content;
	return content.map((block) => (block.type === "text" ? block.text : "")).join("");
}

/** The tool result answering one tool call, in a request's or a session's messages. */
export function toolResultFor(messages: readonly unknown[], toolCallId: string): ToolResultMessage | undefined {
	return messages.find(
		(m): m is ToolResultMessage =>
			typeof m === "object" &&
			m !== null &&
			(m as { role?: unknown }).role === "toolResult" &&
			(m as { toolCallId?: unknown }).toolCallId === toolCallId,
	);
}
