import type { Readable, Writable } from 'node:stream';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { watchListen } from '../core/listen-subscriptions.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import type { UpstreamSurface } from './create-server.js';
import { sendNotice } from './feature-handlers.js';
import type { ToolCallPipeline } from './tool-call-pipeline.js';
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/server';
import { StdioServerLineTransport } from './stdio-server-transport.js';

/** The stdio face of one surface while it serves. */
export interface StdioFront {
  /** Resolves, with why, when the client has gone: stdin ended or the transport closed. */
  readonly gone: Promise<string>;
  /** Stops following the surface, closes it (ending the session's servers), then the connection. */
  close(): Promise<void>;
}

/**
 * Serves a surface over stdio (README "Protocol eras"). The client's opening message picks the era: `initialize` is
 * served as MCP up to 2025-11-25, `server/discover` or a request carrying the 2026-07-28 envelope as MCP 2026-07-28.
 * In both, the tool-call pipeline takes `use_tool` and `open_toolbox` before the SDK server sees them; in the modern
 * era it hands back to the server (through the transport's own delivery) what it cannot answer as the SDK would. A
 * modern client's `subscriptions/listen` streams are followed here and served by the SDK.
 */
export function openStdioFront(surface: UpstreamSurface, streams: { stdin: Readable; stdout: Writable }, maxMessageBytes: number | undefined, log: Logger): StdioFront {
  const transport = new StdioServerLineTransport(streams.stdin, streams.stdout, maxMessageBytes);
  let pinned: ReturnType<UpstreamSurface['instance']> | undefined;
  let pipeline: ToolCallPipeline | undefined;
  const calls = serverCalls(transport);
  const stopTools = surface.onToolsChanged(() => {
    if (pinned?.transport) void pinned.sendToolListChanged().catch(() => {});
  });
  const stopNotices = surface.onNotice((notice) => pinned && sendNotice(pinned, notice));
  // Until the first message has told the era, a listen request (only MCP 2026-07-28 has one) is followed all the same,
  // and a tool call (the MCP server answers it) noted.
  transport.intercept = (message) => (watchListen(surface.listens, message), calls.track(message));
  const handle = serveStdio(
    ({ era }) => {
      const server = surface.instance(era);
      pinned = server;
      // The transport checks each request's _meta once, the protocol version too from now on in the modern era.
      transport.speaks(era);
      if (era === 'legacy') {
        const taking = (pipeline = surface.pipeline(transport));
        transport.intercept = (message) => taking.take(message) || calls.track(message);
      } else {
        const taking = (pipeline = surface.pipeline(transport, { deliver: (message) => transport.onmessage?.(message) }));
        transport.intercept = (message) => (watchListen(surface.listens, message), taking.take(message) || calls.track(message));
      }
      log.debug(`client speaks the ${era === 'modern' ? 'MCP 2026-07-28' : 'handshake (up to 2025-11-25)'} era`);
      return server;
    },
    { transport, onerror: (error) => log.debug(`stdio: ${errorMessage(error)}`) },
  );
  const gone = new Promise<string>((resolve) => {
    // A closed stdin means the client has gone (the transport reports it too; either way it is told once).
    streams.stdin.once('end', () => resolve('stdin closed'));
    streams.stdin.once('close', () => resolve('stdin closed'));
    void transport.closed.then(() => resolve('transport closed'));
  });
  return {
    gone,
    close: async () => {
      stopTools();
      stopNotices();
      // Calls in flight are answered SHUTTING_DOWN and cancelled downstream before the servers go (as over HTTP), so
      // a call is never told that its server exited when the workbench is the one stopping.
      pipeline?.close(calls.end());
      await surface.close();
      await handle.close();
    },
  };
}

/**
 * The tools/call requests the MCP server answers rather than the pipeline (a modern client's first request, a retry
 * with input responses, a management tool): `end` hands over those not answered yet, to be answered at shutdown, and
 * from then on the server's own late answer to one of them is dropped (a request is answered once).
 */
function serverCalls(transport: StdioServerLineTransport): { track(message: JSONRPCMessage): false; end(): RequestId[] } {
  const open = new Set<RequestId>();
  const ended = new Set<RequestId>();
  transport.outgoing = (message) => {
    const id = 'method' in message || !('id' in message) ? undefined : message.id;
    if (id === undefined) return true;
    open.delete(id);
    return !ended.has(id);
  };
  return {
    track: (message) => {
      const m = message as { id?: RequestId; method?: string; params?: { requestId?: RequestId } };
      if (m.method === 'tools/call' && m.id !== undefined) open.add(m.id);
      // A cancelled request gets no answer from the server, nor from us.
      else if (m.method === 'notifications/cancelled' && m.params?.requestId !== undefined) open.delete(m.params.requestId);
      return false;
    },
    end: () => {
      for (const id of open) ended.add(id);
      open.clear();
      return [...ended];
    },
  };
}
