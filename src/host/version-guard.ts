// The version guard: pi-fold folds through Pi's `context_edit` entries, which Pi 1.6.0
// introduced. On an older Pi the extension refuses to load (Pi reports a throwing factory as a
// load failure) with a message naming the version it needs. The capability is what counts: a
// version string alone could be patched or missing, so the session manager's `appendContextEdit`
// decides and the version only makes the message precise.

export const REQUIRED_PI_VERSION = "1.6.0";

/** What the guard reads from the host module (`@earendil-works/pi-coding-agent` as Pi maps it). */
interface PiHost {
	VERSION?: unknown;
	SessionManager?: unknown;
}

type HostCheck = { ok: true; version: string | undefined } | { ok: false; reason: string };

function hasContextEdit(sessionManager: unknown): boolean {
	if (typeof sessionManager !== "function") return false;
	const proto = (sessionManager as { prototype?: unknown }).prototype;
	return (
		typeof proto === "object" &&
		proto !== null &&
		typeof (proto as Record<string, unknown>).appendContextEdit === "function" &&
		typeof (proto as Record<string, unknown>).buildSessionProjection === "function"
	);
}

/** Whether this Pi can host pi-fold; the reason names the Pi version needed. */
export function checkHost(host: PiHost): HostCheck {
	const version = typeof host.VERSION === "string" ? host.VERSION : undefined;
	if (hasContextEdit(host.SessionManager)) return { ok: true, version };
	return {
		ok: false,
		reason:
			`pi-fold needs Pi ${REQUIRED_PI_VERSION} or later (context_edit support: ` +
			`SessionManager.appendContextEdit and buildSessionProjection); this Pi is ${version ?? "of an unknown version"}. ` +
			"Update Pi, or uninstall pi-fold.",
	};
}
