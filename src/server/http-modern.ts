import { CLIENT_CAPABILITIES_META_KEY, createMcpHandler, type ClientCapabilities, type McpHttpHandler, type RequestId } from '@modelcontextprotocol/server';
import { capabilitiesKey } from '../clients/capabilities-key.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toWebRequest } from '@modelcontextprotocol/node';
import type { Workbench } from '../core/workbench.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import type { ActivityLog, CloseReason } from './http-activity.js';
import { createSurface, type CreateServerOptions, type UpstreamSurface } from './create-server.js';
import type { HttpMetrics } from './http-metrics.js';
import { offerable, offerToPipeline, type ModernPath } from './http-modern-pipeline.js';
import type { RefusalLog } from './http-refusals.js';
import { principalLabel } from './http-security.js';
import { quoteClientText } from '../shared/client-text.js';
import { sessionEndedResult, type ModernAnswer } from './tool-call-pipeline.js';

/** Where a request handed over by the pipeline carries its answer to the server instance the SDK makes for it. */
const HANDED_OVER = 'mcp-workbench/handedOver';
/** Where a request checked by {@link ModernPrincipals.refusedAnyway} carries the note that the SDK accepted it. */
const CHECKED = 'mcp-workbench/checked';

/** What a request checked against the session limit is told (see {@link ModernHttp.serve}). */
export interface SessionLimit {
  /** Whether opening one more surface would pass the limit. */
  reached(): boolean;
  /** Answers the request with the limit's refusal (503). */
  refuse(): void;
}

/**
 * The MCP 2026-07-28 side of `--http`: no handshake and no session, each POST carries its protocol version, client
 * info and capabilities, and the SDK answers it with a fresh server instance. What must outlive a request — the
 * downstream servers a user's calls reach, and the input rounds of calls waiting on the client — lives in one
 * surface per principal: the bearer token that admitted the request (each `--token` is one principal), or, on a
 * loopback bind without a token, one local principal that every such client shares (README "Protocol eras").
 */
export interface ModernHttp {
  /**
   * Serves one modern request (its body already parsed); `principal` names who it is from (a digest, never the token
   * itself).
   */
  serve(req: IncomingMessage, body: unknown, principal: string, res: ServerResponse, limit?: SessionLimit): Promise<void>;
  /** Principals with a surface open. */
  principalCount(): number;
  /** The surfaces of one principal (one per capability set it declared). */
  countOf(principal: string): number;
  /** Closes the surfaces idle for `idleMs` with no request in progress and no input round held. */
  sweep(idleMs: number): void;
  close(): Promise<void>;
}

/** The surface of one principal's clients that declare the same capabilities, and the SDK handler in front of it. */
interface Principal {
  surface: UpstreamSurface;
  handler: McpHttpHandler;
  /** Stops relaying the surface's list changes to the handler's listen streams. */
  stopFollowing(): void;
  active: number;
  lastSeen: number;
  /** Its tools/call requests not answered yet: at shutdown each is answered SHUTTING_DOWN (and so cancelled). */
  calls: Map<ServerResponse, RequestId>;
  /**
   * Whether the SDK accepted a request of it (made a server instance for one): until then it is no client, and a
   * surface whose requests were all refused is dropped (README "Serving over HTTP", Refused requests do nothing).
   */
  admitted: boolean;
}

/** Where a modern client's requests are told of: its log, activity, refused requests and metrics. */
export interface ModernHttpReports {
  log: Logger;
  /** Each client's opening and end is counted here (one info line now and then), and a debug line. */
  activity: ActivityLog;
  /** Told of each request the SDK's checks refuse with 400 (README "Serving over HTTP", Refused requests do nothing). */
  refusals: Pick<RefusalLog, 'refused'>;
  metrics?: HttpMetrics | undefined;
}

export function createModernHttp(workbench: Workbench, version: string, options: CreateServerOptions, reports: ModernHttpReports): ModernHttp {
  return new ModernPrincipals(workbench, version, options, reports);
}

/** {@link ModernHttp} over one {@link Principal} per principal and capability set, opened on first use. */
class ModernPrincipals implements ModernHttp {
  /** Keyed by principal, then (after a NUL) the capabilities key. */
  private readonly principals = new Map<string, Principal>();

