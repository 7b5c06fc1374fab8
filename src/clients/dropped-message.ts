import { ProtocolError, ProtocolErrorCode, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/client';

/**
 * A downstream message larger than the workbench's limit is dropped unread (stdio and HTTP alike). When it was the
 * response to a request, the request is answered in its place so the caller is not left waiting: a JSON-RPC error with
 * the spec's Internal error code whose `data` carries this marker as fields. The slot recognises the drop by that
 * field (never by a private code or by message text) and reports MESSAGE_TOO_LARGE.
 */
export const DROPPED_KEY = 'mcp-workbench/dropped';

export interface DroppedMessage {
  reason: 'too-large';
  limitBytes: number;
  /** How many bytes had arrived when it was dropped (at least this large). */
  bytes?: number;
}

function describe(drop: DroppedMessage): string {
  const size = drop.bytes !== undefined ? ` (at least ${drop.bytes} bytes)` : '';
  return `the server's response was larger than the workbench's ${drop.limitBytes}-byte limit and was dropped${size}`;
}

/** The response the caller of request `id` gets in place of the dropped one. */
export function droppedResponse(id: RequestId, drop: DroppedMessage): JSONRPCMessage {
  return { jsonrpc: '2.0', id, error: { code: ProtocolErrorCode.InternalError, message: describe(drop), data: { [DROPPED_KEY]: drop } } };
}

/** A stream that failed because a message on it was too large (no request to answer in its place). */
export class DroppedMessageError extends Error {
  constructor(readonly drop: DroppedMessage) {
    super(describe(drop));
    this.name = 'DroppedMessageError';
  }
}

/** What was dropped, when `error` is the answer to a dropped message; undefined for any other error. */
export function droppedMessageOf(error: unknown): string | undefined {
  if (error instanceof DroppedMessageError) return error.message;
  if (!(error instanceof ProtocolError) || typeof error.data !== 'object' || error.data === null) return undefined;
  const drop = (error.data as Record<string, unknown>)[DROPPED_KEY];
  return isDrop(drop) ? describe(drop) : undefined;
}

function isDrop(value: unknown): value is DroppedMessage {
  return typeof value === 'object' && value !== null && (value as DroppedMessage).reason === 'too-large' && typeof (value as DroppedMessage).limitBytes === 'number';
}
