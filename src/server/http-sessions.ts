import { NodeStreamableHTTPServerTransport } from '@modelcontextprotocol/node';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Workbench } from '../core/workbench.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import { createServer, type CreateServerOptions } from './create-server.js';
import type { ActivityLog, CloseReason } from './http-activity.js';
import { principalLabel } from './http-security.js';

/**
 * The sessions of handshake-era HTTP clients: one MCP server (createServer) per session over the shared Workbench,
 * found by its `Mcp-Session-Id`, ended by DELETE, idle expiry or shutdown (README "HTTP").
 */
export interface LegacySession {
  id: string | undefined;
  /** Who opened it (see HttpGate.principal): only requests of the same principal reach it. */
  principal: string;
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
  /** Every session of `principal`, as {@link all} counts them. */
  countOf(principal: string): number;
  /** A new session of `principal` (see HttpGate.principal); it is registered under its id once its initialize succeeds. */
  create(principal: string): Promise<LegacySession>;
  /** Hands one request to its session's transport, counting it as activity while it is answered. */
  serve(session: LegacySession, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void>;
  /** Ends a session; `why` words its log line, `reason` is that line's `reason` field (README "Command line", Logs). */
  close(session: LegacySession, why: string, reason: CloseReason): Promise<void>;
  /** Closes every session with nothing being answered and no request for `idleMs`. */
  sweep(idleMs: number): void;
  closeAll(why: string): Promise<void>;
}

/**
 * The sessions of handshake-era clients of one HTTP server: each opened with createServer over `workbench`. Each
 * session's opening and end is a debug line, and counted in `activity` (one info line now and then).
 */
export function createLegacySessions(workbench: Workbench, version: string, serverOptions: CreateServerOptions | undefined, log: Logger, activity: ActivityLog): LegacySessions {
  return new SessionTable(workbench, version, serverOptions, log, activity);
}

class SessionTable implements LegacySessions {
  /** Every session, initialized or not. */
  private readonly sessions = new Set<LegacySession>();
  /** Initialized sessions by id. */
  private readonly byId = new Map<string, LegacySession>();

  constructor(
    private readonly workbench: Workbench,
    private readonly version: string,
    private readonly serverOptions: CreateServerOptions | undefined,
    private readonly log: Logger,
    private readonly activity: ActivityLog,
  ) {}

  get(id: string): LegacySession | undefined {
    return this.byId.get(id);
  }

  get open(): number {
    return this.byId.size;
  }

  get all(): number {
    return this.sessions.size;
  }

  countOf(principal: string): number {
    let count = 0;
    for (const session of this.sessions) if (session.principal === principal) count++;
    return count;
  }

  async create(principal: string): Promise<LegacySession> {
    const options = { ...this.serverOptions, isolated: true, owner: principal, sessionLabel: () => session.id, principal: principalLabel(principal) };
    const { server, connect, close } = createServer(this.workbench, this.version, options);
    const transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        session.id = id;
        this.byId.set(id, session);
        this.activity.opened();
        this.log.debug(`session ${shortId(id)} opened (${this.byId.size} open)`);
      },
    });
    const session: LegacySession = { id: undefined, principal, transport, close, active: 0, lastSeen: Date.now(), closed: false };
    this.sessions.add(session);
    // DELETE from the client, or any transport close, ends this session's server and its workbench registration.
    server.onclose = () => void this.close(session, 'closed', 'client');
    await connect(transport);
    return session;
  }

  async serve(session: LegacySession, req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
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
  }

  async close(session: LegacySession, why: string, reason: CloseReason): Promise<void> {
    if (session.closed) return;
    session.closed = true;
    this.sessions.delete(session);
    if (session.id !== undefined) this.byId.delete(session.id);
    if (session.id !== undefined) {
      this.activity.closed(reason);
      this.log.debug(`session ${shortId(session.id)} ${why} (${this.byId.size} open)`, { event: 'client_closed', session: shortId(session.id), reason });
    }
    await session.close().catch((error: unknown) => this.log.debug(`closing a session: ${errorMessage(error)}`));
  }

  sweep(idleMs: number): void {
    const now = Date.now();
    for (const session of [...this.sessions]) {
      if (session.active === 0 && now - session.lastSeen >= idleMs) void this.close(session, `expired after ${Math.round(idleMs / 1000)} s idle`, 'idle');
    }
  }

  async closeAll(why: string): Promise<void> {
    await Promise.allSettled([...this.sessions].map((s) => this.close(s, why, 'shutdown')));
  }
}

function shortId(id: string): string {
  return id.slice(0, 8);
}
