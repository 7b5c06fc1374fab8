import { DEFAULT_INHERITED_ENV_VARS } from '@modelcontextprotocol/client/stdio';
import {
  SSEClientTransport,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  StreamableHTTPClientTransport,
  isInitializeRequest,
  isInitializedNotification,
  isJSONRPCErrorResponse,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type FetchLike,
  type MessageExtraInfo,
  type OAuthClientProvider,
  type Transport,
  type TransportSendOptions,
} from '@modelcontextprotocol/client';
import { remoteEndpoint } from '../config/remote-endpoint.js';
import type { RemoteServerConfig, ServerConfig, StdioServerConfig } from '../config/types.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import type { GroupTracker } from './orphan-reaper.js';
import { limitedFetch } from './limited-fetch.js';
import { ChildProcessTransport } from './stdio-transport.js';
import { within } from '../shared/within.js';

/**
 * The workbench's own variables that no child inherits, even with `inheritEnv: true`: `WORKBENCH_TOKEN` holds every
 * HTTP user's token, and a server that shows its environment would hand one user the others' (an entry's own `env`
 * may still name it, on purpose).
 */
export const NOT_INHERITED_ENV: ReadonlySet<string> = new Set(['WORKBENCH_TOKEN']);

/**
 * One place that turns a server entry into a transport. stdio children get the same safe default environment the
 * MCP SDK gives them (HOME, PATH, …, never shell functions) plus the entry's `env`, or the whole workbench
 * environment with `inheritEnv: true` (but for {@link NOT_INHERITED_ENV}).
 *
 * Remote (http/sse) transports send exactly the entry's `url` and `headers` from the config, plus the token of the
 * server's own OAuth sign-in when it has one. Nothing else goes into them: no header, token or cookie of the
 * workbench's own client can reach a downstream server, because nothing from an upstream request is ever passed here.
 */
export function childEnvironment(server: StdioServerConfig, workbenchEnv: Record<string, string | undefined>): Record<string, string> {
  const env: Record<string, string> = {};
  if (server.inheritEnv) {
    for (const [key, value] of Object.entries(workbenchEnv)) if (value !== undefined && !NOT_INHERITED_ENV.has(key)) env[key] = value;
  } else {
    for (const key of DEFAULT_INHERITED_ENV_VARS) {
      const value = workbenchEnv[key];
      // Exported shell functions ("() { …") are a known injection vector; the SDK skips them too.
      if (value !== undefined && !value.startsWith('()')) env[key] = value;
    }
  }
  return { ...env, ...server.env };
}

export interface TransportOptions {
  workbenchEnv: Record<string, string | undefined>;
  maxMessageBytes: number;
  log: Logger;
  /** Process groups of stdio children are reported here (see OrphanReaper). */
  groups?: GroupTracker;
  /** Non-JSON-RPC lines on a stdio server's stdout (see ChildProcessTransport). */
  onNoise?: (line: string) => void;
  /** The window of those lines' warnings (see ChildProcessTransport). */
  noiseWindowMs?: number;
  /** A remote server's OAuth (see OAuthConnector): the provider that signs its requests, and a fetch wrapper. */
  oauth?: RemoteAuth;
}

/** What a remote transport needs for OAuth: the provider (absent: none applies yet) and a wrapper of its fetch. */
export interface RemoteAuth {
  authProvider?: OAuthClientProvider;
  watch?: (fetch: FetchLike) => FetchLike;
}

/**
 * The SDK transport options of a remote entry: exactly its headers (with its URL's user info as `Authorization:
 * Basic`, see remoteEndpoint), the size limit, and its OAuth provider.
 */
function remoteOptions(server: RemoteServerConfig, maxMessageBytes: number, oauth: RemoteAuth | undefined): { requestInit: RequestInit; fetch: FetchLike; authProvider?: OAuthClientProvider } {
  const fetch = limitedFetch(maxMessageBytes);
  return {
    // A copy: the SDK must not share (or mutate) the config's header object.
    requestInit: { headers: remoteEndpoint(server).headers },
    fetch: oauth?.watch ? oauth.watch(fetch) : fetch,
    ...(oauth?.authProvider && { authProvider: oauth.authProvider }),
  };
}