  constructor(
    private readonly workbench: Workbench,
    private readonly version: string,
    private readonly options: CreateServerOptions,
    private readonly reports: ModernHttpReports,
  ) {}

  /** SDK checks alone, for a request that meets the session limit: its factory only notes that a request passed. */
  private readonly checks = createMcpHandler(
    (ctx) => {
      (ctx.authInfo?.extra?.[CHECKED] as { accepted: boolean }).accepted = true;
      throw new Error('checked only');
    },
    { legacy: 'reject', onerror: () => {} },
  );

  /**
   * `limit`: checked when the request would open a surface (a principal and capability set not served yet), which
   * counts as a session (it has downstream connections of its own). A request the SDK would refuse anyway is given
   * its own refusal first (README "Refused requests do nothing"); one it would accept is refused by the limit.
   */
  async serve(req: IncomingMessage, body: unknown, principal: string, res: ServerResponse, limit?: SessionLimit): Promise<void> {
    // Clients of one principal that declare other capabilities get other downstream connections: a server may list
    // other tools for them (README "Serving over HTTP").
    const key = `${principal}\0${declaredCapabilitiesKey(body)}`;
    let entry = this.principals.get(key);
    if (!entry && limit?.reached()) {
      if (!(await this.refusedAnyway(req, body, principal, res))) limit.refuse();
      return;
    }
    entry ??= this.open(key);
    entry.active++;
    entry.lastSeen = Date.now();
    const call = toolCallId(body);
    if (call !== undefined) entry.calls.set(res, call);
    // A listen stream lasts as long as this response: the resources it names stay subscribed downstream until then.
    const listen = (body as { method?: unknown } | null)?.method === 'subscriptions/listen' ? {} : undefined;
    if (listen) void entry.surface.listens.opened(listen, (body as { params?: unknown }).params);
    try {
      // Answered first: an optional call would skip its argument when there are no metrics.
      const path = await answer(entry, req, body, { token: principal, clientId: key }, res, (response) => this.noteRefused(req, principal, response));
      this.reports.metrics?.modernRequest(path);
    } finally {
      if (listen) void entry.surface.listens.ended(listen);
      entry.calls.delete(res);
      entry.active--;
      entry.lastSeen = Date.now();
      if (!entry.admitted && entry.active === 0) this.drop(key, entry);
    }
  }

  principalCount(): number {
    return this.principals.size;
  }

  /** The surfaces of one principal (one per capability set it declared). */
  countOf(principal: string): number {
    let count = 0;
    for (const key of this.principals.keys()) if (key.startsWith(`${principal}\0`)) count++;
    return count;
  }

  sweep(idleMs: number): void {
    const now = Date.now();
    for (const [key, entry] of this.principals) {
      if (entry.active === 0 && entry.surface.rounds.size === 0 && now - entry.lastSeen >= idleMs) {
        void this.closePrincipal(key, `expired after ${Math.round(idleMs / 1000)} s idle`, 'idle');
      }
    }
  }

  async close(): Promise<void> {
    // Calls in flight are answered first, as a handshake-era session's are: the client learns the call was cut short
    // (and ending each response cancels its call downstream) before the connections are closed.
    const answered = [...this.principals.values()].flatMap((entry) => [...entry.calls].map(([res, id]) => answerShuttingDown(res, id)));
    await Promise.allSettled(answered);
    await Promise.allSettled([...this.principals.keys()].map((key) => this.closePrincipal(key, 'closed (shutting down)', 'shutdown')));
    await this.checks.close();
  }

  /**
   * Puts a request through the SDK's checks of a modern request (version, headers against the body, envelope,
   * required capabilities) with no server behind them: true when they refused it and their answer was written; false
   * when they accepted it (nothing is written).
   */
  private async refusedAnyway(req: IncomingMessage, body: unknown, principal: string, res: ServerResponse): Promise<boolean> {
    const checked = { accepted: false };
    const authInfo = { token: principal, clientId: principal, scopes: [], extra: { [CHECKED]: checked } };
    const response = await this.checks.fetch(await webRequest(req, body, res), { parsedBody: body, authInfo });
    if (checked.accepted) {
      await response.body?.cancel().catch(() => {});
      return false;
    }
    await this.noteRefused(req, principal, response);
    await writeResponse(response, res);
    return true;
  }

