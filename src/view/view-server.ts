// `pi-fold view`'s server: local and read-only. It listens on 127.0.0.1 only, on a free port, and
// answers only paths under a random token (the URL it prints), and only requests addressed to the
// loopback host (a page elsewhere cannot reach it through a rebound DNS name). It serves the page,
// the view's JSON, native compaction's curve when the replay has it, the core, and store objects
// by address exactly as found: the page verifies them itself.
import { randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { CORE_WASM_URL } from "../../bindings/node.ts";
import { isHexHash } from "../fold-types.ts";
import type { LiveSession } from "./live-session.ts";
import { pageDocument } from "./page-html.ts";
import { storeBytes } from "./store-bytes.ts";

export interface ViewServer {
	url: string;
	server: Server;
	close(): Promise<void>;
}

/** Status, content type, body, and the page's content security policy (sent as a header). */
type Reply = [number, string, string | Uint8Array, string?];

const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost"]);

function sameToken(given: string, token: string): boolean {
	const a = Buffer.from(given);
	const b = Buffer.from(token);
	return a.length === b.length && timingSafeEqual(a, b);
}

function send(res: ServerResponse, status: number, type: string, body: string | Uint8Array, csp?: string): void {
	res.writeHead(status, {
		"content-type": type,
		"cache-control": "no-store",
		"x-content-type-options": "nosniff",
		"referrer-policy": "no-referrer",
		...(csp === undefined ? {} : { "content-security-policy": csp }),
	});
	res.end(body);
}

/** Serve the session as it is each time the page asks. Resolves once listening. */
export async function startViewServer(session: LiveSession): Promise<ViewServer> {
	const token = randomBytes(16).toString("hex");
	const page = pageDocument({ mode: "server" });
	const wasm = readFileSync(CORE_WASM_URL);
	let port = 0;
	const text = (status: number, body: string): Reply => [status, "text/plain; charset=utf-8", body];
	const answer = (req: IncomingMessage): Reply => {
		const [host, hostPort] = (req.headers.host ?? "").split(":");
		if (!LOOPBACK_HOSTS.has(host) || hostPort !== String(port)) return text(421, "wrong host\n");
		if (req.method !== "GET" && req.method !== "HEAD") return text(405, "read-only\n");
		const path = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
		const [, given = "", ...rest] = path.split("/");
		if (!sameToken(given, token)) return text(403, "forbidden: open the URL pi-fold view printed\n");
		const route = rest.join("/");
		if (route === "") return [200, "text/html; charset=utf-8", page.html, page.csp];
		if (route === "api/view") return [200, "application/json", JSON.stringify(session.current().view.data)];
		if (route === "api/native") return [200, "application/json", JSON.stringify(session.current().native)];
		if (route === "core.wasm") return [200, "application/wasm", wasm];
		const [kind, hash] = rest;
		if ((kind === "object" || kind === "record") && rest.length === 2 && isHexHash(hash)) {
			const found = storeBytes(session.current().view.store, kind, hash);
			if ("bytes" in found) return [200, "application/octet-stream", found.bytes];
			return found.missing ? text(404, "not in the store\n") : text(403, `${found.problem}\n`);
		}
		return text(404, "not found\n");
	};
	const server = createServer((req, res) => {
		let reply: Reply;
		try {
			reply = answer(req);
		} catch (err) {
			reply = text(500, `${(err as Error).message}\n`);
		}
		send(res, ...reply);
	});
	await new Promise<void>((resolve, reject) => {
		server.once("error", reject);
		server.listen(0, "127.0.0.1", () => resolve());
	});
	port = (server.address() as AddressInfo).port;
	return {
		url: `http://127.0.0.1:${port}/${token}/`,
		server,
		close: () =>
			new Promise<void>((resolve) => {
				server.closeAllConnections();
				server.close(() => resolve());
			}),
	};
}
