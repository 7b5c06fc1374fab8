import type { FetchLike } from '@modelcontextprotocol/client';
import { DroppedMessageError, droppedResponse } from './dropped-message.js';
import { requestSignal } from './request-signal.js';

/**
 * A `fetch` for the remote (Streamable HTTP, SSE) client transports that holds every message from the server to
 * `maxMessageBytes`, as the stdio transport does: a JSON body is counted whole, an event stream per event (bytes
 * since the last blank line). A message over the limit is never buffered. When the POST that opened the stream was a
 * request, its caller gets a JSON-RPC error at once (see dropped-message.ts, as over stdio) and the stream
 * ends; otherwise the stream fails with a DroppedMessageError.
 */
export function limitedFetch(maxMessageBytes: number, base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    // A signal per request (see request-signal.ts), released when its answer has been read, or failed.
    const link = init?.signal ? requestSignal(init.signal) : undefined;
    let response: Response;
    try {
      response = await base(url, link ? { ...init, signal: link.signal } : init);
    } catch (error) {
      link?.release();
      throw error;
    }
    if (!response.body) {
      link?.release();
      return response;
    }
    const eventStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
    const requestId = requestIdOf(init?.body);
    let since = 0;
    let previous = 0;
    const limited = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          if (eventStream) {
            // Bytes since the end of the last event ("\n\n", possibly split across chunks).
            let boundary = -1;
            for (let i = chunk.length - 1; i >= 0; i--) {
              if (chunk[i] === 0x0a && (i > 0 ? chunk[i - 1] === 0x0a || (chunk[i - 1] === 0x0d && chunk[i - 2] === 0x0a) : previous === 0x0a)) {
                boundary = i;
                break;
              }
            }
            since = boundary >= 0 ? chunk.length - boundary - 1 : since + chunk.length;
            previous = chunk[chunk.length - 1] ?? previous;
          } else {
            since += chunk.length;
          }
          if (since <= maxMessageBytes) {
            controller.enqueue(chunk);
            return;
          }
          if (eventStream && requestId !== undefined) {
            // End the partial event (its data is dropped as unreadable) and answer the request in its place.
            const error = droppedResponse(requestId, { reason: 'too-large', limitBytes: maxMessageBytes });
            controller.enqueue(new TextEncoder().encode(`\n\nevent: message\ndata: ${JSON.stringify(error)}\n\n`));
            controller.terminate();
            return;
          }
          controller.error(new DroppedMessageError({ reason: 'too-large', limitBytes: maxMessageBytes }));
        },
        flush() {
          link?.release();
        },
      }),
    );
    return new Response(limited, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}

function requestIdOf(body: unknown): string | number | undefined {
  if (typeof body !== 'string') return undefined;
  try {
    const message = JSON.parse(body) as { id?: unknown; method?: unknown };
    return typeof message.method === 'string' && (typeof message.id === 'string' || typeof message.id === 'number') ? message.id : undefined;
  } catch {
    return undefined;
  }
}
