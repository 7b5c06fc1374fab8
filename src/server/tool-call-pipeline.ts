import {
  ProtocolErrorCode,
  type CallToolResult,
  type JSONRPCMessage,
  type ProgressToken,
  type RequestId,
  type Result,
  type ServerNotification,
  type TransportSendOptions,
} from '@modelcontextprotocol/server';
import { Cancellation } from '../shared/cancellation.js';
import type { RelayedMethod } from '../clients/client-manager.js';
import { OPEN_TOOLBOX, USE_TOOL } from './meta-tools.js';
import { describeValue } from './open-toolbox-params.js';

/**
 * The one way a `use_tool` or `open_toolbox` request becomes its JSON-RPC response, whatever the transport. The
 * transports only frame: stdio hands each parsed line to {@link ToolCallPipeline.take} before the SDK sees it, and
 * HTTP does the same for each message of a POST. So the two give the same answer to the same request, byte for byte:
 * a downstream result is passed on as it came (the SDK's result schema never re-parses it), a malformed request gets
 * the same -32602, a thrown error the same code, message and data.
 *
 * Every other message (initialize, tools/list, management tools, unknown tools, task-augmented calls) is left to the
 * MCP server, which is the same code on both transports too.
 */
export interface ToolCallPipeline {
  /** Takes a message meant for the pipeline (and answers it through the sink); returns false for anything else. */
  take(message: JSONRPCMessage): boolean;
}

/** Where the pipeline writes: the session's transport. */
export interface ReplySink {
  /** Sends a message; `relatedRequestId` ties it to the request's stream (Streamable HTTP). */
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void>;
  /** A synchronous send, when the transport has one (stdio): no promise per reply. */
  write?(message: JSONRPCMessage): void;
}

/** What a use_tool request brings besides its arguments. */
export interface UseToolCall {
  cancellation: Cancellation;
  progressToken?: ProgressToken;
  /** The client's `_meta` of the tools/call, to be sent on to the downstream call (trace context and the like). */
  meta?: Record<string, unknown>;
  /** Sends a notification to the client (progress), tied to this request. */
  notify(notification: ServerNotification): void;
  /** Sends a request to the client (relayed sampling, elicitation, roots) on behalf of this call. */
  request(request: { method: RelayedMethod; params?: Record<string, unknown> }, signal: AbortSignal): Promise<Result>;
  /**
   * MCP 2026-07-28 clients only: a modern server's input-required answer comes back as it is (for the client to answer
   * itself), and a retry carries the client's responses and the server's requestState on to the server.
   */
  pass?: { passInputRequired: true; inputResponses?: Record<string, unknown>; requestState?: string };
}

export interface ToolCallHandlers {
  useTool(args: Record<string, unknown>, call: UseToolCall): Promise<CallToolResult>;
  openToolbox(args: Record<string, unknown>): Promise<CallToolResult>;
  /** A server → client request tied to the request `relatedRequestId` (over HTTP: sent on its stream). */
  relay(request: { method: RelayedMethod; params?: Record<string, unknown> }, signal: AbortSignal, relatedRequestId: RequestId): Promise<Result>;
}

/** The JSON-RPC error message every transport sends for a request it cannot take (id null when it is unknown). */
export function jsonRpcError(id: RequestId | null, code: number, message: string): JSONRPCMessage {
  return { jsonrpc: '2.0', id, error: { code, message } } as JSONRPCMessage;
}

/** The answer to a client message larger than the limit, on both transports (HTTP with status 413). */
export function tooLargeError(id: RequestId | null, limit: number): JSONRPCMessage {
  return jsonRpcError(id, ProtocolErrorCode.InvalidRequest, `Payload Too Large: messages to the workbench are limited to ${limit} bytes`);
}

export const PARSE_ERROR_JSON = 'Parse error: Invalid JSON';
export const PARSE_ERROR_JSON_RPC = 'Parse error: Invalid JSON-RPC message';

export function createToolCallPipeline(handlers: ToolCallHandlers, sink: ReplySink): ToolCallPipeline {
  const inFlight = new Map<RequestId, Cancellation>();
  const write = sink.write?.bind(sink);
  const respond = write ?? ((message: JSONRPCMessage): void => void sink.send(message).catch(() => {}));

  const fail = (id: RequestId, error: unknown): void => {
    // The answer the SDK's request handling gives for a thrown error: its code if it has one (else -32603), its
    // message, and its data when there is some.
    const e = error as { code?: unknown; message?: unknown; data?: unknown } | null;
    const code = e?.code;
    respond({
      jsonrpc: '2.0',
      id,
      error: {
        code: typeof code === 'number' && Number.isSafeInteger(code) ? code : ProtocolErrorCode.InternalError,
        message: error instanceof Error ? error.message : String(error),
        ...(e?.data !== undefined ? { data: e.data } : {}),
      },
    } as JSONRPCMessage);
  };

  return {
    take(message) {
      const m = message as { id?: RequestId; method?: string; params?: Record<string, unknown> };
      if (m.method === 'notifications/cancelled') {
        const requestId = (m.params as { requestId?: RequestId } | undefined)?.requestId;
        const cancellation = requestId === undefined ? undefined : inFlight.get(requestId);
        if (!cancellation) return false;
        cancellation.cancel(m.params?.reason ?? 'cancelled by the client');
        return true;
      }
      if (m.method !== 'tools/call' || m.id === undefined || m.params === undefined || m.params.task !== undefined) return false;
      const name = m.params.name;
      if (name !== USE_TOOL && name !== OPEN_TOOLBOX) return false;
      const id = m.id;
      const params = m.params;
      const args = params.arguments;
      if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
        respond(jsonRpcError(id, ProtocolErrorCode.InvalidParams, `${name}: the tools/call "arguments" must be an object, got ${describeValue(args)}`));
        return true;
      }
      const input = (args ?? {}) as Record<string, unknown>;
      if (name === OPEN_TOOLBOX) {
        settle(id, handlers.openToolbox(input));
        return true;
      }
      const meta = params._meta as Record<string, unknown> | undefined;
      const cancellation = new Cancellation();
      inFlight.set(id, cancellation);
      let result: Promise<CallToolResult>;
      try {
        result = handlers.useTool(input, {
          cancellation,
          progressToken: meta?.progressToken as ProgressToken | undefined,
          meta,
          notify: write
            ? (notification) => write({ jsonrpc: '2.0', ...notification } as JSONRPCMessage)
            : (notification) => void sink.send({ jsonrpc: '2.0', ...notification } as JSONRPCMessage, { relatedRequestId: id }).catch(() => {}),
          request: (request, signal) => handlers.relay(request, signal, id),
        });
      } catch (error) {
        result = Promise.reject(error);
      }
      result.then(
        (value) => {
          inFlight.delete(id);
          if (!cancellation.cancelled) respond({ jsonrpc: '2.0', id, result: value } as JSONRPCMessage);
        },
        (error: unknown) => {
          inFlight.delete(id);
          // A cancelled request gets no response (as the SDK does).
          if (!cancellation.cancelled) fail(id, error);
        },
      );
      return true;
    },
  };

  function settle(id: RequestId, result: Promise<CallToolResult>): void {
    result.then(
      (value) => respond({ jsonrpc: '2.0', id, result: value } as JSONRPCMessage),
      (error: unknown) => fail(id, error),
    );
  }
}
