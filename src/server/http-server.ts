import { classifyInboundRequest, isInitializeRequest } from '@modelcontextprotocol/server';
import { createHash } from 'node:crypto';
import { createServer as createNodeServer, type IncomingMessage, type Server as NodeHttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Workbench } from '../core/workbench.js';
import { WorkbenchError, errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { findMessageId } from '../shared/message-id.js';
import type { CreateServerOptions } from './create-server.js';
import { ACTIVITY_INTERVAL_MS, createActivityLog, type ActivityLog } from './http-activity.js';
import { createModernHttp, type ModernHttp } from './http-modern.js';
import { discardRest, pathOf, readBody, sendJson, sendJsonRpcError } from './http-body.js';
import { createRefusalLog, REFUSAL_WINDOW_MS, type Refusal, type RefusalLog } from './http-refusals.js';
import { createHttpGate, isLoopbackHost, principalLabel, type HttpGate } from './http-security.js';
import { createLegacySessions, type LegacySessions } from './http-sessions.js';
import type { HttpMetrics } from './http-metrics.js';
import { isJsonRpcMessage } from './stdio-server-transport.js';
import { PARSE_ERROR_JSON, PARSE_ERROR_JSON_RPC, jsonRpcError, tooLargeError } from './tool-call-pipeline.js';

export const MCP_PATH = '/mcp';
export const HEALTH_PATH = '/healthz';
export const METRICS_PATH = '/metrics';
export const DEFAULT_MAX_SESSIONS = 32;
export const DEFAULT_SESSION_IDLE_MS = 10 * 60_000;
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;
/**
 * How long an idle keep-alive connection stays open. Node's default (5 s) is shorter than the time a busy client may
 * leave a pooled socket unused, and a client that reuses a socket the server closed unseen gets a failed request
 * ("fetch failed", ECONNRESET). A minute, as behind common load balancers.
 */
export const KEEP_ALIVE_MS = 65_000;

export interface HttpServerOptions {
  workbench: Workbench;
  version: string;
  host: string;
  port: number;
  /** Bearer token every /mcp request must carry. Required unless `host` is a loopback address. */
  token?: string;
  /** Origins allowed besides the loopback ones (http(s)://localhost, 127.0.0.1, [::1] on any port). */
  allowedOrigins?: readonly string[];
  maxSessions?: number;
  /** A session with no request in progress for this long is closed. */
  sessionIdleMs?: number;
  maxBodyBytes?: number;
  /** Passed to every session's createServer (e.g. the management tools). */
  serverOptions?: CreateServerOptions;
  /** `--metrics`: Prometheus metrics at `/metrics`, behind the same token as `/mcp`. */
  metrics?: HttpMetrics;
  /** How often at most the activity summary is logged (default ACTIVITY_INTERVAL_MS, 10 minutes). */
  activityIntervalMs?: number;
  log: Logger;
}

export interface WorkbenchHttpServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:3000/mcp. */
  url: string;
  host: string;
  port: number;
  sessionCount(): number;
  /** Clients served now: handshake-era sessions and modern clients (one per principal and capability set). */
  clientCount(): number;
  /** Closes every session and the listener; resolves when all connections are gone. Downstream servers stay up. */
  close(): Promise<void>;
}

/**
 * Serves the workbench over Streamable HTTP on `/mcp`, plus `GET /healthz`. Every /mcp request passes the gate
 * (Host on a loopback bind, Origin, bearer token; see http-security), then method, session cap and body size, before
 * any MCP handling: a refused request never creates a session, spawns a server or connects anything. Then a request
 * naming a session goes to it (http-sessions), an MCP 2026-07-28 request to the modern handler (http-modern), and an
 * `initialize` opens a handshake-era session.
 *
 * Throws WorkbenchError USAGE when asked to listen on a non-loopback address without a token; rejects with the
 * listen error (EADDRINUSE, …) otherwise.
 */