  /**
   * Tells the refusal log of a request the SDK's checks refused (400: headers against the body, a version not served,
   * a malformed envelope, a capability the client lacks), quoting the SDK's message; the response is left as it is.
   * An error the SDK answers in-band (200) or a method it does not know (404, as the spec maps it) is no refusal.
   */
  private async noteRefused(req: IncomingMessage, principal: string, response: Response): Promise<void> {
    if (response.status !== 400) return;
    const told = await response
      .clone()
      .json()
      .then((answer: { error?: { message?: unknown } }) => answer.error?.message)
      .catch(() => undefined);
    const message = typeof told === 'string' ? quoteClientText(told, 300) : 'Bad Request';
    this.reports.refusals.refused(req, {
      reason: 'bad_request',
      message: `${message} (an MCP 2026-07-28 request the protocol checks refuse: its MCP-Protocol-Version, Mcp-Method and Mcp-Name headers must say what the body says, and its _meta envelope name a version served)`,
      principal: principalLabel(principal),
    });
  }

  /** Opens the surface of `key` (principal, then capabilities), with one SDK handler that follows its list changes. */
  private open(key: string): Principal {
    const owner = key.slice(0, key.indexOf('\0'));
    const surface = createSurface(this.workbench, this.version, { ...this.options, isolated: true, owner, sessionLabel: () => 'http', principal: principalLabel(owner) });
    // One SDK handler per principal: its listen streams (and their event bus) hear only this principal's changes.
    // The SDK makes an instance only for a request it accepted: the first one admits the surface.
    const handler = createMcpHandler(
      (ctx) => {
        if (!entry.admitted) {
          entry.admitted = true;
          this.reports.activity.opened();
          this.reports.log.debug(`modern client ${principalLabel(owner)} (MCP 2026-07-28) has its own downstream servers (${this.principals.size} principal(s) × capability sets)`);
        }
        return surface.instance('modern', ctx.authInfo?.extra?.[HANDED_OVER] as Promise<ModernAnswer> | undefined);
      },
      { legacy: 'reject', onerror: (error) => this.reports.log.debug(`modern HTTP: ${errorMessage(error)}`) },
    );
    const entry: Principal = { surface, handler, stopFollowing: followChanges(surface, handler), active: 0, lastSeen: Date.now(), calls: new Map(), admitted: false };
    this.principals.set(key, entry);
    return entry;
  }

  /** Drops a surface none of whose requests the SDK accepted: it started nothing, and is no client to log. */
  private drop(key: string, entry: Principal): void {
    if (this.principals.get(key) !== entry) return;
    this.principals.delete(key);
    entry.stopFollowing();
    void Promise.allSettled([entry.handler.close(), entry.surface.close()]);
  }

  private async closePrincipal(key: string, why: string, reason: CloseReason): Promise<void> {
    const entry = this.principals.get(key);
    if (!entry) return;
    this.principals.delete(key);
    entry.stopFollowing();
    if (entry.admitted) this.reports.activity.closed(reason);
    this.reports.log.debug(`modern client ${key.slice(0, 8)} ${why} (${this.principals.size} principal(s))`, { event: 'client_closed', client: key.slice(0, 8), reason });
    await Promise.allSettled([entry.handler.close(), entry.surface.close().catch((error: unknown) => this.reports.log.debug(`closing a principal: ${errorMessage(error)}`))]);
  }
}

/**
 * Relays a surface's changes to the listen streams of its handler: a reload's tool list, resource and prompt lists
 * that change as toolboxes open, and updates of the resources a stream names. Returns what stops relaying.
 */
function followChanges(surface: UpstreamSurface, handler: McpHttpHandler): () => void {
  const stopTools = surface.onToolsChanged(() => handler.notify.toolsChanged());
  const stopNotices = surface.onNotice((notice) => {
    if (notice.kind === 'resources') handler.notify.resourcesChanged();
    else if (notice.kind === 'prompts') handler.notify.promptsChanged();
    else handler.notify.resourceUpdated(notice.uri);
  });
  return () => {
    stopTools();
    stopNotices();
  };
}

