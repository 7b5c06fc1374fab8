import { NodeStreamableHTTPServerTransport, toWebRequest } from '@modelcontextprotocol/node';
import { isInitializeRequest, isLegacyRequest } from '@modelcontextprotocol/server';
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto';
import { createServer as createNodeServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Workbench } from '../core/workbench.js';
import { WorkbenchError, errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { quoteClientText } from '../shared/client-text.js';
import { findMessageId } from '../shared/message-id.js';
import { createServer, type CreateServerOptions } from './create-server.js';
import { createModernHttp } from './http-modern.js';
import { discardRest, pathOf, readBody, sendJson, sendJsonRpcError } from './http-body.js';
import { hostHeaderIsLoopback, isLoopbackHost, normalizeOrigin, sha256 } from './http-security.js';
import { isJsonRpcMessage } from './stdio-server-transport.js';
import { PARSE_ERROR_JSON, PARSE_ERROR_JSON_RPC, jsonRpcError, tooLargeError } from './tool-call-pipeline.js';

export const MCP_PATH = '/mcp';
export const HEALTH_PATH = '/healthz';
export const DEFAULT_MAX_SESSIONS = 32;
export const DEFAULT_SESSION_IDLE_MS = 10 * 60_000;
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024;

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
  log: Logger;
}

export interface WorkbenchHttpServer {
  /** The MCP endpoint, e.g. http://127.0.0.1:3000/mcp. */
  url: string;
  host: string;
  port: number;
  sessionCount(): number;
  /** Closes every session and the listener; resolves when all connections are gone. Downstream servers stay up. */
  close(): Promise<void>;
}

interface Session {
  id: string | undefined;
  transport: NodeStreamableHTTPServerTransport;
  close: () => Promise<void>;
  /** Requests of this session in progress (including open GET event streams). */
  active: number;
  lastSeen: number;
  closed: boolean;
}

/**
 * Serves the workbench over Streamable HTTP on `/mcp`, one MCP server (createServer) per session over the shared
 * Workbench, plus `GET /healthz`. Every /mcp request passes, in this order and before any MCP handling: Host (on a
 * loopback bind, against DNS rebinding), Origin, bearer token, method, session cap and body size. A refused request
 * therefore never creates a session, spawns a server or connects anything.
 *
 * Throws WorkbenchError USAGE when asked to listen on a non-loopback address without a token; rejects with the
 * listen error (EADDRINUSE, …) otherwise.
 */