export async function startHttpServer(options: HttpServerOptions): Promise<WorkbenchHttpServer> {
  const front = createFront(options);
  const http = createNodeServer((req, res) => {
    handle(front, req, res).catch((error: unknown) => {
      front.log.error(`handling ${req.method ?? '?'} ${pathOf(req)}: ${errorMessage(error)}`);
      if (!res.headersSent) sendJsonRpcError(res, 500, 'Internal error', {}, -32603);
      else res.destroy();
    });
  });
  http.keepAliveTimeout = KEEP_ALIVE_MS;
  http.headersTimeout = KEEP_ALIVE_MS + 1_000;
  await listen(http, options.port, options.host);
  http.on('error', (error) => front.log.error(`HTTP server: ${errorMessage(error)}`));
  const address = http.address() as AddressInfo;
  const sweeper = startSweeper(front);
  const summary = setInterval(() => front.activity.flush(clientCount()), options.activityIntervalMs ?? ACTIVITY_INTERVAL_MS);
  summary.unref();
  const clientCount = (): number => front.sessions.open + front.modern.principalCount();
  const hostForUrl = address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address;
  return {
    url: `http://${hostForUrl}:${address.port}${MCP_PATH}`,
    host: address.address,
    port: address.port,
    sessionCount: () => front.sessions.open,
    clientCount,
    close: async () => {
      front.closing = true;
      clearInterval(sweeper);
      clearInterval(summary);
      front.refusals.close();
      const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
      await Promise.allSettled([front.sessions.closeAll('closed (shutting down)'), front.modern.close()]);
      // What happened since the last summary, the sessions just closed included.
      front.activity.flush(clientCount());
      // Event streams of clients that did not go away by themselves, and idle keep-alive sockets.
      http.closeAllConnections();
      await stopped;
    },
  };
}

/** What the requests are served with, before anything listens; throws WorkbenchError USAGE as startHttpServer says. */
function createFront(options: HttpServerOptions): Front {
  const { workbench, version, log } = options;
  const token = options.token === undefined || options.token === '' ? undefined : options.token;
  if (!token && !isLoopbackHost(options.host)) {
    throw new WorkbenchError('USAGE', `refusing to serve on ${options.host} without a token: set WORKBENCH_TOKEN (or --token), or bind to 127.0.0.1`);
  }
  const limits = {
    maxSessions: options.maxSessions ?? DEFAULT_MAX_SESSIONS,
    idleMs: options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
  };
  const activity = createActivityLog(log, () => workbench.connectTally());
  const { metrics } = options;
  // A shorter summary interval (WORKBENCH_LOG_SUMMARY_SECONDS) shortens the refusal window with it.
  const refusals = createRefusalLog({
    log,
    windowMs: Math.min(REFUSAL_WINDOW_MS, options.activityIntervalMs ?? ACTIVITY_INTERVAL_MS),
    counted: (reason) => {
      activity.refused(reason);
      metrics?.refused(reason);
    },
  });
  const gate = createHttpGate({ host: options.host, token, allowedOrigins: options.allowedOrigins, refusals });
  const sessions = createLegacySessions(workbench, version, options.serverOptions, log, activity);
  // Replicas given the same tokens sign input rounds alike, so a modern server's pass-through round continues anywhere.
  const stateKey = token === undefined ? undefined : createHash('sha256').update(`mcp-workbench requestState\0${token}`).digest();
  const modern = createModernHttp(workbench, version, { ...options.serverOptions, ...(stateKey ? { stateKey } : {}) }, { log, activity, refusals, metrics });
  return { gate, refusals, sessions, modern, activity, limits, version, log, closing: false, ...(metrics ? { metrics } : {}) };
}

/** Resolves once `http` listens on `host:port`; rejects with the listen error (EADDRINUSE, …). */
function listen(http: NodeHttpServer, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(port, host, () => {
      http.off('error', reject);
      resolve();
    });
  });
}

/** Closes idle handshake-era sessions and modern clients, checking a few times per idle period (at most once a minute). */
function startSweeper(front: Front): NodeJS.Timeout {
  const { idleMs } = front.limits;
  const sweeper = setInterval(
    () => {
      front.sessions.sweep(idleMs);
      front.modern.sweep(idleMs);
    },
    Math.min(60_000, Math.max(100, Math.floor(idleMs / 4))),
  );
  sweeper.unref();
  return sweeper;
}

/** What every request is served with. */
interface Front {
  gate: HttpGate;
  /** Refused requests, logged without a line for each one of a flood. */
  refusals: RefusalLog;
  sessions: LegacySessions;
  modern: ModernHttp;
  /** What the sessions did, summed up in the log now and then (instead of a line per session). */
  activity: ActivityLog;
  limits: { maxSessions: number; idleMs: number; maxBodyBytes: number };
  version: string;
  log: Logger;
  closing: boolean;
  metrics?: HttpMetrics;
}

