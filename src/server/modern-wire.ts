import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  LOG_LEVEL_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SERVER_INFO_META_KEY,
  type CallToolResult,
  type ClientCapabilities,
  type JSONRPCMessage,
  type LoggingLevel,
  type RequestId,
} from '@modelcontextprotocol/server';

/**
 * What the SDK's `Server` does to a `tools/call` of MCP 2026-07-28, written out for the tool-call pipeline's common
 * case so that it can answer without the SDK's request handling and send the same bytes. The SDK stays the reference:
 * everything here either reproduces it exactly or declines (`undefined`), and a declined request or result is answered
 * by the SDK `Server`.
 *
 * On the way in the SDK lifts the reserved envelope keys out of `_meta`, checks the envelope against its schema, and
 * parses the remaining `_meta` (a loose object whose one known key, `progressToken`, comes first). On the way out it
 * parses the result (content blocks are re-built in schema key order), stamps `resultType: 'complete'` and the server's
 * identity into `_meta`, and frames the response as `{ result, jsonrpc, id }`.
 */

/** The one revision the fast path answers; others (a later revision, a typo) are left to the SDK. */
export const MODERN_REVISION = '2026-07-28';

const ENVELOPE_KEYS = [PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY, CLIENT_CAPABILITIES_META_KEY, LOG_LEVEL_META_KEY] as const;
/** Envelopes the SDK accepted, remembered by their text; a client sends the same one with every request. */
const MAX_ACCEPTED_ENVELOPES = 32;

export interface ModernRequest {
  /** The request's `_meta` without the envelope, as the SDK hands it to a handler (undefined when nothing is left). */
  meta: Record<string, unknown> | undefined;
  /** The capabilities the request declares. */
  capabilities: ClientCapabilities;
  /** The log level the request asks for (`io.modelcontextprotocol/logLevel`): the call's log messages at or above it. */
  logLevel: LoggingLevel | undefined;
}

/**
 * The envelopes of modern requests the SDK has accepted. The envelope schema is the SDK's (not exported), so rather
 * than re-implement it the fast path only takes requests whose envelope is one the SDK has already validated: the
 * first request of a client (or of a new capability set) goes through the SDK, and every later one can skip it.
 */
export class AcceptedEnvelopes {
  private readonly texts = new Set<string>();
  /** The envelope values of the last request admitted: a client repeats them, so most requests match without text. */
  private last: readonly unknown[] | undefined;

  /** Records the envelope of a request the SDK accepted (`ctx.mcpReq.envelope`). */
  accept(envelope: Record<string, unknown> | undefined): void {
    if (envelope === undefined || envelope[PROTOCOL_VERSION_META_KEY] !== MODERN_REVISION) return;
    if (this.texts.size >= MAX_ACCEPTED_ENVELOPES) this.texts.clear();
    this.texts.add(envelopeText(envelope));
  }

  /**
   * The request as the SDK's handler would see it, when the fast path can answer it: its `_meta` carries an envelope
   * the SDK accepted before, and the rest of `_meta` would pass the SDK's parse unchanged. Undefined otherwise.
   */
  admit(params: Record<string, unknown>): ModernRequest | undefined {
    const raw = params._meta;
    if (!isPlainObject(raw) || raw[PROTOCOL_VERSION_META_KEY] !== MODERN_REVISION) return undefined;
    if (!this.matchesLast(raw)) {
      if (!this.texts.has(envelopeText(raw))) return undefined;
      this.last = ENVELOPE_KEYS.map((key) => raw[key]);
    }
    let meta: Record<string, unknown> | undefined;
    for (const key in raw) {
      if (key === PROTOCOL_VERSION_META_KEY || key === CLIENT_INFO_META_KEY || key === CLIENT_CAPABILITIES_META_KEY || key === LOG_LEVEL_META_KEY) continue;
      if (Object.hasOwn(raw, key)) (meta ??= {})[key] = raw[key];
    }
    if (meta !== undefined && 'progressToken' in meta) {
      const token = meta.progressToken;
      if (typeof token !== 'string' && !(typeof token === 'number' && Number.isInteger(token))) return undefined;
      // The SDK's parse puts its one known key first.
      const { progressToken, ...rest } = meta;
      meta = { progressToken, ...rest };
    }
    return { meta, capabilities: raw[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities, logLevel: raw[LOG_LEVEL_META_KEY] as LoggingLevel | undefined };
  }

  /** Whether `meta`'s envelope is the one of the last request admitted (whose text the SDK accepted). */
  private matchesLast(meta: Record<string, unknown>): boolean {
    const last = this.last;
    if (last === undefined) return false;
    for (let i = 0; i < ENVELOPE_KEYS.length; i++) if (!sameJson(meta[ENVELOPE_KEYS[i]!] ?? null, last[i] ?? null)) return false;
    return true;
  }
}

/**
 * Whether two JSON values are equal, the order of object keys aside (`undefined` only equals itself). Walks without
 * building key lists: it runs on every modern request.
 */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let count = 0;
  for (const key in x) {
    if (!Object.hasOwn(x, key)) continue;
    if (!Object.hasOwn(y, key) || !sameJson(x[key], y[key])) return false;
    count++;
  }
  for (const key in y) if (Object.hasOwn(y, key) && --count < 0) return false;
  return count === 0;
}

