import {
  ProtocolErrorCode,
  type CallToolResult,
  type JSONRPCMessage,
  type LoggingLevel,
  type LoggingMessageNotification,
  type ProgressToken,
  type ClientCapabilities,
  type RequestId,
  type Result,
  type ServerContext,
  type ServerNotification,
  type TransportSendOptions,
} from '@modelcontextprotocol/server';
import { Cancellation } from '../shared/cancellation.js';
import { WorkbenchError } from '../errors.js';
import { failureResult } from '../core/tool-entry.js';
import type { RelayedRequest } from '../clients/types.js';
import { OPEN_TOOLBOX, USE_TOOL } from './meta-tools.js';
import { identityText, modernResponse, modernResponseText, type AcceptedEnvelopes } from './modern-wire.js';

/**
 * The one way a `use_tool` or `open_toolbox` request becomes its JSON-RPC response, whatever the transport. The
 * transports only frame: stdio hands each parsed line to {@link ToolCallPipeline.take} before the SDK sees it, and
 * HTTP does the same for each message of a POST. So the two give the same answer to the same request, byte for byte:
 * a downstream result is passed on as it came (the SDK's result schema never re-parses it), malformed parameters get
 * the same refusal (an `isError` result, README "Errors"), a thrown error the same code, message and data.
 *
 * Every other message (initialize, tools/list, management tools, unknown tools, task-augmented calls, a tools/call
 * whose `arguments` is not an object) is left to the MCP server, which is the same code on both transports and in both
 * protocol eras.
 *
 * For a client of MCP 2026-07-28 (stdio) the pipeline takes the common case too and answers it as the SDK's `Server`
 * would, byte for byte ({@link modernResponse}): a request whose envelope the SDK has accepted before, without
 * `inputResponses`/`requestState`. An answer it cannot frame itself (an input-required round, a result the SDK's
 * parse would change, a thrown error) is handed over to the MCP server with the request, which encodes it.
 */
export interface ToolCallPipeline {
  /** Takes a message meant for the pipeline (and answers it through the sink); returns false for anything else. */
  take(message: JSONRPCMessage): boolean;
  /**
   * Ends every call in flight, as the session ends (the client closed it, it expired, the workbench is shutting
   * down): each is cancelled downstream — a call on a shared server must not outlive its session and hold up the
   * other sessions' — and answered first, as a `SHUTTING_DOWN` tool result (in either era). `others`: tools/call
   * requests the MCP server was answering (stdio), answered the same way.
   */
  close(others?: Iterable<RequestId>): void;
}

/** Where the pipeline writes: the session's transport. */
export interface ReplySink {
  /** Sends a message; `relatedRequestId` ties it to the request's stream (Streamable HTTP). */
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void>;
  /** A synchronous send, when the transport has one (stdio): no promise per reply. */
  write?(message: JSONRPCMessage): void;
  /**
   * Sends a response (a message with an id) already serialised as JSON text, exactly as `write` would send the
   * message it stands for; when the transport has it, a modern call's answer is framed straight into text.
   */
  writeResponse?(text: string): void;
  /** Ends request `id`'s stream (handshake-era HTTP): a cancelled request gets no response to end it, nor its session's activity. */
  closeSSEStream?(id: RequestId): void;
}

/** What a meta-tool request brings besides its arguments. */
export interface MetaToolCall {
  /** The progress token of the request's `_meta`, when the client gave one. */
  progressToken?: ProgressToken;
  /** Sends a notification to the client (progress), tied to this request. */
  notify(notification: ServerNotification): void;
}