export function createTransport(server: ServerConfig, options: TransportOptions): Transport {
  switch (server.type) {
    case 'stdio':
      return new ChildProcessTransport({
        command: server.command,
        args: server.args,
        env: childEnvironment(server, options.workbenchEnv),
        cwd: server.cwd,
        maxMessageBytes: options.maxMessageBytes,
        log: options.log,
        groups: options.groups,
        onNoise: options.onNoise,
        noiseWindowMs: options.noiseWindowMs,
      });
    case 'http':
      return new RenewingHttpClientTransport(server, options.log, options.maxMessageBytes, options.oauth);
    case 'sse':
      return createSseTransport(server, options.maxMessageBytes, options.log, options.oauth);
  }
}

/**
 * The legacy HTTP+SSE transport for a remote entry: a `type: "sse"` server, or an `http` server that answered like a
 * legacy one (see {@link legacySseStatus}). The SDK adds `requestInit.headers` to the event-stream GET and to
 * every POST; it follows redirects only within the URL's origin, so configured credentials never go elsewhere. A
 * session the server ended (a POST answered 404: it restarted) is renewed as for `http`.
 */
export function createSseTransport(server: RemoteServerConfig, maxMessageBytes: number, log: Logger, oauth?: RemoteAuth): Transport {
  return new RenewingHttpClientTransport(server, log, maxMessageBytes, oauth, 'sse');
}

/**
 * A JSON-RPC message POSTed to a legacy SSE server's message endpoint and answered 404: its session is gone. The
 * SDK's SSE transport reports any failed POST as a plain Error, so the fetch it is given throws this instead.
 */
class SseSessionGoneError extends Error {
  constructor() {
    super('the server no longer knows the session (HTTP 404 to a message)');
  }
}

/**
 * The fetch of a legacy SSE transport, typing what the SDK's transport would report as a plain Error for a message it
 * POSTed: a 404 (see {@link SseSessionGoneError}), any other error status as an SdkHttpError with its status (but a
 * 401 the transport's OAuth provider handles), and an HTML page where an acknowledgement was due as the unexpected
 * content it is (the answer would never come on the event stream: the call would wait for its timeout).
 */
function sseSessionWatch(base: FetchLike, oauth: boolean): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    const message = init?.method === 'POST' && typeof init.body === 'string' && init.body.includes('"jsonrpc"');
    if (!message || (response.status === 401 && oauth)) return response;
    const contentType = response.headers.get('content-type') ?? '';
    const page = response.ok && /^text\/html\b/i.test(contentType);
    if (response.ok && !page) return response;
    if (response.status === 404 || page) {
      await response.body?.cancel().catch(() => {});
      if (page) throw new SdkError(SdkErrorCode.ClientHttpUnexpectedContent, `Unexpected content type: ${contentType}`, { contentType });
      throw new SseSessionGoneError();
    }
    const text = await response.text().catch(() => '');
    throw new SdkHttpError(SdkErrorCode.ClientHttpNotImplemented, `Error POSTing to endpoint (HTTP ${response.status}): ${text}`, { status: response.status, statusText: response.statusText, text });
  };
}

/** An answer that says the server no longer knows the session: HTTP 404 (to a legacy SSE message, too). */
function isSessionGone(error: unknown): boolean {
  return (error instanceof SdkHttpError && error.status === 404) || error instanceof SseSessionGoneError;
}

/**
 * The HTTP status when a failed Streamable HTTP connect means "this is a legacy HTTP+SSE server": the initialize POST
 * was answered with a 4xx (typically 404 or 405, as the MCP spec's backwards-compatibility section describes), else
 * undefined. 401 and 403 are credential problems that SSE would not solve, so they are reported as they are. (The
 * modern `server/discover` probe that comes first is the SDK's: it falls back to `initialize` itself when the server
 * answers it without a modern error body, so the error seen here is the answer to `initialize`.)
 */
export function legacySseStatus(error: unknown): number | undefined {
  if (!(error instanceof SdkHttpError)) return undefined;
  const status = error.status;
  return status >= 400 && status < 500 && status !== 401 && status !== 403 ? status : undefined;
}

/** A URL for messages: scheme, host, port and path only (userinfo and query strings can carry secrets). */
export function describeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

/** How long a re-initialize after session expiry may take before the original request fails. */
const RENEW_TIMEOUT_MS = 30_000;
/**
 * How long a connection whose new session did not cure a "session unknown" answer reports such answers as they are
 * before it tries a new session again (a message accepted in between ends the wait at once).
 */