export async function startHttpServer(options: HttpServerOptions): Promise<WorkbenchHttpServer> {
  const { workbench, version, log } = options;
  const token = options.token === undefined || options.token === '' ? undefined : options.token;
  const loopbackBind = isLoopbackHost(options.host);
  if (!token && !loopbackBind) {
    throw new WorkbenchError('USAGE', `refusing to serve on ${options.host} without a token: set WORKBENCH_TOKEN (or --token), or bind to 127.0.0.1`);
  }
  // Several tokens, comma-separated, are several users: each one's modern requests get downstream servers of their own.
  const expectedDigests = token === undefined ? undefined : token.split(',').map((t) => t.trim()).filter((t) => t !== '').map(sha256);
  const allowedOrigins = new Set((options.allowedOrigins ?? []).map(normalizeOrigin));
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;

  /** Every session, including ones whose initialize is still being handled. */
  const all = new Set<Session>();
  const byId = new Map<string, Session>();
  let closing = false;
  // Replicas given the same tokens sign input rounds alike, so a modern server's pass-through round continues anywhere.
  const stateKey = token === undefined ? undefined : createHash('sha256').update(`mcp-workbench requestState\0${token}`).digest();
  const modern = createModernHttp(workbench, version, { ...options.serverOptions, ...(stateKey ? { stateKey } : {}) }, log);

  const closeSession = async (session: Session, why: string): Promise<void> => {
    if (session.closed) return;
    session.closed = true;
    all.delete(session);
    if (session.id !== undefined) byId.delete(session.id);
    if (session.id !== undefined) log.info(`session ${shortId(session.id)} ${why} (${byId.size} open)`);
    await session.close().catch((error: unknown) => log.debug(`closing a session: ${errorMessage(error)}`));
  };

  const originAllowed = (origin: string): boolean => {
    if (allowedOrigins.has(origin)) return true;
    try {
      const url = new URL(origin);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') return false;
      return allowedOrigins.has(url.origin) || isLoopbackHost(url.hostname);
    } catch {
      return false;
    }
  };

  /**
   * Who a request is from, or undefined when it is not admitted: the digest of the token that admitted it (each token
   * is one user), or the one local principal on a tokenless loopback bind. Checked once per request.
   */
  const principalOf = (header: string | undefined): string | undefined => {
    if (!expectedDigests) return 'local';
    const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header ?? '');
    if (match === null) return undefined;
    // Digests have equal length whatever was sent, so the comparison takes the same time for every wrong token.
    const presented = sha256(match[1]!);
    let found = false;
    for (const expected of expectedDigests) found = timingSafeEqual(presented, expected) || found;
    return found ? presented.toString('hex') : undefined;
  };

  const refuse = (req: IncomingMessage, res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void => {
    log.info(`refused ${req.method ?? '?'} ${quoteClientText(pathOf(req))} from ${req.socket.remoteAddress ?? '?'}: ${status} ${message}`);
    sendJsonRpcError(res, status, message, headers);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = pathOf(req);
    if (loopbackBind && !hostHeaderIsLoopback(req.headers.host)) {
      // A page on another site that re-points its DNS name at 127.0.0.1 (DNS rebinding) arrives with its own Host.
      return refuse(req, res, 403, 'Forbidden: the Host header must name this machine (localhost, 127.0.0.1 or [::1])');
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !originAllowed(origin)) {
      return refuse(req, res, 403, `Forbidden: origin ${quoteClientText(origin)} is not allowed (start the workbench with --allow-origin to allow it)`);
    }
    if (origin !== undefined) {
      res.setHeader('Access-Control-Allow-Origin', origin);
      res.setHeader('Vary', 'Origin');
      res.setHeader('Access-Control-Expose-Headers', 'Mcp-Session-Id, WWW-Authenticate');
    }

    if (path === HEALTH_PATH) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return sendJsonRpcError(res, 405, 'Method not allowed', { Allow: 'GET, HEAD' });
      return sendJson(res, 200, { status: 'ok', version, sessions: byId.size });
    }
    if (path !== MCP_PATH) return sendJsonRpcError(res, 404, `Not found: the MCP endpoint is ${MCP_PATH}`);

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
    const principal = principalOf(req.headers.authorization);
    if (principal === undefined) {
      const challenge = req.headers.authorization ? 'Bearer realm="mcp-workbench", error="invalid_token"' : 'Bearer realm="mcp-workbench"';
      return refuse(req, res, 401, 'Unauthorized: send "Authorization: Bearer <token>" with the workbench token', { 'WWW-Authenticate': challenge });
    }
    if (req.method !== 'POST' && req.method !== 'GET' && req.method !== 'DELETE') {
      return sendJsonRpcError(res, 405, 'Method not allowed', { Allow: 'GET, POST, DELETE, OPTIONS' });
    }
    if (closing) return sendJsonRpcError(res, 503, 'The workbench is shutting down', { Connection: 'close' });

    const sessionHeader = req.headers['mcp-session-id'];
    const sessionId = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader;
    const existing = sessionId === undefined ? undefined : byId.get(sessionId);
    if (sessionId !== undefined && !existing) {
      // The spec's signal for "start a new session": clients re-initialize on 404.
      return sendJsonRpcError(res, 404, 'Session not found', {}, -32001);
    }
    if (!existing && req.method !== 'POST') {
      return sendJsonRpcError(res, 400, 'Bad Request: Mcp-Session-Id header is required');
    }
    if (!existing && all.size >= maxSessions) {
      return refuse(req, res, 503, `Service Unavailable: the session limit (${maxSessions}) is reached; retry later`, { 'Retry-After': '30' });
    }

    let body: unknown;
    if (req.method === 'POST') {
      // The same answers as over stdio (see tool-call-pipeline): a body over the limit names the request's id when
      // its first or last bytes show it; a body that is not JSON, or not JSON-RPC, gets -32700.
      const read = await readBody(req, maxBodyBytes);
      if (typeof read !== 'string') {
        if (!req.complete) discardRest(req);
        log.info(`refused POST ${pathOf(req)} from ${req.socket.remoteAddress ?? '?'}: 413 body over ${maxBodyBytes} bytes`);
        return sendJson(res, 413, tooLargeError(findMessageId(read.head, read.tail) ?? null, maxBodyBytes));
      }
      try {
        body = JSON.parse(read);
      } catch {
        return sendJson(res, 400, jsonRpcError(null, -32700, PARSE_ERROR_JSON));
      }
      if (Array.isArray(body) ? !body.every(isJsonRpcMessage) : !isJsonRpcMessage(body)) {
        return sendJson(res, 400, jsonRpcError(null, -32700, PARSE_ERROR_JSON_RPC));
      }
    }

    if (existing) return serveRequest(existing, req, res, body);
    if (req.method === 'POST' && sessionId === undefined) {
      // No session named: an MCP 2026-07-28 request (it carries its protocol version in _meta), or a legacy opening.
      const abort = new AbortController();
      res.once('close', () => abort.abort());
      const request = await toWebRequest(req, body, { signal: abort.signal });
      if (!(await isLegacyRequest(request, body))) return modern.serve(request, body, principal, res);
    }
    const isInitialize = Array.isArray(body) ? body.some(isInitializeRequest) : isInitializeRequest(body);
    if (!isInitialize) return sendJsonRpcError(res, 400, 'Bad Request: Mcp-Session-Id header is required');
    // The cap is checked again: other requests may have opened sessions while this body was read.
    if (all.size >= maxSessions) {
      return refuse(req, res, 503, `Service Unavailable: the session limit (${maxSessions}) is reached; retry later`, { 'Retry-After': '30' });
    }
    const session = await openSession();
    await serveRequest(session, req, res, body);
    if (session.id === undefined) await closeSession(session, 'not initialized');
  };

  const openSession = async (): Promise<Session> => {
    const { server, connect, close } = createServer(workbench, version, { ...options.serverOptions, isolated: true, sessionLabel: () => session.id });
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        session.id = id;
        byId.set(id, session);
        log.info(`session ${shortId(id)} opened (${byId.size} open)`);
      },
    });
    const session: Session = { id: undefined, transport, close, active: 0, lastSeen: Date.now(), closed: false };
    all.add(session);
    // DELETE from the client, or any transport close, ends this session's server and its workbench registration.
    server.onclose = () => void closeSession(session, 'closed');
    await connect(transport);
    return session;
  };

  const serveRequest = async (session: Session, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> => {
    session.lastSeen = Date.now();
    // A listening GET stream is not activity: a client that vanished with its sockets open must still expire
    // (README "HTTP sessions"). Requests being answered (POST, DELETE) hold the session open until they end.
    if (req.method !== 'GET') {
      session.active++;
      res.once('close', () => {
        session.active--;
        session.lastSeen = Date.now();
      });
    }
    await session.transport.handleRequest(req, res, body);
  };

  const http = createNodeServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log.error(`handling ${req.method ?? '?'} ${pathOf(req)}: ${errorMessage(error)}`);
      if (!res.headersSent) sendJsonRpcError(res, 500, 'Internal error', {}, -32603);
      else res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    http.once('error', reject);
    http.listen(options.port, options.host, () => {
      http.off('error', reject);
      resolve();
    });
  });
  http.on('error', (error) => log.error(`HTTP server: ${errorMessage(error)}`));
  const address = http.address() as AddressInfo;

  const sweeper = setInterval(
    () => {
      const now = Date.now();
      for (const session of [...all]) {
        if (session.active === 0 && now - session.lastSeen >= idleMs) void closeSession(session, `expired after ${Math.round(idleMs / 1000)} s idle`);
      }
      modern.sweep(idleMs);
    },
    Math.min(60_000, Math.max(100, Math.floor(idleMs / 4))),
  );
  sweeper.unref();

  const hostForUrl = address.family === 'IPv6' || address.address.includes(':') ? `[${address.address}]` : address.address;
  return {
    url: `http://${hostForUrl}:${address.port}${MCP_PATH}`,
    host: address.address,
    port: address.port,
    sessionCount: () => byId.size,
    close: async () => {
      closing = true;
      clearInterval(sweeper);
      const stopped = new Promise<void>((resolve) => http.close(() => resolve()));
      await Promise.allSettled([...[...all].map((s) => closeSession(s, 'closed (shutting down)')), modern.close()]);
      // Event streams of clients that did not go away by themselves, and idle keep-alive sockets.
      http.closeAllConnections();
      await stopped;
    },
  };
}

function shortId(id: string): string {
  return id.slice(0, 8);
}