/** What a use_tool request brings besides its arguments. */
export interface UseToolCall extends MetaToolCall {
  cancellation: Cancellation;
  /** The client's `_meta` of the tools/call, to be sent on to the downstream call (trace context and the like). */
  meta?: Record<string, unknown>;
  /** Sends a request to the client (relayed sampling, elicitation, roots) on behalf of this call. */
  request(request: RelayedRequest, signal: AbortSignal): Promise<Result>;
  /**
   * MCP 2026-07-28 clients only: a modern server's input-required answer comes back as it is (for the client to answer
   * itself), and a retry carries the client's responses and the server's requestState on to the server.
   */
  pass?: { passInputRequired: true; inputResponses?: Record<string, unknown>; requestState?: string };
  /**
   * MCP 2026-07-28 clients only: the call asked for log messages (`io.modelcontextprotocol/logLevel` in its `_meta`);
   * the called server's messages at or above that level are sent on the call's own stream, and the level is sent on
   * to the server.
   */
  logLevel?: LoggingLevel;
  log?(params: LoggingMessageNotification['params']): void;
}

/** What a use_tool request of MCP 2026-07-28 brings besides its arguments (modern-use-tool.ts answers it). */
export interface ModernUseToolCall {
  /** Cancelled when the client cancels the request. */
  cancellation: Cancellation | undefined;
  /** The request's `_meta` as the SDK hands it to a handler (envelope lifted). */
  meta: Record<string, unknown> | undefined;
  /** Sends the call's notifications (progress, with the request's own token) to the client. */
  notify(notification: { method: string; params?: Record<string, unknown> }): void;
  /** The log level the request asks for, if any (see {@link UseToolCall.log}). */
  logLevel?: LoggingLevel;
  /** A retry's verified `requestState` and its `inputResponses` (SDK path only). */
  state?: unknown;
  responses?: Record<string, unknown>;
}

/**
 * A modern use_tool's answer: complete, or an input-required answer that still needs the request's context (the
 * SDK's) to sign its `requestState`.
 */
export type ModernAnswer =
  | { complete: CallToolResult }
  | {
      finish(ctx: ServerContext): Promise<CallToolResult>;
      /**
       * Called when the answer will never reach the client (its request was cancelled before it was written): what it
       * holds for the client's retry (an input round) is let go at once.
       */
      abandon?(reason: string): void;
    };

/** The pipeline's side of MCP 2026-07-28 (only a surface's modern pipeline has it). */
export interface ModernHandlers {
  envelopes: AcceptedEnvelopes;
  /** The identity the SDK stamps into every result's `_meta`. */
  serverInfo: Record<string, unknown>;
  useTool(args: Record<string, unknown>, call: ModernUseToolCall): Promise<ModernAnswer>;
  /** Records the capabilities a request declared (the SDK path does the same). */
  declared(capabilities: ClientCapabilities): void;
  /** Leaves request `id`'s answer to the MCP server: its tools/call handler returns `answer` for that request. */
  handOver(id: RequestId, answer: Promise<ModernAnswer>): void;
}

export interface ToolCallHandlers {
  useTool(args: Record<string, unknown>, call: UseToolCall): Promise<CallToolResult>;
  openToolbox(args: Record<string, unknown>, call: MetaToolCall): Promise<CallToolResult>;
  /** A server → client request tied to the request `relatedRequestId` (over HTTP: sent on its stream). */
  relay(request: RelayedRequest, signal: AbortSignal, relatedRequestId: RequestId): Promise<Result>;
}

/** The JSON-RPC error message every transport sends for a request it cannot take (id null when it is unknown). */
export function jsonRpcError(id: RequestId | null, code: number, message: string, data?: Record<string, unknown>): JSONRPCMessage {
  return { jsonrpc: '2.0', id, error: { code, message, ...(data && { data }) } } as JSONRPCMessage;
}

/**
 * The answer to a client message larger than the limit, on both transports (HTTP with status 413); `data.limit_bytes`
 * carries the limit for a client that acts on it.
 */
export function tooLargeError(id: RequestId | null, limit: number): JSONRPCMessage {
  return jsonRpcError(
    id,
    ProtocolErrorCode.InvalidRequest,
    `Payload Too Large: messages to the workbench are limited to ${limit} bytes; send a smaller message, or raise WORKBENCH_MAX_MESSAGE_BYTES where the workbench runs`,
    { limit_bytes: limit },
  );
}

