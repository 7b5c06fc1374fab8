import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import type { ClientCapabilities, LoggingMessageNotification, Result } from '@modelcontextprotocol/client';
import { relayableCapabilities } from '../clients/capabilities-key.js';
import type { ClientManagerOptions } from '../clients/client-manager.js';
import type { ServerNotice } from '../clients/feature-notices.js';
import type { RelayedMethod, RelayedRequest, UpstreamRelay } from '../clients/types.js';
import type { Logger } from '../log.js';

// Who gets what a downstream server sends or asks (log messages; sampling, elicitation and roots requests). A server
// of a session's own answers to that session only; a `shared` server to the one session with calls in flight on it,
// and a request it makes when that is not exactly one session is refused, never guessed (README "Serving over HTTP").

/**
 * A connected client session. Over stdio there is one; over HTTP each session has its own downstream connections
 * (its {@link SessionScope}), so what those servers log or ask (sampling, elicitation, roots) goes to that session
 * only. A `shared: true` server serves every session: its requests go to the one session with calls in flight on it,
 * and are refused when that is not exactly one — never guessed.
 */
export interface UpstreamSession {
  capabilities(): ClientCapabilities | undefined;
  /** Sends a request to this session's client outside of any call. */
  request(request: RelayedRequest, signal: AbortSignal): Promise<Result>;
  /**
   * Whether the client can be sent a request outside of any call: false for a client of MCP 2026-07-28, which is
   * reached only during its own calls (absent: it can).
   */
  reachableOutsideCalls?(): boolean;
  /** Delivers a downstream log message (subject to the client's logging/setLevel). */
  log(params: LoggingMessageNotification['params']): void;
  /** Tells the client its resource or prompt list changed, or a resource it subscribed to was updated. */
  notify?(notice: ServerNotice): void;
}

/** The use_tool call being made, so requests from the server it calls travel back with it (the same HTTP stream). */
export interface CallContext {
  session: UpstreamSession;
  request(request: RelayedRequest, signal: AbortSignal): Promise<Result>;
  /**
   * Sends a log message on this call's own stream: set for a call of an MCP 2026-07-28 client that asked for log
   * messages (its level is applied there). Such a client has no stream outside its calls.
   */
  log?(params: LoggingMessageNotification['params']): void;
}

/**
 * The calls in flight on one server (or one shared connection), and the requests it made during them that were relayed
 * to a session's client and not yet answered. Such a request is withdrawn from the client (its signal aborted, so the
 * SDK sends `notifications/cancelled`) when the session's last call here ends: no call is left to wait for the answer
 * (a handshake-era server does not cancel the requests of a call that was cancelled or timed out).
 */
export class CallsInFlight extends Set<CallContext> {
  private relays: Map<AbortController, UpstreamSession> | undefined;

  /** Relays a request made during `session`'s calls here: through `send`, withdrawn as said above. */
  relay(session: UpstreamSession, signal: AbortSignal, send: (signal: AbortSignal) => Promise<Result>): Promise<Result> {
    const withdraw = new AbortController();
    (this.relays ??= new Map()).set(withdraw, session);
    const done = (): void => void this.relays?.delete(withdraw);
    let sent: Promise<Result>;
    try {
      sent = send(AbortSignal.any([signal, withdraw.signal]));
    } catch (error) {
      sent = Promise.reject(error);
    }
    sent.then(done, done);
    return sent;
  }

  /** Removes an ended call; withdraws its session's relayed requests if no call of that session is left here. */
  end(call: CallContext): void {
    this.delete(call);
    const relays = this.relays;
    if (relays === undefined || relays.size === 0) return;
    for (const other of this) if (other.session === call.session) return;
    for (const [withdraw, session] of relays) {
      if (session !== call.session) continue;
      relays.delete(withdraw);
      withdraw.abort('mcp-workbench: the call that caused this request has ended, so nothing waits for its answer');
    }
  }
}

/** The routing books of one ClientManager: the session it answers to (none yet, or gone), and calls in flight. */
export interface RoutingBooks {
  upstream: UpstreamSession | undefined;
  /** Calls in flight per `toolbox/server`. */
  readonly activity: Map<string, CallsInFlight>;
}

const CAPABILITY_OF: Record<RelayedMethod, 'sampling' | 'elicitation' | 'roots'> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
  'roots/list': 'roots',
};

/**
 * Requests from a scope's own servers: to the scope's session, on the stream of its newest call there if any. One
 * made outside of any call to a client that cannot be reached then (MCP 2026-07-28) is refused, and said once per
 * server and method in the log: the server goes on without the answer (server-filesystem, asking for roots as it
 * starts, keeps the directories on its command line).
 */
export function scopeRelay(scope: RoutingBooks, log?: Logger): UpstreamRelay {
  const told = new Set<string>();
  return {
    capabilities: () => relayableCapabilities(scope.upstream?.capabilities()),
    request: (toolbox, server, request, signal) => {
      const session = scope.upstream;
      const capability = CAPABILITY_OF[request.method];
      if (!session) {
        return Promise.reject(new ProtocolError(ProtocolErrorCode.InvalidRequest, `no client session is connected to relay ${capability} (requested by ${toolbox}/${server})`));
      }
      const inFlight = scope.activity.get(`${toolbox}/${server}`);
      if (!inFlight?.size && session.reachableOutsideCalls?.() === false && log && !told.has(`${toolbox}/${server}\0${request.method}`)) {
        told.add(`${toolbox}/${server}\0${request.method}`);
        log.warn(
          `${toolbox}/${server} asked its client for ${request.method} outside of any call; the client speaks MCP 2026-07-28, which is reached only ` +
            'during its own use_tool calls, so the server was answered with an error and goes on without it (a server that reads roots this way keeps its own configuration)',
          { event: 'request_unrelayable', server: `${toolbox}/${server}`, method: request.method },
        );
      }
      return requestOf(inFlight, session, request, signal, capability, `${toolbox}/${server}`);
    },
  };
}

