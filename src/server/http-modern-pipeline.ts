import { isJsonContentType, LOG_LEVEL_META_KEY, PROTOCOL_VERSION_META_KEY, type JSONRPCMessage, type RequestId } from '@modelcontextprotocol/server';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { UpstreamSurface } from './create-server.js';
import { OPEN_TOOLBOX, USE_TOOL } from './meta-tools.js';
import { MODERN_REVISION } from './modern-wire.js';
import { abandonAnswer, type ModernAnswer, type ReplySink } from './tool-call-pipeline.js';

/**
 * MCP 2026-07-28 over HTTP through the same tool-call pipeline as stdio (README "One answer on every transport"): a
 * use_tool or open_toolbox POST that the SDK's modern entry (`createMcpHandler`) would pass unchanged to its tools/call
 * handler is offered to the principal's pipeline, which answers it without a per-request server instance. The SDK
 * stays the reference: only requests whose checks are trivially passed are offered — a single JSON-RPC request with
 * a JSON content type, its `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers equal to the body's revision,
 * method and tool name, and no progress token or log level (an answer that streams progress or log messages is the
 * SDK's to frame). The pipeline
 * itself takes only requests whose envelope the SDK accepted before, so a client's first request always goes
 * through the SDK.
 */

/** How a modern HTTP request was answered: framed by the pipeline, worked out by it and framed by the SDK, or by the SDK. */
export type ModernPath = 'pipeline' | 'handed_over' | 'sdk';

/** What the SDK's per-request transport sends with a JSON answer, and with a stream (when notifications come first). */
const JSON_HEADERS = { 'content-type': 'application/json' };
const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/**
 * Whether a modern POST is one to offer to the pipeline (see the module's note); anything else goes to the SDK. Read
 * from the Node request's headers: a header sent twice is never equal to the one value the check wants, as with the
 * Fetch API's joined value.
 */
export function offerable(headers: IncomingHttpHeaders, body: unknown): boolean {
  if (!isObject(body) || body.method !== 'tools/call' || (typeof body.id !== 'string' && typeof body.id !== 'number')) return false;
  const params = body.params;
  if (!isObject(params)) return false;
  const name = params.name;
  if (name !== USE_TOOL && name !== OPEN_TOOLBOX) return false;
  const meta = params._meta;
  if (!isObject(meta) || meta[PROTOCOL_VERSION_META_KEY] !== MODERN_REVISION || 'progressToken' in meta || LOG_LEVEL_META_KEY in meta) return false;
  return (
    headers['mcp-protocol-version'] === MODERN_REVISION &&
    headers['mcp-method'] === 'tools/call' &&
    headers['mcp-name'] === name &&
    isJsonContentType(headers['content-type'])
  );
}

/**
 * Offers an {@link offerable} request to the surface's pipeline. Resolves to undefined when the pipeline does not take
 * it (the caller gives it to the SDK), else once it is answered: written here as the SDK's per-request transport
 * writes it, or handed over — `handOver` gives the request to the SDK with the answer already worked out, so the
 * downstream server is called once either way. A client that goes away cancels the call, and gets no answer.
 */
export async function offerToPipeline(
  surface: UpstreamSurface,
  body: unknown,
  res: ServerResponse,
  handOver: (answer: Promise<ModernAnswer>) => Promise<void>,
): Promise<ModernPath | undefined> {
  let settle!: (path: ModernPath | undefined) => void;
  const done = new Promise<ModernPath | undefined>((resolve) => (settle = resolve));
  const response = new PipelineResponse(res, () => settle('pipeline'));
  const pipeline = surface.pipeline(response, {
    deliver: () => {},
    handOver: (_message, answer) => {
      // A stream already begun cannot become the SDK's response; nothing notifies without a progress token or a log
      // level, which offerable() leaves to the SDK, so this does not happen — but a client must never be left waiting.
      if (response.streaming) {
        res.end();
        answer.then(abandonAnswer, () => {});
        return settle('pipeline');
      }
      handOver(answer).then(
        () => settle('handed_over'),
        () => settle('handed_over'),
      );
    },
  });
  if (!pipeline.take(body as JSONRPCMessage)) return undefined;
  const id = (body as { id: RequestId }).id;
  const onClose = (): void => {
    // After the pipeline's answer the response closes too; before one, the client went away (or the workbench
    // answered for it at shutdown): the call is cancelled downstream.
    if (response.done) return;
    pipeline.take({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'the client closed the connection' } });
    settle('pipeline');
  };
  res.once('close', onClose);
  try {
    return await done;
  } finally {
    res.off('close', onClose);
  }
}

/**
 * The pipeline's reply sink for one POST, writing as the SDK's per-request transport does: the answer as a JSON body,
 * or, when a notification comes first, a stream of events that the answer ends. `answered` is called once the answer
 * is written; nothing is written after the response ended or was destroyed.
 */
class PipelineResponse implements ReplySink {
  /** Whether the response became an event stream. */
  streaming = false;
  /** Whether the answer was written here. */
  done = false;

  constructor(
    private readonly res: ServerResponse,
    private readonly answered: () => void,
  ) {}

  send(message: JSONRPCMessage): Promise<void> {
    this.write(message);
    return Promise.resolve();
  }

  write(message: JSONRPCMessage): void {
    this.emit(JSON.stringify(message), 'id' in message);
  }

  writeResponse(text: string): void {
    this.emit(text, true);
  }

  /** Writes a message's text: a notification before the answer turns the response into a stream; the answer ends it. */
  private emit(text: string, isResponse: boolean): void {
    const res = this.res;
    if (res.writableEnded || res.destroyed) return;
    if (!isResponse) {
      // A notification before the answer: the SDK's transport turns the response into a stream.
      if (!this.streaming) res.writeHead(200, SSE_HEADERS);
      this.streaming = true;
      res.write(`event: message\ndata: ${text}\n\n`);
      return;
    }
    if (this.streaming) res.end(`event: message\ndata: ${text}\n\n`);
    else {
      // As the SDK's response is written (http-modern's writeResponse): head, body, end.
      res.writeHead(200, JSON_HEADERS);
      res.write(text);
      res.end();
    }
    this.done = true;
    this.answered();
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
