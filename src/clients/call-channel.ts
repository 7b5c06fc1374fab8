import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode, type JSONRPCMessage, type Progress, type Transport } from '@modelcontextprotocol/client';
import type { Cancellation } from '../shared/cancellation.js';
import { paramHeaders, type HeaderDeclaration } from './param-headers.js';

/**
 * `tools/call` requests sent straight over a connected transport, beside the SDK Client that owns it.
 *
 * Forwarding a call is the workbench's hot path, and the SDK's request machinery (schema parsing of every message
 * and result, per-request abort controllers and promise chains) costs more CPU than the forwarding itself. The
 * Client still does everything else on the connection — initialize, tools/list, notifications, and requests the
 * server makes of us — while calls use ids and progress tokens of their own (`wb-…` strings, which the Client never
 * issues), so the two never mix: the channel sees each message first and takes only its own.
 *
 * Semantics match the SDK's: a timeout that progress resets, bounded by a maximum total; `notifications/cancelled`
 * on timeout or abort; JSON-RPC errors surface as ProtocolError, our own timeouts as SdkError REQUEST_TIMEOUT;
 * closing fails everything in flight.
 *
 * On a modern (2026-07-28) connection every call carries the per-request `_meta` envelope (see {@link CallEnvelope})
 * and the answer's `resultType` is read: `complete` results come back without it, an `input_required` result comes
 * back as it is (with `resultType`), for the caller to fulfil and retry with `inputResponses` + `requestState`.
 * Over Streamable HTTP, a call of a tool that declares `Mcp-Param-*` headers carries them (see {@link declareHeaders}).
 */
export interface ChannelCallOptions {
  cancellation?: Cancellation;
  onprogress?: (progress: Progress) => void;
  /**
   * The client's `_meta` for this call (trace context and any other keys), sent on as it came; its progressToken is
   * replaced by the channel's own when `onprogress` is set, and dropped otherwise.
   */
  meta?: Record<string, unknown>;
  timeoutMs: number;
  maxTotalMs: number;
  /** A retry after an `input_required` answer (modern servers only): the responses, keyed as the server asked. */
  inputResponses?: Record<string, unknown>;
  /** The `requestState` of the `input_required` answer being retried, echoed exactly. */
  requestState?: string;
  /** Turns a failure (JSON-RPC error, timeout, closed connection) into the error the call rejects with. */
  describeError?: (error: unknown) => unknown;
}

interface Pending {
  resolve(result: Record<string, unknown>): void;
  reject(error: unknown): void;
  onprogress?: (progress: Progress) => void;
  cancellation?: Cancellation;
  /** Listening on `cancellation`, removed when the call settles. */
  onCancel?: (reason: unknown) => void;
  timeoutMs: number;
  /** When the call times out unless progress moves it (never past `hardDeadline`). */
  deadline: number;
  hardDeadline: number;
}

const ID_PREFIX = 'wb-';
/** How often deadlines are checked: a timeout fires at most this late. One sweep serves every call in flight. */
const SWEEP_MS = 50;

/**
 * A call's response stream (Streamable HTTP) ended before it carried the answer, and could not be resumed: the server
 * stopped, restarted or dropped the connection mid-call. Without this the call would wait for its whole timeout.
 */
export class ResponseStreamLostError extends Error {
  override name = 'ResponseStreamLostError';
}

/** The server answered, but not with a tools/call result (as opposed to answering with a JSON-RPC error). */
export class MalformedResultError extends Error {
  override name = 'MalformedResultError';
}

/**
 * The `_meta` keys a modern (2026-07-28) server requires on every request: protocol version, client info and client
 * capabilities (the SDK's PROTOCOL_VERSION_META_KEY, CLIENT_INFO_META_KEY and CLIENT_CAPABILITIES_META_KEY).
 * Undefined for a legacy connection, whose handshake said all this once.
 */
export type CallEnvelope = Record<string, unknown> | undefined;

export class CallChannel {
  private next = 0;
  private readonly pending = new Map<string, Pending>();
  private closedWith: unknown;
  private sweeper: NodeJS.Timeout | undefined;

  /** Tools whose calls carry `Mcp-Param-*` headers (a modern Streamable HTTP server's), by name; usually none. */
  private headerDeclarations: ReadonlyMap<string, readonly HeaderDeclaration[]> | undefined;