/**
 * Where a shared server's calls are tracked: per `toolbox/server` and set of client capabilities (its capabilitiesKey),
 * since each set has a connection of its own and a connection's requests and log messages concern only its sessions.
 */
export function sharedActivityKey(server: string, capabilities: string): string {
  return `${server}\0${capabilities}`;
}

/**
 * Log messages of a shared server's connection for one set of client capabilities: to a session only when its calls
 * are the only ones in flight on that connection (an MCP log message carries no request id); otherwise they stay in
 * the workbench's own log rather than reach another user.
 */
export function sharedLogRouter(activity: Map<string, CallsInFlight>, log: Logger, set: string): ClientManagerOptions['onLogMessage'] {
  return (toolbox, server, params) => {
    const logger = params.logger ? `${toolbox}/${server}/${params.logger}` : `${toolbox}/${server}`;
    const calls = activity.get(sharedActivityKey(`${toolbox}/${server}`, set));
    const sessions = sessionsInFlight(calls);
    if (sessions.length === 1) deliverLog(calls, sessions[0], { ...params, logger });
    else log.debug(`log message from ${logger} not forwarded: ${sessions.length} sessions have calls in flight on this shared server`);
  };
}

/**
 * Requests of a shared server's connection for one set of client capabilities: to the one session with calls in
 * flight on that connection; refused (never guessed) when there are none or several. Each shared connection declares
 * the capabilities of the clients it serves (SharedServers keeps one per set), so this relay declares none of its own.
 */
export function sharedRelay(activity: Map<string, CallsInFlight>, log: Logger, set: string): UpstreamRelay {
  return {
    capabilities: () => ({}),
    request: (toolbox, server, request, signal) => {
      const where = `shared server "${server}" of toolbox "${toolbox}"`;
      const inFlight = activity.get(sharedActivityKey(`${toolbox}/${server}`, set));
      const sessions = sessionsInFlight(inFlight);
      if (sessions.length !== 1) {
        const why =
          sessions.length === 0
            ? 'no client call is in flight on it, so no session can be told apart as the one asking'
            : `calls from ${sessions.length} client sessions are in flight on it, and a request does not say which call caused it`;
        log.warn(`refused ${request.method} from ${where}: ${why}`);
        return Promise.reject(
          new ProtocolError(ProtocolErrorCode.InvalidRequest, `mcp-workbench refused ${request.method} from ${where}: ${why}. Servers that ask their client for something should not be "shared".`),
        );
      }
      return requestOf(inFlight, sessions[0]!, request, signal, CAPABILITY_OF[request.method], `${toolbox}/${server}`);
    },
  };
}

/**
 * A server's log message to where it belongs: the stream of the newest call of `session` in flight on that server that
 * asked for log messages (a client of MCP 2026-07-28, which can be reached only during its calls), else the session
 * itself (a handshake-era client, subject to its logging/setLevel).
 */
export function deliverLog(calls: Set<CallContext> | undefined, session: UpstreamSession | undefined, params: LoggingMessageNotification['params']): void {
  let listening: CallContext | undefined;
  if (calls) for (const call of calls) if (call.log && call.session === session) listening = call;
  if (listening) listening.log!(params);
  else session?.log(params);
}

/** The sessions that have calls in flight, each once. */
function sessionsInFlight(calls: Set<CallContext> | undefined): UpstreamSession[] {
  if (!calls || calls.size === 0) return [];
  return [...new Set([...calls].map((c) => c.session))];
}

/**
 * Sends a relayed request to `session`: on the stream of its newest call in `inFlight` (over HTTP that is the reply
 * stream the client is reading; withdrawn when the session's calls there have ended, see CallsInFlight), else on the
 * session itself. Refused when the client does not support the capability.
 */
function requestOf(
  inFlight: CallsInFlight | undefined,
  session: UpstreamSession,
  request: RelayedRequest,
  signal: AbortSignal,
  capability: 'sampling' | 'elicitation' | 'roots',
  from: string,
): Promise<Result> {
  if (session.capabilities()?.[capability] === undefined) {
    return Promise.reject(new ProtocolError(ProtocolErrorCode.InvalidRequest, `the client connected to mcp-workbench does not support ${capability} (requested by ${from})`));
  }
  let call: CallContext | undefined;
  if (inFlight) for (const c of inFlight) if (c.session === session) call = c;
  return call ? inFlight!.relay(session, signal, (withdraw) => call.request(request, withdraw)) : session.request(request, signal);
}

/**
 * Runs a forwarded call while recording it in `books` under `key` (toolbox/server) as in flight, so requests and log
 * messages that server sends meanwhile reach this call's session. Returns the call's own promise (the bookkeeping hangs
 * off it), so the hot path gains no promise turn.
 */
export function trackCall<T>(books: Map<string, CallsInFlight>, key: string, call: CallContext, run: () => Promise<T>): Promise<T> {
  let calls = books.get(key);
  if (!calls) books.set(key, (calls = new CallsInFlight()));
  const inFlight = calls;
  inFlight.add(call);
  const done = (): void => inFlight.end(call);
  let promise: Promise<T>;
  try {
    promise = run();
  } catch (error) {
    done();
    return Promise.reject(error);
  }
  promise.then(done, done);
  return promise;
}