/** One HTTP request: health, CORS preflight, or an /mcp request once admitted. */
async function handle(front: Front, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { gate, sessions } = front;
  const path = pathOf(req);
  if (!gate.checkSite(req, res)) return;
  if (path === HEALTH_PATH) {
    if (req.method !== 'GET' && req.method !== 'HEAD') return refuseMethod(front, req, res, 'GET, HEAD');
    return sendJson(res, 200, { status: 'ok', version: front.version, sessions: sessions.open + front.modern.principalCount() });
  }
  if (path === METRICS_PATH && front.metrics) {
    // Behind the token: the figures name toolboxes and servers.
    const metricsPrincipal = gate.principal(req, res);
    if (metricsPrincipal === undefined) return;
    if (req.method !== 'GET' && req.method !== 'HEAD') return refuseMethod(front, req, res, 'GET, HEAD', metricsPrincipal);
    return front.metrics.serve(res);
  }
  if (path !== MCP_PATH) {
    // What scanners hit: counted, and said at debug (see http-refusals).
    const message = `Not found: the MCP endpoint is ${MCP_PATH}`;
    front.refusals.refused(req, { reason: 'not_found', message });
    return sendJsonRpcError(res, 404, message);
  }
  if (req.method === 'OPTIONS') {
    // CORS preflight (browsers send no credentials here); the real request is checked in full.
    res.writeHead(204, {
      'Access-Control-Allow-Methods': 'GET, POST, DELETE',
      'Access-Control-Allow-Headers': 'Authorization, Content-Type, Accept, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID',
      'Access-Control-Max-Age': '600',
    });
    res.end();
    return;
  }
  const principal = gate.principal(req, res);
  if (principal === undefined) return;
  if (req.method !== 'POST' && req.method !== 'GET' && req.method !== 'DELETE') return refuseMethod(front, req, res, 'GET, POST, DELETE, OPTIONS', principal);
  if (front.closing) return sendJsonRpcError(res, 503, 'The workbench is shutting down', { Connection: 'close' });
  return serveMcp(front, principal, req, res);
}

/** An admitted /mcp request: to its session, to the modern handler, or opening a session. */
async function serveMcp(front: Front, principal: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { gate, refusals, sessions, limits } = front;
  const sessionHeader = req.headers['mcp-session-id'];
  const sessionId = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader;
  const found = sessionId === undefined ? undefined : sessions.get(sessionId);
  // A session is bound to the principal that opened it: another token holder who learnt its id gets what an unknown
  // id gets, and cannot tell it exists (README "Serving over HTTP").
  const existing = found?.principal === principal ? found : undefined;
  // The spec's signal for "start a new session": clients re-initialize on 404.
  if (sessionId !== undefined && !existing) {
    refusals.refused(req, { reason: 'unknown_session', message: 'Session not found', principal: principalLabel(principal) });
    return sendJsonRpcError(res, 404, 'Session not found', {}, -32001);
  }
  if (!existing && req.method !== 'POST') return refuseSessionless(front, req, res, principal);
  // Handshake-era sessions and MCP 2026-07-28 clients (one per principal and capability set) count alike: each has
  // downstream connections of its own. With several tokens, each user holds at most its share of the limit, so one
  // client that opens sessions without end cannot lock the others out.
  const share = Math.max(1, Math.floor(limits.maxSessions / gate.users));
  const ownFull = (): boolean => gate.users > 1 && sessions.countOf(principal) + front.modern.countOf(principal) >= share;
  const atLimit = (): boolean => sessions.all + front.modern.principalCount() >= limits.maxSessions || ownFull();
  const full = (): void => {
    const message = ownFull()
      ? `Service Unavailable: this token holds its share of the session limit (${share} of ${limits.maxSessions}, shared by ${gate.users} tokens); close sessions it no longer uses (DELETE), or retry later`
      : `Service Unavailable: the session limit (${limits.maxSessions}) is reached; retry later`;
    refusals.refuse(req, res, { reason: 'session_limit', message, principal: principalLabel(principal) }, { 'Retry-After': '30' });
  };

  let body: unknown;
  if (req.method === 'POST') {
    const read = await readMessage(req, res, limits.maxBodyBytes, (refusal) => refusals.refused(req, { ...refusal, principal: principalLabel(principal) }));
    if (read === undefined) return;
    body = read.body;
  }
  if (existing) return sessions.serve(existing, req, res, body);
  if (req.method === 'POST' && sessionId === undefined) {
    // No session named: an MCP 2026-07-28 request (it carries its protocol version in _meta), or a legacy opening.
    if (!isLegacyPost(req, body)) return front.modern.serve(req, body, principal, res, { reached: atLimit, refuse: full });
  }
  const isInitialize = Array.isArray(body) ? body.some(isInitializeRequest) : isInitializeRequest(body);
  if (!isInitialize) return refuseSessionless(front, req, res, principal);
  // Checked once the body shows a new session is asked for (a modern request to an open surface opens none).
  if (atLimit()) return full();
  const session = await sessions.create(principal);
  await sessions.serve(session, req, res, body);
  if (session.id === undefined) await sessions.close(session, 'not initialized', 'uninitialized');
}