/** The envelope keys of a `_meta`, in a fixed order, as text. */
function envelopeText(meta: Record<string, unknown>): string {
  return JSON.stringify(ENVELOPE_KEYS.map((key) => meta[key] ?? null));
}

const RESULT_KEYS = ['_meta', 'content', 'structuredContent', 'isError'];

/**
 * Whether a complete `tools/call` result is one the SDK's parse leaves as it is: only the known keys, in schema order;
 * text content blocks only; an `isError` that is a boolean; a `_meta` without a server identity of its own.
 */
function framable(result: CallToolResult): boolean {
  if (!isPlainObject(result)) return false;
  let next = 0;
  for (const key in result) {
    if (!Object.hasOwn(result, key)) return false;
    const at = RESULT_KEYS.indexOf(key, next);
    if (at === -1) return false;
    next = at + 1;
  }
  const { content, isError, _meta: meta } = result;
  if (!Array.isArray(content)) return false;
  for (let i = 0; i < content.length; i++) if (!isPlainText(content[i])) return false;
  if ('isError' in result && typeof isError !== 'boolean') return false;
  if ('structuredContent' in result && result.structuredContent === undefined) return false;
  return meta === undefined ? !('_meta' in result) : isPlainObject(meta) && !(SERVER_INFO_META_KEY in meta) && typeof meta.toJSON !== 'function';
}

/**
 * The response the SDK sends for a complete `tools/call` result, when {@link framable}; undefined for anything else
 * (the SDK answers it).
 */
export function modernResponse(id: RequestId, result: CallToolResult, serverInfo: Record<string, unknown>): JSONRPCMessage | undefined {
  if (!framable(result)) return undefined;
  const { content, isError, _meta: meta } = result;
  // Built key by key in the order the SDK's spread gives (the result's keys, then resultType; _meta stays first when
  // the result has one, else comes last).
  const stamp: Record<string, unknown> = meta === undefined ? {} : { ...meta };
  stamp[SERVER_INFO_META_KEY] = serverInfo;
  const stamped: Record<string, unknown> = {};
  if (meta !== undefined) stamped._meta = stamp;
  stamped.content = content;
  if ('structuredContent' in result) stamped.structuredContent = result.structuredContent;
  if ('isError' in result) stamped.isError = isError;
  stamped.resultType = 'complete';
  if (meta === undefined) stamped._meta = stamp;
  return { result: stamped, jsonrpc: '2.0', id } as JSONRPCMessage;
}

/** The server identity member of a result's `_meta`, as JSON text: made once per surface for {@link modernResponseText}. */
export function identityText(serverInfo: Record<string, unknown>): string {
  return `${JSON.stringify(SERVER_INFO_META_KEY)}:${JSON.stringify(serverInfo)}`;
}

/**
 * {@link modernResponse} as JSON text, byte for byte what `JSON.stringify` gives for it, written without building the
 * stamped copy of the result or serialising the server identity again (`identity`: {@link identityText}). Undefined
 * when the result is not {@link framable}.
 */
export function modernResponseText(id: RequestId, result: CallToolResult, identity: string): string | undefined {
  if (!framable(result)) return undefined;
  const meta = result._meta;
  let text = '{"result":{';
  if (meta !== undefined) {
    const own = JSON.stringify(meta);
    text += own === '{}' ? `"_meta":{${identity}},` : `"_meta":${own.slice(0, -1)},${identity}},`;
  }
  text += `"content":${JSON.stringify(result.content)}`;
  if ('structuredContent' in result) text += `,"structuredContent":${JSON.stringify(result.structuredContent)}`;
  if ('isError' in result) text += `,"isError":${String(result.isError)}`;
  text += ',"resultType":"complete"';
  if (meta === undefined) text += `,"_meta":{${identity}}`;
  return `${text}},"jsonrpc":"2.0","id":${JSON.stringify(id)}}`;
}

/** `{ type: 'text', text }` and nothing else, keys in that order: what the SDK's parse of a text block gives back. */
function isPlainText(block: unknown): boolean {
  if (!isPlainObject(block) || block.type !== 'text' || typeof block.text !== 'string') return false;
  let at = 0;
  for (const key in block) {
    if (!Object.hasOwn(block, key) || (at === 0 ? key !== 'type' : at === 1 ? key !== 'text' : true)) return false;
    at++;
  }
  return at === 2;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
