import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { watchListen } from '../core/listen-subscriptions.js';
import { createSurface } from '../server/create-server.js';
import { sendNotice } from '../server/feature-handlers.js';
import { StdioServerLineTransport } from '../server/stdio-server-transport.js';
import { errorMessage } from '../errors.js';
import { VERSION } from '../version.js';
import { createRuntime, untilShutdown, type RuntimeOptions } from './runtime.js';

export type ServeOptions = RuntimeOptions;

/**
 * Runs the workbench on stdio until the client closes stdin or a SIGINT/SIGTERM arrives, then ends every downstream
 * process tree and resolves with the exit code. stdout carries MCP messages only; everything else goes to stderr.
 *
 * The client's opening message picks the protocol era (README "Protocol eras"): `initialize` is served as MCP up to
 * 2025-11-25, `server/discover` or a request carrying the 2026-07-28 envelope as MCP 2026-07-28; in both the tool-call
 * pipeline is a framing shortcut in front of the server.
 */
export async function serve(options: ServeOptions): Promise<number> {
  const runtime = await createRuntime(options);
  const surface = createSurface(runtime.workbench, VERSION, {
    management: options.managementTools ? { statePath: runtime.statePath, log: options.log } : undefined,
  });
  const transport = new StdioServerLineTransport(process.stdin, process.stdout, options.maxMessageBytes);
  let pinned: ReturnType<typeof surface.instance> | undefined;
  const stopTools = surface.onToolsChanged(() => {
    if (pinned?.transport) void pinned.sendToolListChanged().catch(() => {});
  });
  const stopNotices = surface.onNotice((notice) => pinned && sendNotice(pinned, notice));
  const stopFollowing = (): void => {
    stopTools();
    stopNotices();
  };
  let handle: ReturnType<typeof serveStdio> | undefined;
  const done = untilShutdown(
    options.log,
    () =>
      Promise.allSettled([
        runtime.close(),
        (async () => {
          stopFollowing();
          await surface.close();
          await handle?.close();
        })(),
      ]),
    (trigger) => {
      // A closed stdin means the client has gone (the transport reports it too; either way we stop once).
      process.stdin.once('end', () => trigger('stdin closed'));
      process.stdin.once('close', () => trigger('stdin closed'));
      void transport.closed.then(() => trigger('transport closed'));
    },
  );
  // Until the first message has told the era, a listen request (only MCP 2026-07-28 has one) is followed all the same.
  transport.intercept = (message) => (watchListen(surface.listens, message), false);
  handle = serveStdio(
    ({ era }) => {
      const server = surface.instance(era);
      pinned = server;
      // The tool-call pipeline takes use_tool and open_toolbox before the server sees them, in either era; in the modern
      // era it hands back to the server (through the transport's own delivery) what it cannot answer as the SDK would.
      const pipeline =
        era === 'legacy' ? surface.pipeline(transport) : surface.pipeline(transport, { deliver: (message) => transport.onmessage?.(message) });
      // A modern client's listen streams name the resources it wants updates of: followed here, served by the SDK.
      transport.intercept = era === 'legacy' ? (message) => pipeline.take(message) : (message) => (watchListen(surface.listens, message), pipeline.take(message));
      options.log.debug(`client speaks the ${era === 'modern' ? 'MCP 2026-07-28' : 'handshake (up to 2025-11-25)'} era`);
      return server;
    },
    { transport, onerror: (error) => options.log.debug(`stdio: ${errorMessage(error)}`) },
  );
  options.log.info(
    `serving ${runtime.config.toolboxes.length} toolbox(es) from ${runtime.config.source} on stdio (version ${VERSION}); servers start on first use`,
  );
  return done;
}
