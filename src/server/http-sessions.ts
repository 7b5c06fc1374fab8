import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Workbench } from '../core/workbench.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { createServer, type CreateServerOptions } from './create-server.js';
import { principalLabel } from './http-security.js';

/**
 * The sessions of handshake-era HTTP clients: one MCP server (createServer) per session over the shared Workbench,
 * found by its `Mcp-Session-Id`, ended by DELETE, idle expiry or shutdown (README "HTTP").
 */
export interface LegacySession {
  id: string | undefined;
  transport: NodeStreamableHTTPServerTransport;
  close: () => Promise<void>;
  /** Requests of this session being answered (an open GET event stream is not one). */
  active: number;
  lastSeen: number;
  closed: boolean;
}

export interface LegacySessions {
  /** The initialized session of this id, if it is still open. */
  get(id: string): LegacySession | undefined;
  /** Initialized sessions. */
  readonly open: number;
  /** Every session, including ones whose initialize is still being handled (what the session cap counts). */
  readonly all: number;
  /** A new session of `principal` (see HttpGate.principal); it is registered under its id once its initialize succeeds. */
  create(principal: string): Promise<LegacySession>;
  /** Hands one request to its session's transport, counting it as activity while it is answered. */
  serve(session: LegacySession, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void>;
  close(session: LegacySession, why: string): Promise<void>;
  /** Closes every session with nothing being answered and no request for `idleMs`. */
  sweep(idleMs: number): void;
  closeAll(why: string): Promise<void>;
}

export function createLegacySessions(workbench: Workbench, version: string, serverOptions: CreateServerOptions | undefined, log: Logger): LegacySessions {
  const all = new Set<LegacySession>();
  const byId = new Map<string, LegacySession>();

  const close = async (session: LegacySession, why: string): Promise<void> => {
    if (session.closed) return;
    session.closed = true;
    all.delete(session);
    if (session.id !== undefined) byId.delete(session.id);
    if (session.id !== undefined) log.info(`session ${shortId(session.id)} ${why} (${byId.size} open)`);
    await session.close().catch((error: unknown) => log.debug(`closing a session: ${errorMessage(error)}`));
  };

  return {
    get: (id) => byId.get(id),
    get open() {
      return byId.size;
    },
    get all() {
      return all.size;
    },
    async create(principal) {
      const { server, connect, close: closeServer } = createServer(workbench, version, { ...serverOptions, isolated: true, sessionLabel: () => session.id, principal: principalLabel(principal) });
      const transport = new NodeStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          session.id = id;
          byId.set(id, session);
          log.info(`session ${shortId(id)} opened (${byId.size} open)`);
        },
      });
      const session: LegacySession = { id: undefined, transport, close: closeServer, active: 0, lastSeen: Date.now(), closed: false };
      all.add(session);
      // DELETE from the client, or any transport close, ends this session's server and its workbench registration.
      server.onclose = () => void close(session, 'closed');
      await connect(transport);
      return session;
    },
    async serve(session, req, res, body) {
      session.lastSeen = Date.now();
      // A listening GET stream is not activity: a client that vanished with its sockets open must still expire
      // (README "HTTP"). Requests being answered (POST, DELETE) hold the session open until they end.
      if (req.method !== 'GET') {
        session.active++;
        res.once('close', () => {
          session.active--;
          session.lastSeen = Date.now();
        });
      }
      await session.transport.handleRequest(req, res, body);
    },
    close,
    sweep(idleMs) {
      const now = Date.now();
      for (const session of [...all]) {
        if (session.active === 0 && now - session.lastSeen >= idleMs) void close(session, `expired after ${Math.round(idleMs / 1000)} s idle`);
      }
    },
    async closeAll(why) {
      await Promise.allSettled([...all].map((s) => close(s, why)));
    },
  };
}

function shortId(id: string): string {
  return id.slice(0, 8);
}
