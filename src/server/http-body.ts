import type { IncomingMessage, ServerResponse } from 'node:http';
import { ID_SEARCH_BYTES } from '../shared/message-id.js';

/** Request bodies read under a byte limit, and the JSON / JSON-RPC error answers the HTTP face sends itself. */

export function pathOf(req: IncomingMessage): string {
  const raw = req.url ?? '/';
  const end = raw.search(/[?#]/);
  return end === -1 ? raw : raw.slice(0, end);
}

/** After a 413, how much more of the refused body is read (and dropped) so the client sees the answer. */
const DISCARD_MAX_BYTES = 16 * 1024 * 1024;
const DISCARD_MAX_MS = 10_000;

/**
 * Reads a request body as UTF-8, stopping as soon as it exceeds `limit` bytes (declared or streamed): the rest is
 * never buffered.
 */
export function readBody(req: IncomingMessage, limit: number): Promise<string | { tooLarge: true; head: string; tail: string }> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let head: string | undefined;
    let tail = '';
    const finishTooLarge = (): void => {
      cleanup();
      resolve({ tooLarge: true, head: head!, tail });
    };
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (head === undefined && size <= limit) {
        chunks.push(chunk);
        return;
      }
      if (head === undefined) {
        // Over the limit: from here only both ends are kept, to find the request's id for the answer.
        const seen = Buffer.concat([...chunks, chunk]);
        head = seen.toString('latin1', 0, ID_SEARCH_BYTES);
        chunks.length = 0;
        tail = seen.toString('latin1', Math.max(0, seen.length - ID_SEARCH_BYTES));
      } else {
        tail = (tail + chunk.toString('latin1', Math.max(0, chunk.length - ID_SEARCH_BYTES))).slice(-ID_SEARCH_BYTES);
      }
      // A body that goes on and on is answered from its head alone (the rest is discarded or cut, see discardRest).
      if (size > limit + DISCARD_MAX_BYTES) {
        tail = '';
        finishTooLarge();
      }
    };
    const onEnd = (): void => {
      if (head !== undefined) return finishTooLarge();
      cleanup();
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const onError = (error: Error): void => {
      cleanup();
      reject(error);
    };
    const cleanup = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/**
 * Drops the rest of a refused body. Closing at once would reset a client that is still sending, and it might never
 * read the 413; a body that goes on past DISCARD_MAX_BYTES or DISCARD_MAX_MS gets its connection cut.
 */
export function discardRest(req: IncomingMessage): void {
  let dropped = 0;
  const cut = (): void => {
    clearTimeout(timer);
    req.socket.destroy();
  };
  const timer = setTimeout(cut, DISCARD_MAX_MS);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DISCARD_MAX_BYTES) cut();
  });
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

export function sendJson(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  const body = JSON.stringify(value);
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)), ...headers });
  res.end(body);
}

export function sendJsonRpcError(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}, code = -32000): void {
  sendJson(res, status, { jsonrpc: '2.0', error: { code, message }, id: null }, headers);
}