export const PARSE_ERROR_JSON = 'Parse error: Invalid JSON';
export const PARSE_ERROR_JSON_RPC = 'Parse error: Invalid JSON-RPC message';

/** MCP 2026-07-28: how the pipeline reaches the MCP server with a request it hands over. */
export interface ModernPipelineOptions {
  handlers: ModernHandlers;
  /** Gives a message to the MCP server, as the transport would have. */
  deliver(message: JSONRPCMessage): void;
  /**
   * Leaves a request's answer to the MCP server some other way than {@link ModernHandlers.handOver} and `deliver`
   * (HTTP: each request reaches its own server instance, which is given the answer). Replaces both when given.
   */
  handOver?(message: JSONRPCMessage, answer: Promise<ModernAnswer>): void;
}

export function createToolCallPipeline(handlers: ToolCallHandlers, sink: ReplySink, modern?: ModernPipelineOptions): ToolCallPipeline {
  return new Pipeline(handlers, sink, modern);
}

/** The pipeline of one session: its requests in flight (to cancel them), and how it answers (see ToolCallPipeline). */
class Pipeline implements ToolCallPipeline {
  private readonly inFlight = new Map<RequestId, Cancellation>();
  private readonly write: ((message: JSONRPCMessage) => void) | undefined;
  private readonly respond: (message: JSONRPCMessage) => void;
  /** The sink's text path and the server identity as text, when both are there (a modern pipeline over stdio, HTTP). */
  private readonly text: { write(text: string): void; identity: string } | undefined;

  constructor(
    private readonly handlers: ToolCallHandlers,
    private readonly sink: ReplySink,
    private readonly modern: ModernPipelineOptions | undefined,
  ) {
    this.write = sink.write?.bind(sink);
    this.respond = this.write ?? ((message: JSONRPCMessage): void => void sink.send(message).catch(() => {}));
    this.text = modern && sink.writeResponse ? { write: sink.writeResponse.bind(sink), identity: identityText(modern.handlers.serverInfo) } : undefined;
  }

