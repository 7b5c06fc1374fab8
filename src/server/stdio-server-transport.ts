import { PROTOCOL_VERSION_META_KEY, type JSONRPCMessage, type RequestId, type Transport } from '@modelcontextprotocol/server';
import { LineWriter } from '../shared/line-writer.js';
import { LineSplitter, type OversizedLine } from '../shared/line-splitter.js';
import { MODERN_REVISION } from './modern-wire.js';
import { PARSE_ERROR_JSON, PARSE_ERROR_JSON_RPC, jsonRpcError, tooLargeError } from './tool-call-pipeline.js';

/**
 * The server side of MCP over stdio, written for a proxy's hot path:
 * - lines are split without re-copying the whole buffer for every chunk;
 * - each message is JSON-parsed once and checked structurally (the SDK's request handlers parse their own params
 *   anyway), instead of a full schema parse of every message; a request's `_meta` is read once, by one check that
 *   knows the connection's era ({@link StdioServerLineTransport.speaks});
 * - `intercept` sees every message first and may take it (the tool-call pipeline, as a framing shortcut);
 * - the end of stdin closes the transport: the client has gone (the SDK's transport does not notice this).
 */
export class StdioServerLineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  /** Returning true consumes the message; the MCP server never sees it. */
  intercept?: (message: JSONRPCMessage) => boolean;
  /** Sees every message the MCP server sends; returning false drops it (a request already answered at shutdown). */
  outgoing?: (message: JSONRPCMessage) => boolean;
  /** Called once when the transport closes, whoever owns `onclose` (serveStdio does). */
  readonly closed: Promise<void>;
  private markClosed!: () => void;

  private readonly lines: LineSplitter;
  private started = false;
  private isClosed = false;
  /** Told by {@link speaks}: until then (the first message, which picks the era) no version is refused. */
  private modern = false;
  private readonly out: LineWriter;
  private readonly onData = (chunk: Buffer): void => this.lines.push(chunk);
  private readonly onError = (error: Error): void => this.onerror?.(error);
  private readonly onEnd = (): void => void this.close();
  // A client that goes away can break stdout before stdin ends (EPIPE): that is the end of the session too, never a
  // crash that would leave the downstream processes behind.
  private readonly onWriteError = (error: Error): void => {
    this.onerror?.(error);
    void this.close();
  };

  constructor(
    private readonly stdin: NodeJS.ReadableStream,
    private readonly stdout: NodeJS.WritableStream,
    /** Larger client messages are not buffered: they are answered with an error (with their id when it is found). */
    private readonly maxMessageBytes = 32 * 1024 * 1024,
  ) {
    this.out = new LineWriter(stdout);
    this.lines = new LineSplitter(maxMessageBytes, { line: (line) => this.line(line), oversized: (line) => this.tooLarge(line) });
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('StdioServerLineTransport already started');
    this.started = true;
    this.stdin.on('data', this.onData);
    this.stdin.on('error', this.onError);
    this.stdin.once('end', this.onEnd);
    this.stdout.on('error', this.onWriteError);
  }

  /**
   * The era the connection's first message chose (README "Protocol eras"). From then on, on a MCP 2026-07-28
   * connection, a request whose `_meta` names another protocol version is answered -32022 here (the SDK would serve it
   * over stdio as if it named 2026-07-28; over HTTP it refuses it).
   */
  speaks(era: 'legacy' | 'modern'): void {
    this.modern = era === 'modern';
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.isClosed || this.outgoing?.(message) === false) return Promise.resolve();
    this.out.write(message);
    return this.out.ready();
  }

  /** `send` without the promise, for the tool-call pipeline's replies and progress. */
  write(message: JSONRPCMessage | Record<string, unknown>): void {
    if (!this.isClosed) this.out.write(message);
  }

  /** `write` for a message already serialised (the tool-call pipeline's modern answers). */
  writeResponse(text: string): void {
    if (!this.isClosed) this.out.writeText(text);
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    this.stdin.off('data', this.onData);
    this.stdin.off('error', this.onError);
    this.stdin.off('end', this.onEnd);
    this.lines.reset();
    this.markClosed();
    this.onclose?.();
  }

  /** The end of an oversized message: answered like HTTP's 413, with the request's id when it can be found. */
  private tooLarge({ id }: OversizedLine): void {
    this.onerror?.(new Error(`a message from the client was larger than ${this.maxMessageBytes} bytes and was refused`));
    this.write(tooLargeError(id ?? null, this.maxMessageBytes));
  }

  private line(buffer: Buffer): void {
    // JSON.parse accepts surrounding whitespace (and so a CRLF line end); a blank line is skipped quietly.
    const text = buffer.toString('utf8');
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch (error) {
      // A blank line is skipped quietly; anything else gets the answer HTTP gives to a body that is not JSON.
      if (text.trim().length > 0) {
        this.onerror?.(new Error(`a line from the client is not JSON: ${(error as Error).message}`));
        this.write(jsonRpcError(null, -32700, PARSE_ERROR_JSON));
      }
      return;
    }
    if (!isJsonRpcMessage(message)) {
      this.onerror?.(new Error('a message from the client is not JSON-RPC 2.0'));
      this.write(jsonRpcError(null, -32700, PARSE_ERROR_JSON_RPC));
      return;
    }
    const refusal = metaRefusal(message, this.modern);
    if (refusal !== undefined) {
      // The SDK drops a request with a malformed _meta without an answer (its client would wait out its timeout):
      // refused as HTTP does.
      if (refusal.code === -32600) this.onerror?.(new Error(`a request from the client was refused: ${refusal.problem}`));
      this.write(jsonRpcError((message as { id: RequestId }).id, refusal.code, refusal.text, refusal.data));
      return;
    }
    if (this.intercept?.(message)) return;
    this.onmessage?.(message);
  }
}