/** Answers a method a path does not take (405, as `Allow` says), and tells the refusal log (at debug: scanners). */
function refuseMethod(front: Front, req: IncomingMessage, res: ServerResponse, allow: string, principal?: string): void {
  front.refusals.refused(req, {
    reason: 'method_not_allowed',
    message: `Method not allowed (this path takes ${allow})`,
    ...(principal === undefined ? {} : { principal: principalLabel(principal) }),
  });
  sendJsonRpcError(res, 405, 'Method not allowed', { Allow: allow });
}

/** Answers a request that needs a session and names none (400), and tells the refusal log what the client should do. */
function refuseSessionless(front: Front, req: IncomingMessage, res: ServerResponse, principal: string): void {
  const message = 'Bad Request: Mcp-Session-Id header is required';
  front.refusals.refused(req, {
    reason: 'bad_request',
    message: `${message} (open a session with initialize and send the Mcp-Session-Id it answers with on every later request; an MCP 2026-07-28 client sends its _meta envelope and MCP-Protocol-Version header instead)`,
    principal: principalLabel(principal),
  });
  sendJsonRpcError(res, 400, message);
}

/**
 * Whether the SDK's dual-era entry would serve a session-less POST with this parsed body as legacy: its
 * `isLegacyRequest`, told from the Node request's headers, so that a modern request that the tool-call pipeline
 * answers never needs a web Request (making one cost more than the rest of the pipeline).
 */
function isLegacyPost(req: IncomingMessage, body: unknown): boolean {
  return (
    classifyInboundRequest({
      httpMethod: 'POST',
      protocolVersionHeader: singleHeader(req.headers['mcp-protocol-version']),
      mcpMethodHeader: singleHeader(req.headers['mcp-method']),
      mcpNameHeader: singleHeader(req.headers['mcp-name']),
      body,
    }).kind === 'legacy'
  );
}

/** A header's value as the Fetch API's `Headers.get` gives it (repeated values joined), or undefined. */
function singleHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * A POST body as JSON-RPC, or undefined after answering: the same answers as over stdio (see tool-call-pipeline) — a
 * body over the limit names the request's id when its first or last bytes show it (413); a body that is not JSON, or
 * not JSON-RPC, gets -32700.
 */
async function readMessage(req: IncomingMessage, res: ServerResponse, maxBodyBytes: number, refused: (refusal: Refusal) => void): Promise<{ body: unknown } | undefined> {
  const read = await readBody(req, maxBodyBytes);
  if (typeof read !== 'string') {
    if (!req.complete) discardRest(req);
    const message = `body over ${maxBodyBytes} bytes (send a smaller message, or raise WORKBENCH_MAX_MESSAGE_BYTES where the workbench runs)`;
    refused({ reason: 'too_large', message, fields: { event: 'message_refused', limit_bytes: maxBodyBytes } });
    sendJson(res, 413, tooLargeError(findMessageId(read.head, read.tail) ?? null, maxBodyBytes));
    return undefined;
  }
  // Each answered as before, and said in the refusal log with what to send instead.
  const malformed = (code: number, message: string, todo: string): undefined => {
    refused({ reason: 'bad_request', message: `${message} (${todo})` });
    sendJson(res, 400, jsonRpcError(null, code, message));
    return undefined;
  };
  let body: unknown;
  try {
    body = JSON.parse(read);
  } catch {
    return malformed(-32700, PARSE_ERROR_JSON, 'send one JSON-RPC message, or a batch of them, as the body');
  }
  // JSON-RPC 2.0 answers an empty batch with one Invalid Request, whether or not a session is named.
  if (Array.isArray(body) && body.length === 0) return malformed(-32600, 'Bad Request: empty JSON-RPC batch', 'send at least one message');
  if (Array.isArray(body) ? !body.every(isJsonRpcMessage) : !isJsonRpcMessage(body)) {
    return malformed(-32700, PARSE_ERROR_JSON_RPC, 'each message needs "jsonrpc": "2.0", and a method, or a result or error with an id');
  }
  return { body };
}
