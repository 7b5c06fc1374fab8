import type { IncomingMessage, ServerResponse } from 'node:http';
import type { LogFields, Logger } from '../log.js';
import { quoteClientText } from '../shared/client-text.js';
import { createRepeatWindow, type HeldBack, type RepeatWindow } from '../shared/repeat-window.js';
import { pathOf, sendJsonRpcError } from './http-body.js';

/**
 * Why the HTTP face refused a request before any server answered it: a fixed set (metric labels, log fields).
 * `bad_request` is a malformed request from a would-be MCP client (400): not JSON-RPC, no session where one is needed,
 * or a 2026-07-28 request the SDK's checks refuse (headers against the body, a version not served, its envelope).
 */
export type RefusalReason =
  | 'token_missing'
  | 'token_invalid'
  | 'host'
  | 'origin'
  | 'too_large'
  | 'session_limit'
  | 'unknown_session'
  | 'bad_request'
  | 'not_found'
  | 'method_not_allowed';

/**
 * Each reason's status, how logs name it, and the level of its lines. An unknown session id is debug: a client whose
 * session expired is told 404 and opens a new one, as the spec has it. A path or method that is not served is debug
 * too: it is what scanners probe, and no MCP client sends it.
 */
export const REFUSALS: Readonly<Record<RefusalReason, { status: number; label: string; level: 'info' | 'debug' }>> = {
  token_missing: { status: 401, label: 'no token', level: 'info' },
  token_invalid: { status: 401, label: 'wrong token', level: 'info' },
  host: { status: 403, label: 'foreign Host', level: 'info' },
  origin: { status: 403, label: 'foreign Origin', level: 'info' },
  too_large: { status: 413, label: 'body too large', level: 'info' },
  session_limit: { status: 503, label: 'session limit', level: 'info' },
  unknown_session: { status: 404, label: 'unknown session', level: 'debug' },
  bad_request: { status: 400, label: 'bad request', level: 'info' },
  not_found: { status: 404, label: 'unknown path', level: 'debug' },
  method_not_allowed: { status: 405, label: 'method not allowed', level: 'debug' },
};

export const REFUSAL_REASONS = Object.keys(REFUSALS) as RefusalReason[];

/** How long a window of refused requests lasts: the first of each kind and source is logged, the rest counted. */
export const REFUSAL_WINDOW_MS = 60_000;
/** Sources (addresses, tokens) per kind and window with a line of their own; refusals from further ones are counted. */
const SOURCES_PER_WINDOW = 10;
/** Sources a count line names; the rest are summed up as "from other sources". */
const SOURCES_NAMED = 5;

export interface Refusal {
  reason: RefusalReason;
  /** What the client is told, and the log line quotes: what was wrong and what to do. */
  message: string;
  /** The principal label (see principalLabel) of a request a token admitted: part of its source. */
  principal?: string;
  /** The line's `event` (default `request_refused`) and further facts for a JSON line. */
  fields?: LogFields;
}

/**
 * The log of requests the HTTP face refused (README "Command line", Logs): within a window, the first refusal of
 * each kind from each source (remote address, and the token when one was admitted) gets a line of its own saying what was
 * wrong and what to do; the rest are counted and said in one line per kind when the window ends. Every refusal is
 * counted (`counted`: the activity summary, metrics) however it is logged.
 */
export interface RefusalLog {
  /** Logs and counts a refused request; the caller answers it. */
  refused(req: IncomingMessage, refusal: Refusal): void;
  /** Logs and counts a refused request, and answers it with its status and `message` as a JSON-RPC error. */
  refuse(req: IncomingMessage, res: ServerResponse, refusal: Refusal, headers?: Record<string, string>): void;
  /** Says what the open windows counted (at shutdown, before the last activity summary) and stops their timers. */
  close(): void;
}

export interface RefusalLogOptions {
  log: Logger;
  /** The window (default REFUSAL_WINDOW_MS). */
  windowMs?: number;
  /** Told of every refused request. */
  counted(reason: RefusalReason): void;
}

export function createRefusalLog(options: RefusalLogOptions): RefusalLog {
  const { log, counted } = options;
  const windowMs = options.windowMs ?? REFUSAL_WINDOW_MS;
  // Each window says what it held back when it ends, so a flood that stops is still said then.
  const windows = new Map<RefusalReason, RepeatWindow<string>>(
    REFUSAL_REASONS.map((reason) => [
      reason,
      createRepeatWindow<string>({ windowMs, linesPerKey: 1, maxKeys: SOURCES_PER_WINDOW, onEnded: (held) => sayHeld(log, reason, held) }),
    ]),
  );

  const refused: RefusalLog['refused'] = (req, refusal) => {
    counted(refusal.reason);
    const address = req.socket.remoteAddress ?? '?';
    // Behind a reverse proxy every address is the proxy's: the token tells users apart there.
    const who = refusal.principal === undefined ? address : `${address} (${refusal.principal})`;
    const window = windows.get(refusal.reason)!;
    const { line, ended } = window.admit(who);
    sayHeld(log, refusal.reason, ended);
    if (line) sayFirst(log, req, refusal, who, windowMs);
  };

  return {
    refused,
    refuse(req, res, refusal, headers = {}) {
      refused(req, refusal);
      sendJsonRpcError(res, REFUSALS[refusal.reason].status, refusal.message, headers);
    },
    close() {
      for (const [reason, window] of windows) sayHeld(log, reason, window.drain());
    },
  };
}

/** The line of a refusal of its own: what was refused, from where, what was wrong and what to do. */
function sayFirst(log: Logger, req: IncomingMessage, refusal: Refusal, who: string, windowMs: number): void {
  const { status, label, level } = REFUSALS[refusal.reason];
  // Says why no more lines follow: a flood from here on is one count line per window.
  const repeats = `${label}; more from ${who} within ${Math.round(windowMs / 1000)} s are counted in one line`;
  log[level](`refused ${req.method ?? '?'} ${quoteClientText(pathOf(req))} from ${who}: ${status} ${refusal.message} (${repeats})`, {
    event: 'request_refused',
    reason: refusal.reason,
    http_status: status,
    ...refusal.fields,
  });
}

/** `49 more refused requests of this kind (401 wrong token) in the last 60 s: 10.0.0.7 ×45, 10.0.0.9 ×4`. */
function sayHeld(log: Logger, reason: RefusalReason, held: HeldBack<string> | undefined): void {
  if (held === undefined) return;
  const { status, label, level } = REFUSALS[reason];
  const seconds = Math.max(1, Math.ceil((Date.now() - held.since) / 1000));
  const named = held.byKey.slice(0, SOURCES_NAMED).map(([source, n]) => `${source} ×${n}`);
  const rest = held.total - held.byKey.slice(0, SOURCES_NAMED).reduce((n, [, c]) => n + c, 0);
  const sources = [...named, ...(rest > 0 ? [`${rest} from other sources`] : [])].join(', ');
  log[level](`${held.total} more refused request${held.total === 1 ? '' : 's'} of this kind (${status} ${label}) in the last ${seconds} s: ${sources}`, {
    event: 'requests_refused',
    reason,
    http_status: status,
    count: held.total,
    since: new Date(held.since).toISOString(),
    sources,
  });
}
