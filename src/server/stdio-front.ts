import type { Readable, Writable } from 'node:stream';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { watchListen } from '../core/listen-subscriptions.js';
import { errorMessage } from '../errors.js';
import type { Logger } from '../log.js';
import type { UpstreamSurface } from './create-server.js';
import { sendNotice } from './feature-handlers.js';
import type { ToolCallPipeline } from './tool-call-pipeline.js';
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
  const stopTools = surface.onToolsChanged(() => {
    if (pinned?.transport) void pinned.sendToolListChanged().catch(() => {});
  });
  const stopNotices = surface.onNotice((notice) => pinned && sendNotice(pinned, notice));
  // Until the first message has told the era, a listen request (only MCP 2026-07-28 has one) is followed all the same.
  transport.intercept = (message) => (watchListen(surface.listens, message), false);
  const handle = serveStdio(
    ({ era }) => {
      const server = surface.instance(era);
      pinned = server;
      if (era === 'legacy') {
        const taking = (pipeline = surface.pipeline(transport));
        transport.intercept = (message) => taking.take(message);
      } else {
        const taking = (pipeline = surface.pipeline(transport, { deliver: (message) => transport.onmessage?.(message) }));
        transport.intercept = (message) => (watchListen(surface.listens, message), taking.take(message));
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
      pipeline?.close();
      await surface.close();
      await handle.close();
    },
  };
}