  /** The transport's synchronous send, when it has one (stdio): no promise per forwarded call. */
  private readonly write: ((message: JSONRPCMessage) => void) | undefined;

  constructor(
    private readonly transport: Transport & { write?: (message: JSONRPCMessage) => void },
    private readonly envelope: CallEnvelope = undefined,
  ) {
    this.write = transport.write?.bind(transport);
    // Installed after the Client connected, so the Client's own handler is the one we fall back to.
    const inner = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (!this.take(message)) inner?.(message, extra);
    };
  }

  /**
   * The `x-mcp-header` declarations of the server's current tool list (read once per list, not per call); undefined
   * for a server whose calls carry no such headers (stdio, legacy, or no tool declares any).
   */
  declareHeaders(declarations: ReadonlyMap<string, readonly HeaderDeclaration[]> | undefined): void {
    this.headerDeclarations = declarations;
  }

  /** Calls sent and not yet answered, timed out or cancelled. */
  get inFlight(): number {
    return this.pending.size;
  }

  /** Sends tools/call and resolves with the result object as the server sent it. */
  call(name: string, args: Record<string, unknown> | undefined, options: ChannelCallOptions): Promise<Record<string, unknown>> {
    const { cancellation, describeError } = options;
    if (this.closedWith !== undefined) return Promise.reject(describeError ? describeError(this.closedWith) : this.closedWith);
    if (cancellation?.cancelled) return Promise.reject(describeError ? describeError(cancellation.reason) : cancellation.reason);
    const id = `${ID_PREFIX}${this.next++}`;
    const params: Record<string, unknown> = { name };
    if (args !== undefined) params.arguments = args;
    const meta = options.meta;
    if (meta !== undefined) params._meta = downstreamMeta(meta, options.onprogress ? id : undefined);
    else if (options.onprogress) params._meta = { progressToken: id };
    if (this.envelope !== undefined) {
      // Ours, not the upstream client's: we are the client of this server.
      params._meta = { ...(params._meta as Record<string, unknown> | undefined), ...this.envelope };
      if (options.inputResponses !== undefined) params.inputResponses = options.inputResponses;
      if (options.requestState !== undefined) params.requestState = options.requestState;
    }

    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const now = Date.now();
      const pending: Pending = {
        resolve,
        reject: describeError ? (error) => reject(describeError(error)) : reject,
        onprogress: options.onprogress,
        cancellation,
        timeoutMs: options.timeoutMs,
        deadline: now + Math.min(options.timeoutMs, options.maxTotalMs),
        hardDeadline: now + options.maxTotalMs,
      };
      this.pending.set(id, pending);
      this.sweep();
      if (cancellation) {
        pending.onCancel = (reason) => {
          if (this.settle(id)) {
            this.cancel(id, String(reason ?? 'cancelled by the client'));
            pending.reject(reason ?? new Error('cancelled'));
          }
        };
        cancellation.onCancel(pending.onCancel);
      }
      const request = { jsonrpc: '2.0', id, method: 'tools/call', params } as JSONRPCMessage;
      if (this.write) {
        try {
          this.write(request);
        } catch (error) {
          if (this.settle(id)) pending.reject(error);
        }
      } else {
        const declared = this.headerDeclarations?.get(name);
        // Over Streamable HTTP the answer comes on the request's own stream; its end without one is told at once.
        const onRequestStreamEnd = (): void => {
          if (this.settle(id)) pending.reject(new ResponseStreamLostError('its response stream ended before the answer came'));
        };
        this.transport.send(request, { onRequestStreamEnd, ...(declared && { headers: paramHeaders(declared, args) }) }).catch((error: unknown) => {
          if (this.settle(id)) pending.reject(error);
        });
      }
    });
  }

  /** Fails every call in flight (the connection is gone) and refuses new ones with the same error. */
  close(error: unknown): void {
    this.closedWith = error;
    for (const id of [...this.pending.keys()]) {
      const pending = this.settle(id);
      pending?.reject(error);
    }
  }

  /** Removes a call from the books (timers, cancellation listener); returns it if it was still in flight. */
  private settle(id: string): Pending | undefined {
    const pending = this.pending.get(id);
    if (!pending) return undefined;
    this.pending.delete(id);
    if (pending.onCancel) pending.cancellation?.offCancel(pending.onCancel);
    return pending;
  }

  private cancel(id: string, reason: string): void {
    void this.transport
      .send({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        // A modern server wants the envelope on notifications too.
        params: { requestId: id, reason, ...(this.envelope !== undefined ? { _meta: this.envelope } : {}) },
      } as JSONRPCMessage)
      .catch(() => {});
  }

  /**
   * One timer for every call in flight, rather than one timer per call (creating and clearing a timer per call was a
   * measurable share of forwarding). It stops itself once nothing is in flight, so an idle workbench never wakes up.
   */
  private sweep(): void {
    if (this.sweeper) return;
    this.sweeper = setInterval(() => {
      if (this.pending.size === 0) {
        clearInterval(this.sweeper);
        this.sweeper = undefined;
        return;
      }
      const now = Date.now();
      for (const [id, pending] of this.pending) {
        if (now < pending.deadline) continue;
        this.settle(id);
        this.cancel(id, `timed out after ${pending.timeoutMs} ms`);
        // The same shape the SDK uses for its own timeouts (data.timeout), so callers tell it from a server's -32001.
        pending.reject(new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out', { timeout: pending.timeoutMs }));
      }
    }, SWEEP_MS);
    this.sweeper.unref();
  }

  /** A modern answer: `complete` without its resultType, `input_required` as it came, anything else refused. */
  private settleModern(pending: Pending, result: Record<string, unknown>): void {
    const { resultType, ...rest } = result;
    if (resultType === undefined || resultType === 'complete') pending.resolve(rest);
    else if (resultType === 'input_required') {
      if (typeof result.inputRequests === 'object' && result.inputRequests !== null && !Array.isArray(result.inputRequests)) pending.resolve(result);
      else pending.reject(new MalformedResultError('the server answered tools/call with input_required but without an "inputRequests" object'));
    } else {
      pending.reject(new MalformedResultError(`the server answered tools/call with resultType ${JSON.stringify(resultType)}, which this workbench does not know`));
    }
  }

  /** Settles our own responses and progress; everything else belongs to the Client. */
  private take(message: JSONRPCMessage): boolean {
    const m = message as { id?: unknown; method?: unknown; params?: { progressToken?: unknown }; result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
    if (m.method === undefined) {
      if (typeof m.id !== 'string' || !m.id.startsWith(ID_PREFIX)) return false;
      const pending = this.settle(m.id);
      if (!pending) return true; // answered after a timeout or cancel: drop it, as the SDK does
      if (m.error !== undefined) {
        const code = typeof m.error.code === 'number' ? m.error.code : ProtocolErrorCode.InternalError;
        pending.reject(new ProtocolError(code, typeof m.error.message === 'string' ? m.error.message : 'unknown error', m.error.data));
      } else if (typeof m.result === 'object' && m.result !== null && !Array.isArray(m.result)) {
        if (this.envelope === undefined) pending.resolve(m.result as Record<string, unknown>);
        else this.settleModern(pending, m.result as Record<string, unknown>);
      } else {
        pending.reject(new MalformedResultError('the server answered tools/call with a result that is not an object'));
      }
      return true;
    }
    if (m.method === 'notifications/progress') {
      const token = m.params?.progressToken;
      if (typeof token !== 'string' || !token.startsWith(ID_PREFIX)) return false;
      const pending = this.pending.get(token);
      if (pending?.onprogress) {
        // Progress resets the timeout, never past the maximum total.
        pending.deadline = Math.min(Date.now() + pending.timeoutMs, pending.hardDeadline);
        const { progressToken: _token, ...progress } = m.params as Progress & { progressToken: unknown };
        pending.onprogress(progress as Progress);
      }
      return true;
    }
    return false;
  }
}

/** The client's `_meta` with the progress token swapped for the channel's (or removed); every other key as sent. */
function downstreamMeta(meta: Record<string, unknown>, progressToken: string | undefined): Record<string, unknown> | undefined {
  const { progressToken: _client, ...rest } = meta;
  if (progressToken !== undefined) rest.progressToken = progressToken;
  for (const _key in rest) return rest;
  return undefined;
}