interface MetaRefusal {
  code: -32600 | -32022;
  /** What was wrong, for the debug log. */
  problem: string;
  text: string;
  data?: Record<string, unknown>;
}

/**
 * Why a request is refused for its `_meta`, or undefined, reading `_meta` once. -32600 when it is not valid JSON-RPC
 * for MCP (not an object; a progress token that is neither a string nor a number); -32022 when, on a MCP 2026-07-28
 * connection (`modern`), it names another protocol version. Only requests with an id: a notification gets no answer
 * either way.
 */
function metaRefusal(message: JSONRPCMessage, modern: boolean): MetaRefusal | undefined {
  const m = message as { id?: unknown; method?: unknown; params?: { _meta?: unknown } };
  // A parsed JSON value is never undefined: an absent `_meta` and a missing one are the same here.
  const meta = m.params?._meta;
  if (meta === undefined || m.id === undefined || typeof m.method !== 'string') return undefined;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) {
    return badRequest(`params._meta of ${m.method} must be an object, not ${meta === null ? 'null' : Array.isArray(meta) ? 'an array' : typeof meta}`);
  }
  const fields = meta as Record<string, unknown>;
  const token = fields.progressToken;
  if (token !== undefined && typeof token !== 'string' && typeof token !== 'number') {
    return badRequest(`params._meta.progressToken of ${m.method} must be a string or a number, not ${token === null ? 'null' : Array.isArray(token) ? 'an array' : typeof token}`);
  }
  const requested = modern ? fields[PROTOCOL_VERSION_META_KEY] : undefined;
  if (typeof requested !== 'string' || requested === MODERN_REVISION) return undefined;
  const text =
    `Unsupported protocol version: ${requested}. This stdio connection speaks MCP ${MODERN_REVISION} (its first request chose it): ` +
    `name ${MODERN_REVISION} in every request's _meta, or start a new connection with initialize to speak ${requested}`;
  return { code: -32022, problem: `it names protocol version ${requested}`, text, data: { supported: [MODERN_REVISION], requested } };
}

function badRequest(problem: string): MetaRefusal {
  return { code: -32600, problem, text: `Bad Request: ${problem}` };
}

/** The structure the SDK's Protocol dispatches on: a request or notification (method), or a response (id + result/error). */
export function isJsonRpcMessage(value: unknown): value is JSONRPCMessage {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const m = value as Record<string, unknown>;
  if (m.jsonrpc !== '2.0') return false;
  const id = m.id;
  const validId = typeof id === 'string' || (typeof id === 'number' && Number.isInteger(id));
  if (typeof m.method === 'string') {
    const params = m.params;
    if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) return false;
    return id === undefined || validId;
  }
  return validId && ((typeof m.result === 'object' && m.result !== null) || (typeof m.error === 'object' && m.error !== null));
}