const RENEW_BACKOFF_MS = 60_000;
/** How long close() waits for the polite DELETE that ends the downstream session. */
const TERMINATE_TIMEOUT_MS = 1_500;

/**
 * The SDK's Streamable HTTP client transport (or, with kind "sse", its legacy HTTP+SSE one), plus recovery from
 * session expiry: when a server answers 404 to a request that carried a session id (its session ended — restart, idle
 * expiry; over SSE, a message POSTed to its endpoint), this transport re-initializes a new session on a fresh SDK
 * transport, replaying the client's own `initialize` request and `notifications/initialized`,
 * then sends the failed message once more. Concurrent requests that hit the same expiry share one re-initialize.
 * The Client above never sees the switch; a second 404 on the retried message is its error, and so is every such
 * answer after it until a message is accepted again or a back-off has passed (no new session per call for a server
 * that accepts `initialize` and refuses all the rest).
 */
export class RenewingHttpClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;

  private inner: StreamableHTTPClientTransport | SSEClientTransport;
  private initializeRequest: JSONRPCRequest | undefined;
  /** Bumped on every successful re-initialize, so requests that failed on an older session just retry. */
  private generation = 0;
  private renewing: Promise<void> | undefined;
  private renewals = 0;
  private closed = false;
  /**
   * Whether a 400 to a request that carried the session id may mean the session is unknown: servers built on the
   * SDK's own example answer so ("No valid session ID provided") after a restart, where the spec says 404. Cleared the
   * first time a new session does not cure a 400.
   */
  private badRequestMayBeSession = true;
  /**
   * When a new session last failed to cure a "session unknown" answer (the retried message got it again, or the new
   * session could not be initialized): a server that accepts `initialize` and refuses everything after it would
   * otherwise be given a new session on every call. Until a message is accepted again or {@link RENEW_BACKOFF_MS}
   * has passed, such an answer is reported as it is.
   */
  private uncuredAt: number | undefined;
  private readonly url: URL;

  constructor(
    private readonly server: RemoteServerConfig,
    private readonly log: Logger,
    private readonly maxMessageBytes: number,
    private readonly oauth?: RemoteAuth,
    private readonly kind: 'http' | 'sse' = 'http',
  ) {
    this.url = new URL(remoteEndpoint(server).url);
    this.inner = this.attach(this.createInner());
  }

  /** One POST per request over Streamable HTTP (a modern connection cancels by ending that request); not over SSE. */
  get hasPerRequestStream(): boolean {
    return this.kind === 'http';
  }

  get sessionId(): string | undefined {
    return this.inner instanceof StreamableHTTPClientTransport ? this.inner.sessionId : undefined;
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion(version);
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (isJSONRPCRequest(message) && isInitializeRequest(message)) this.initializeRequest = message;
    const generation = this.generation;
    // An SSE connection always has a session (its message endpoint).
    const hadSession = this.kind === 'sse' || this.sessionId !== undefined;
    try {
      await this.sendInner(message, options);
      this.uncuredAt = undefined;
    } catch (error) {
      // Only a legacy connection has a session to renew; a modern one has none (hadSession is false).
      const unknownSession = hadSession && this.kind === 'http' && this.badRequestMayBeSession && error instanceof SdkHttpError && error.status === 400;
      const expired = unknownSession || (hadSession && isSessionGone(error));
      if (!expired || this.closed || this.initializeRequest === undefined || isInitializeRequest(message) || this.renewalUncured()) throw error;
      await this.renew(generation, unknownSession).catch((failed: unknown) => {
        this.uncuredAt = Date.now();
        throw failed;
      });
      // The re-initialize already told the new session it is initialized.
      if (isInitializedNotification(message)) return;
      try {
        await this.sendInner(message, options);
        this.uncuredAt = undefined;
      } catch (again) {
        // A 400 that a new session did not cure was about the request, not the session: not taken for one again.
        if (unknownSession && again instanceof SdkHttpError && again.status === 400) this.badRequestMayBeSession = false;
        if (isSessionGone(again)) this.uncuredAt = Date.now();
        throw again;
      }
    }
  }

  /** Whether a new session tried lately did not help (see {@link uncuredAt}), so another is not tried yet. */
  private renewalUncured(): boolean {
    return this.uncuredAt !== undefined && Date.now() - this.uncuredAt < RENEW_BACKOFF_MS;
  }

  /** The SDK's SSE transport takes no send options (nothing it could do with them: one POST per message). */
  private sendInner(message: JSONRPCMessage, options: TransportSendOptions | undefined): Promise<void> {
    return this.inner instanceof StreamableHTTPClientTransport ? this.inner.send(message, options) : this.inner.send(message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Ending the session lets the server free it at once; a server that does not answer quickly is not waited for.
    if (this.inner instanceof StreamableHTTPClientTransport) await within(this.inner.terminateSession().catch(() => {}), TERMINATE_TIMEOUT_MS);
    await this.inner.close();
  }

  /** Redeems an OAuth callback (see OAuthConnector): the SDK transport's own finishAuth. */
  finishAuth(params: URLSearchParams): Promise<void> {
    return this.inner.finishAuth(params);
  }

  private createInner(): StreamableHTTPClientTransport | SSEClientTransport {
    const options = remoteOptions(this.server, this.maxMessageBytes, this.oauth);
    if (this.kind === 'http') return new StreamableHTTPClientTransport(this.url, options);
    return new SSEClientTransport(this.url, { ...options, fetch: sseSessionWatch(options.fetch, options.authProvider !== undefined) });
  }

  private attach<T extends StreamableHTTPClientTransport | SSEClientTransport>(inner: T): T {
    inner.onmessage = (message) => this.onmessage?.(message);
    inner.onerror = (error) => this.onerror?.(error);
    inner.onclose = () => {
      if (inner === this.inner) this.onclose?.();
    };
    return inner;
  }

  private async renew(failedGeneration: number, mayStillExist: boolean): Promise<void> {
    if (this.generation === failedGeneration && this.renewing === undefined) {
      this.renewing = this.reinitialize(mayStillExist).finally(() => {
        this.renewing = undefined;
      });
    }
    if (this.renewing) await this.renewing;
  }

  /**
   * Replays the handshake on a fresh SDK transport and switches to it only once the new session is usable. The old
   * session is ended with a DELETE when it `mayStillExist` (a 400 need not mean it is gone).
   */
  private async reinitialize(mayStillExist: boolean): Promise<void> {
    const initialize = this.initializeRequest!;
    const fresh = this.createInner();
    const id = `mcp-workbench-reinitialize-${++this.renewals}`;
    let settle: { resolve: (result: unknown) => void; reject: (error: Error) => void } | undefined;
    const answered = new Promise<unknown>((resolve, reject) => {
      settle = { resolve, reject };
    });
    const timer = setTimeout(() => settle?.reject(new Error(`no answer to initialize within ${RENEW_TIMEOUT_MS} ms`)), RENEW_TIMEOUT_MS);
    fresh.onmessage = (message) => {
      if (isJSONRPCResultResponse(message) && message.id === id) settle?.resolve(message.result);
      else if (isJSONRPCErrorResponse(message) && message.id === id) settle?.reject(new Error(message.error.message));
      // Nothing else can arrive before the handshake completes; anything that does is dropped with the handshake.
    };
    fresh.onerror = (error) => this.onerror?.(error);
    try {
      await fresh.start();
      await fresh.send({ ...initialize, id });
      const result = (await answered) as { protocolVersion?: unknown } | undefined;
      if (typeof result?.protocolVersion !== 'string') throw new Error('the initialize result has no protocolVersion');
      fresh.setProtocolVersion(result.protocolVersion);
      await fresh.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      if (this.closed) throw new Error('the connection was closed');
    } catch (error) {
      await fresh.close().catch(() => {});
      throw new Error(`the server no longer knows the session (HTTP ${mayStillExist ? 400 : 404}) and a new one could not be initialized: ${errorMessage(error)}`, { cause: error });
    } finally {
      clearTimeout(timer);
    }
    const old = this.inner;
    this.inner = this.attach(fresh);
    this.generation++;
    // A session the server ended needs only its local streams ended; one it may still hold is ended there too.
    old.onclose = undefined;
    old.onmessage = undefined;
    old.onerror = undefined;
    const ended = mayStillExist && old instanceof StreamableHTTPClientTransport ? within(old.terminateSession().catch(() => {}), TERMINATE_TIMEOUT_MS) : Promise.resolve();
    void ended.then(() => old.close()).catch(() => {});
    const status = mayStillExist ? 'HTTP 400 to its session id' : 'HTTP 404';
    this.log.info(`the server at ${describeUrl(this.server.url)} no longer knows the session (${status}); re-initialized a new session`);
  }
}
