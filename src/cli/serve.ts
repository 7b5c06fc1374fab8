import { createSurface } from '../server/create-server.js';
import { openStdioFront } from '../server/stdio-front.js';
import { VERSION } from '../version.js';
import { createRuntime, untilShutdown } from './runtime.js';
import type { RuntimeSettings } from './settings.js';

/**
 * Runs the workbench on stdio until the client closes stdin or a SIGINT/SIGTERM/SIGHUP arrives, then ends every downstream
 * process tree and resolves with the exit code. stdout carries MCP messages only; everything else goes to stderr.
 * How the client's era is told and served is server/stdio-front.ts's.
 */
export async function serve(settings: RuntimeSettings): Promise<number> {
  const { log } = settings.host;
  const runtime = await createRuntime(settings);
  const surface = createSurface(runtime.workbench, VERSION, {
    management: settings.session.managementTools ? { statePath: runtime.statePath, update: runtime.updateState } : undefined,
  });
  const front = openStdioFront(surface, { stdin: process.stdin, stdout: process.stdout }, settings.maxMessageBytes, log);
  const done = untilShutdown(
    log,
    // The front first: it answers the calls in flight before the runtime starts ending their servers.
    () => Promise.allSettled([front.close(), runtime.close()]),
    (trigger) => void front.gone.then(trigger),
  );
  log.info(
    `serving ${runtime.config.toolboxes.length} toolbox(es) from ${runtime.config.source} on stdio (version ${VERSION}); servers start on first use`,
  );
  return done;
}
