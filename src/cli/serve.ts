import { createServer } from '../server/create-server.js';
import { StdioServerLineTransport } from '../server/stdio-server-transport.js';
import { VERSION } from '../version.js';
import { createRuntime, untilShutdown, type RuntimeOptions } from './runtime.js';

export type ServeOptions = RuntimeOptions;

/**
 * Runs the workbench on stdio until the client closes stdin or a SIGINT/SIGTERM arrives, then ends every downstream
 * process tree and resolves with the exit code. stdout carries MCP messages only; everything else goes to stderr.
 */
export async function serve(options: ServeOptions): Promise<number> {
  const runtime = await createRuntime(options);
  const { connect, close: closeServer } = createServer(runtime.workbench, VERSION, {
    management: options.managementTools ? { statePath: runtime.statePath, log: options.log } : undefined,
  });
  const transport = new StdioServerLineTransport(process.stdin, process.stdout, options.maxMessageBytes);
  const done = untilShutdown(
    options.log,
    () => Promise.allSettled([runtime.close(), closeServer()]),
    (trigger) => {
      // A closed stdin means the client has gone (the transport reports it too; either way we stop once).
      process.stdin.once('end', () => trigger('stdin closed'));
      process.stdin.once('close', () => trigger('stdin closed'));
      transport.onclose = () => trigger('transport closed');
    },
  );
  await connect(transport);
  options.log.info(
    `serving ${runtime.config.toolboxes.length} toolbox(es) from ${runtime.config.source} on stdio (version ${VERSION}); servers start on first use`,
  );
  return done;
}