  take(message: JSONRPCMessage): boolean {
    const m = message as { id?: RequestId; method?: string; params?: Record<string, unknown> };
    if (m.method === 'notifications/cancelled') return this.cancel(m.params);
    if (m.method !== 'tools/call' || m.id === undefined || m.params === undefined || m.params.task !== undefined) return false;
    const name = m.params.name;
    if (name !== USE_TOOL && name !== OPEN_TOOLBOX) return false;
    const params = m.params;
    const args = params.arguments;
    // Not an object: a malformed tools/call, which the MCP server answers (-32602) as it does in every era.
    if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) return false;
    const input = (args ?? {}) as Record<string, unknown>;
    if (this.modern) return this.takeModern(message, m.id, name, params, input, this.modern);
    const meta = params._meta as Record<string, unknown> | undefined;
    const progressToken = meta?.progressToken as ProgressToken | undefined;
    if (name === OPEN_TOOLBOX) this.settle(m.id, this.handlers.openToolbox(input, { progressToken, notify: this.notifier(m.id) }));
    else this.useTool(m.id, input, meta, progressToken);
    return true;
  }

  close(others: Iterable<RequestId> = []): void {
    for (const [id, cancellation] of this.inFlight) {
      if (!cancellation.cancelled) this.answerEnded(id);
      cancellation.cancel('the client session ended');
    }
    this.inFlight.clear();
    for (const id of others) this.answerEnded(id);
  }

  /** The SHUTTING_DOWN answer of a call whose session ends; a modern one in the SDK's key order, so it is framed here. */
  private answerEnded(id: RequestId): void {
    const { _meta, content, isError } = sessionEndedResult();
    if (this.modern) this.respondModern(id, { _meta, content, isError }, this.modern.handlers.serverInfo);
    else this.respond({ jsonrpc: '2.0', id, result: { isError, content, _meta } } as JSONRPCMessage);
  }

  /** A client's notifications/cancelled: true for this pipeline's request; another's (the SDK's) just has its stream ended. */
  private cancel(params: Record<string, unknown> | undefined): boolean {
    const requestId = (params as { requestId?: RequestId } | undefined)?.requestId;
    const cancellation = requestId === undefined ? undefined : this.inFlight.get(requestId);
    if (cancellation) cancellation.cancel(params?.reason ?? 'cancelled by the client');
    else if (requestId !== undefined) this.sink.closeSSEStream?.(requestId); // the SDK never answers it once cancelled
    return cancellation !== undefined;
  }

  /** A handshake-era use_tool: the call, then its result or error as the response (none once cancelled). */
  private useTool(id: RequestId, input: Record<string, unknown>, meta: Record<string, unknown> | undefined, progressToken: ProgressToken | undefined): void {
    const cancellation = new Cancellation();
    this.inFlight.set(id, cancellation);
    let result: Promise<CallToolResult>;
    try {
      result = this.handlers.useTool(input, {
        cancellation,
        progressToken,
        meta,
        notify: this.notifier(id),
        request: (request, signal) => this.handlers.relay(request, signal, id),
      });
    } catch (error) {
      result = Promise.reject(error);
    }
    // A cancelled request gets no response (as the SDK does): its stream (HTTP) just ends with the call.
    const ended = (answer: () => void): void => {
      this.inFlight.delete(id);
      if (cancellation.cancelled) this.sink.closeSSEStream?.(id);
      else answer();
    };
    result.then(
      (value) => ended(() => this.respond({ jsonrpc: '2.0', id, result: value } as JSONRPCMessage)),
      (error: unknown) => ended(() => this.fail(id, error)),
    );
  }

  /**
   * A use_tool or open_toolbox call of MCP 2026-07-28: false (for the MCP server) unless the request is one the SDK
   * would take as it is; then the answer is written here when {@link modernResponse} can frame it, else handed over.
   */
  private takeModern(
    message: JSONRPCMessage,
    id: RequestId,
    name: string,
    params: Record<string, unknown>,
    input: Record<string, unknown>,
    modern: ModernPipelineOptions,
  ): boolean {
    if (params.inputResponses !== undefined || params.requestState !== undefined) return false;
    const modernHandlers = modern.handlers;
    const request = modernHandlers.envelopes.admit(params);
    if (request === undefined) return false;
    modernHandlers.declared(request.capabilities);
    const { meta } = request;
    const progressToken = meta?.progressToken as ProgressToken | undefined;
    const cancellation = new Cancellation();
    this.inFlight.set(id, cancellation);
    let answer: Promise<ModernAnswer>;
    try {
      const notify = this.modernNotifier(progressToken);
      answer =
        name === OPEN_TOOLBOX
          ? this.handlers.openToolbox(input, { progressToken, notify: notify as MetaToolCall['notify'] }).then((complete) => ({ complete }))
          : modernHandlers.useTool(input, { cancellation, meta, notify, ...(request.logLevel !== undefined && { logLevel: request.logLevel }) });
    } catch (error) {
      answer = Promise.reject(error);
    }
    answer.then(
      (value) => {
        this.inFlight.delete(id);
        if (cancellation.cancelled) return abandonAnswer(value);
        if (!('complete' in value) || !this.respondModern(id, value.complete, modernHandlers.serverInfo)) handOver(modern, message, id, answer);
      },
      () => {
        this.inFlight.delete(id);
        // A cancelled request gets no response (as the SDK does); an error is the SDK's to frame.
        if (!cancellation.cancelled) handOver(modern, message, id, answer);
      },
    );
    return true;
  }

  /** Writes a complete modern answer as the SDK would frame it; false when it cannot (the SDK must frame it). */
  private respondModern(id: RequestId, result: CallToolResult, serverInfo: Record<string, unknown>): boolean {
    const text = this.text;
    if (text !== undefined) {
      const framed = modernResponseText(id, result, text.identity);
      if (framed !== undefined) text.write(framed);
      return framed !== undefined;
    }
    const response = modernResponse(id, result, serverInfo);
    if (response) this.respond(response);
    return response !== undefined;
  }

  /** A modern call's notifications: progress with the request's own token (none without one), others as they are. */
  private modernNotifier(progressToken: ProgressToken | undefined): ModernUseToolCall['notify'] {
    if (progressToken === undefined) return this.untokenedNotify;
    return (notification) => {
      if (notification.method !== 'notifications/progress') return this.respond({ jsonrpc: '2.0', ...notification } as JSONRPCMessage);
      this.respond({ jsonrpc: '2.0', method: notification.method, params: { ...notification.params, progressToken } } as JSONRPCMessage);
    };
  }

  /** The notifier of every modern call without a progress token (most of them): one for the pipeline, not one per call. */
  private readonly untokenedNotify: ModernUseToolCall['notify'] = (notification) => {
    if (notification.method !== 'notifications/progress') this.respond({ jsonrpc: '2.0', ...notification } as JSONRPCMessage);
  };

  /** Notifications about request `id`: written at once on stdio, on the request's own stream over HTTP. */
  private notifier(id: RequestId): MetaToolCall['notify'] {
    const write = this.write;
    const sink = this.sink;
    return write
      ? (notification) => write({ jsonrpc: '2.0', ...notification } as JSONRPCMessage)
      : (notification) => void sink.send({ jsonrpc: '2.0', ...notification } as JSONRPCMessage, { relatedRequestId: id }).catch(() => {});
  }

  private settle(id: RequestId, result: Promise<CallToolResult>): void {
    result.then(
      (value) => this.respond({ jsonrpc: '2.0', id, result: value } as JSONRPCMessage),
      (error: unknown) => this.fail(id, error),
    );
  }

  /**
   * The answer the SDK's request handling gives for a thrown error: its code if it has one (else -32603), its
   * message, and its data when there is some.
   */
  private fail(id: RequestId, error: unknown): void {
    const e = error as { code?: unknown; message?: unknown; data?: unknown } | null;
    const code = e?.code;
    this.respond({
      jsonrpc: '2.0',
      id,
      error: {
        code: typeof code === 'number' && Number.isSafeInteger(code) ? code : ProtocolErrorCode.InternalError,
        message: error instanceof Error ? error.message : String(error),
        ...(e?.data !== undefined ? { data: e.data } : {}),
      },
    } as JSONRPCMessage);
  }
}

/** Lets go what an answer that will not be written holds for the client's retry (see {@link ModernAnswer}). */
export function abandonAnswer(answer: ModernAnswer): void {
  if ('abandon' in answer) answer.abandon?.('cancelled by the client before its answer was written');
}

/** Leaves request `id`'s answer to the MCP server, which frames it (see {@link ModernPipelineOptions}). */
function handOver(modern: ModernPipelineOptions, message: JSONRPCMessage, id: RequestId, answer: Promise<ModernAnswer>): void {
  if (modern.handOver) return modern.handOver(message, answer);
  modern.handlers.handOver(id, answer);
  modern.deliver(message);
}

/** The answer of a call whose session ended before it finished. */
export function sessionEndedResult(): CallToolResult {
  const error = new WorkbenchError(
    'SHUTTING_DOWN',
    'The client session ended (closed by the client, expired, or the workbench is shutting down) before this call finished; it was cancelled on the downstream server.',
    { failure: { kind: 'shutting-down' }, hint: 'Connect again and call the tool again if it is safe to repeat.' },
  );
  return failureResult(error);
}
