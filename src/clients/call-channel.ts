import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, type JSONRPCMessage, type Progress } from '@modelcontextprotocol/sdk/types.js';

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
 * on timeout or abort; JSON-RPC errors surface as McpError; closing fails everything in flight.
 */
export interface ChannelCallOptions {
  signal?: AbortSignal;
  onprogress?: (progress: Progress) => void;
  timeoutMs: number;
  maxTotalMs: number;
}

interface Pending {
  resolve(result: Record<string, unknown>): void;
  reject(error: unknown): void;
  onprogress?: (progress: Progress) => void;
  resetTimer?: () => void;
}

const ID_PREFIX = 'wb-';

/** The server answered, but not with a tools/call result (as opposed to answering with a JSON-RPC error). */
export class MalformedResultError extends Error {
  override name = 'MalformedResultError';
}

export class CallChannel {
  private next = 0;
  private readonly pending = new Map<string, Pending>();
  private closedWith: unknown;

  constructor(private readonly transport: Transport) {
    // Installed after the Client connected, so the Client's own handler is the one we fall back to.
    const inner = transport.onmessage;
    transport.onmessage = (message, extra) => {
      if (!this.take(message)) inner?.(message, extra);
    };
  }

  /** Sends tools/call and resolves with the result object as the server sent it. */
  call(name: string, args: Record<string, unknown> | undefined, options: ChannelCallOptions): Promise<Record<string, unknown>> {
    if (this.closedWith !== undefined) return Promise.reject(this.closedWith);
    if (options.signal?.aborted) return Promise.reject(options.signal.reason);
    const id = `${ID_PREFIX}${this.next++}`;
    const params: Record<string, unknown> = { name };
    if (args !== undefined) params.arguments = args;
    if (options.onprogress) params._meta = { progressToken: id };

    return new Promise<Record<string, unknown>>((resolve, reject) => {
      const started = Date.now();
      let timer: NodeJS.Timeout | undefined;
      const cleanup = (): void => {
        clearTimeout(timer);
        this.pending.delete(id);
        options.signal?.removeEventListener('abort', onAbort);
      };
      const cancel = (reason: string): void => {
        void this.transport
          .send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason } } as JSONRPCMessage)
          .catch(() => {});
      };
      const onTimeout = (): void => {
        cleanup();
        cancel(`timed out after ${options.timeoutMs} ms`);
        // The same shape the SDK uses for its own timeouts (data.timeout), so callers tell it from a server's -32001.
        reject(new McpError(ErrorCode.RequestTimeout, 'Request timed out', { timeout: options.timeoutMs }));
      };
      const arm = (): void => {
        clearTimeout(timer);
        const left = options.maxTotalMs - (Date.now() - started);
        timer = setTimeout(onTimeout, Math.max(0, Math.min(options.timeoutMs, left)));
      };
      const onAbort = (): void => {
        cleanup();
        cancel(String(options.signal?.reason ?? 'cancelled by the client'));
        reject(options.signal?.reason ?? new Error('cancelled'));
      };
      options.signal?.addEventListener('abort', onAbort, { once: true });
      arm();
      this.pending.set(id, {
        resolve: (result) => {
          cleanup();
          resolve(result);
        },
        reject: (error) => {
          cleanup();
          reject(error);
        },
        onprogress: options.onprogress,
        resetTimer: options.onprogress ? arm : undefined,
      });
      this.transport.send({ jsonrpc: '2.0', id, method: 'tools/call', params } as JSONRPCMessage).catch((error: unknown) => {
        this.pending.get(id)?.reject(error);
      });
    });
  }

  /** Fails every call in flight (the connection is gone) and refuses new ones with the same error. */
  close(error: unknown): void {
    this.closedWith = error;
    for (const pending of [...this.pending.values()]) pending.reject(error);
  }

  /** Settles our own responses and progress; everything else belongs to the Client. */
  private take(message: JSONRPCMessage): boolean {
    const m = message as { id?: unknown; method?: unknown; params?: { progressToken?: unknown }; result?: unknown; error?: { code?: unknown; message?: unknown; data?: unknown } };
    if (m.method === undefined) {
      if (typeof m.id !== 'string' || !m.id.startsWith(ID_PREFIX)) return false;
      const pending = this.pending.get(m.id);
      if (!pending) return true; // answered after a timeout or cancel: drop it, as the SDK does
      if (m.error !== undefined) {
        const code = typeof m.error.code === 'number' ? m.error.code : ErrorCode.InternalError;
        pending.reject(new McpError(code, typeof m.error.message === 'string' ? m.error.message : 'unknown error', m.error.data));
      } else if (typeof m.result === 'object' && m.result !== null && !Array.isArray(m.result)) {
        pending.resolve(m.result as Record<string, unknown>);
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
        pending.resetTimer?.();
        const { progressToken: _token, ...progress } = m.params as Progress & { progressToken: unknown };
        pending.onprogress(progress as Progress);
      }
      return true;
    }
    return false;
  }
}