/**
 * Answers one request of `entry`'s principal: use_tool and open_toolbox through the tool-call pipeline, as on stdio,
 * when the SDK would take them as they are; the rest (and what the pipeline declines or hands over) through the SDK.
 * Resolves to the path the answer took once it is written; `noteRefused` sees each SDK response before it is.
 */
async function answer(
  entry: Principal,
  req: IncomingMessage,
  body: unknown,
  auth: { token: string; clientId: string },
  res: ServerResponse,
  noteRefused: (response: Response) => Promise<void>,
): Promise<ModernPath> {
  const viaSdk = async (handed?: Promise<ModernAnswer>): Promise<void> => {
    const authInfo = { ...auth, scopes: [], ...(handed ? { extra: { [HANDED_OVER]: handed } } : {}) };
    const response = await entry.handler.fetch(await webRequest(req, body, res), { parsedBody: body, authInfo });
    await noteRefused(response);
    await writeResponse(response, res);
  };
  const path = offerable(req.headers, body) ? await offerToPipeline(entry.surface, body, res, viaSdk) : undefined;
  if (path !== undefined) return path;
  await viaSdk();
  return 'sdk';
}

/**
 * The web Request the SDK's handler takes, made only for a request that goes to it (the pipeline needs none); its
 * signal aborts when the response closes (the client went away), or at once if it already has.
 */
function webRequest(req: IncomingMessage, body: unknown, res: ServerResponse): Promise<Request> {
  const abort = new AbortController();
  if (res.destroyed || req.socket.destroyed) abort.abort();
  else res.once('close', () => abort.abort());
  return toWebRequest(req, body, { signal: abort.signal });
}

/** The id of a tools/call request, else undefined. */
function toolCallId(body: unknown): RequestId | undefined {
  const message = body as { method?: unknown; id?: unknown } | null;
  if (message?.method !== 'tools/call') return undefined;
  return typeof message.id === 'string' || typeof message.id === 'number' ? message.id : undefined;
}

/**
 * Answers a tools/call whose response has not begun with a SHUTTING_DOWN tool result; resolves once it is written (or
 * at once when the response had begun: a stream already under way ends with the connection).
 */
function answerShuttingDown(res: ServerResponse, id: RequestId): Promise<void> {
  if (res.headersSent || res.writableEnded || res.destroyed) return Promise.resolve();
  const written = new Promise<void>((resolve) => res.once('finish', resolve).once('close', resolve));
  res.writeHead(200, { 'content-type': 'application/json' });
  // A 2026-07-28 result says it is complete (not an input round).
  res.end(JSON.stringify({ jsonrpc: '2.0', id, result: { ...sessionEndedResult(), resultType: 'complete' } }));
  return written;
}

/** No capabilities at all, or none of those the key is made of: every such request shares one key. */
const NO_CAPABILITIES_KEY = capabilitiesKey(undefined);
const KEYED_CAPABILITIES = ['sampling', 'elicitation', 'roots', 'tasks'];

/**
 * The capabilities key of what a modern request declares in its `_meta` envelope. Most clients declare none of the
 * capabilities the key is made of: they get the shared key without building it again for every request.
 */
function declaredCapabilitiesKey(body: unknown): string {
  const meta = (body as { params?: { _meta?: Record<string, unknown> } } | null)?.params?._meta;
  const declared = meta?.[CLIENT_CAPABILITIES_META_KEY];
  if (typeof declared !== 'object' || declared === null) return NO_CAPABILITIES_KEY;
  if (!KEYED_CAPABILITIES.some((name) => (declared as Record<string, unknown>)[name] !== undefined)) return NO_CAPABILITIES_KEY;
  return capabilitiesKey(declared as ClientCapabilities);
}

/** Writes a web Response to a Node response, streaming its body (SSE) until either side ends. */
async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => (headers[name] = value));
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  const onClose = (): void => void reader.cancel().catch(() => {});
  res.once('close', onClose);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise<void>((resolve) => res.once('drain', resolve).once('close', resolve));
    }
    res.end();
  } catch {
    res.destroy();
  } finally {
    res.off('close', onClose);
  }
}
