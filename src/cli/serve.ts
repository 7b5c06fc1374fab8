import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { loadConfig, resolveConfigPath } from '../config/load.js';
import type { Logger } from '../log.js';
import { createServer } from '../server/create-server.js';
import { Workbench } from '../server/workbench.js';
import { VERSION } from '../version.js';

export interface ServeOptions {
  config?: string;
  disabledTools?: string[];
  maxMessageBytes?: number;
  env: Record<string, string | undefined>;
  cwd: string;
  log: Logger;
}

/** How long shutdown may take before the process exits anyway (children get SIGKILL well within this). */
const SHUTDOWN_DEADLINE_MS = 8_000;

/**
 * Runs the workbench on stdio until the client closes stdin or a SIGINT/SIGTERM arrives, then ends every downstream
 * process tree and resolves with the exit code. stdout carries MCP messages only; everything else goes to stderr.
 */
export async function serve(options: ServeOptions): Promise<number> {
  const { path } = resolveConfigPath({ flag: options.config, env: options.env, cwd: options.cwd });
  const config = await loadConfig(path, options.env);
  for (const warning of config.warnings) options.log.warn(warning);

  const workbench = new Workbench({
    config,
    env: options.env,
    log: options.log,
    version: VERSION,
    cliDisabled: options.disabledTools,
    maxMessageBytes: options.maxMessageBytes,
  });
  const { server, close: closeServer } = createServer(workbench, VERSION);
  const transport = new StdioServerTransport(process.stdin, process.stdout);

  let resolveDone: (code: number) => void;
  const done = new Promise<number>((resolve) => (resolveDone = resolve));
  let stopping = false;
  const stop = (why: string): void => {
    if (stopping) return;
    stopping = true;
    options.log.info(`shutting down (${why})`);
    const deadline = setTimeout(() => {
      options.log.warn(`shutdown took longer than ${SHUTDOWN_DEADLINE_MS} ms; exiting anyway`);
      resolveDone(0);
    }, SHUTDOWN_DEADLINE_MS);
    deadline.unref();
    void Promise.allSettled([workbench.close(), closeServer()]).then(() => {
      clearTimeout(deadline);
      resolveDone(0);
    });
  };

  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
  // The SDK's stdio server transport does not notice the client going away; a closed stdin means it has.
  process.stdin.once('end', () => stop('stdin closed'));
  process.stdin.once('close', () => stop('stdin closed'));
  transport.onclose = () => stop('transport closed');

  await server.connect(transport);
  options.log.info(
    `serving ${config.toolboxes.length} toolbox(es) from ${config.source} on stdio (version ${VERSION}); servers start on first use`,
  );
  return done;
}
