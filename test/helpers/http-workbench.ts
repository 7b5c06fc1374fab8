import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { listDescendants } from '../../src/shared/process-tree.js';
import { isOrphanWatchdog } from '../../src/clients/orphan-reaper.js';
import { stopChild } from './http-servers.js';
import { node, paths, tempDir } from './workbench-process.js';

export interface HttpSession {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Ends the session (DELETE) and closes the client. */
  close(): Promise<void>;
}

/** The built workbench running `serve --http …` as a real process. */
export interface HttpWorkbench {
  /** The MCP endpoint it printed: http://127.0.0.1:PORT/mcp. */
  url: string;
  /** http://127.0.0.1:PORT */
  origin: string;
  pid: number;
  process: ChildProcess;
  /** The temp dir it runs in (its start directory) and its config file there. */
  dir: string;
  configPath: string;
  stderr(): string;
  stdout(): string;
  descendants(): Promise<number[]>;
  /** An SDK client over Streamable HTTP, with the given extra request headers (e.g. the token). */
  connect(headers?: Record<string, string>, clientOptions?: ConstructorParameters<typeof Client>[1]): Promise<HttpSession>;
  /** SIGTERM (SIGKILL after 10 s); resolves with the exit code once the process is gone; removes the temp dir. */
  stop(): Promise<number | null>;
}

/**
 * Starts `node dist/cli/main.js serve --config <tmp>/workbench-config.json ...args` and waits for its
 * `listening on http://…/mcp` line. Rejects (with stderr and the exit code) if it exits first.
 */
export async function startHttpWorkbench(config: unknown, args: string[], env: Record<string, string> = {}): Promise<HttpWorkbench> {
  const { dir, cleanup } = await tempDir('wb-http-');
  const configPath = join(dir, 'workbench-config.json');
  await writeFile(configPath, JSON.stringify(config, null, 2));
  const cli = spawnCli(['serve', '--config', configPath, ...args], dir, env);
  const { child } = cli;
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  let url: string;
  try {
    url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`the workbench did not start listening:\n${cli.stderr()}`)), 60_000);
      child.stderr!.on('data', () => {
        const match = /listening on (http:\/\/\S+\/mcp)/.exec(cli.stderr());
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
      void exited.then(([code]) => {
        clearTimeout(timer);
        reject(Object.assign(new Error(`the workbench exited with ${code}:\n${cli.stderr()}`), { exitCode: code, stderr: cli.stderr() }));
      });
    });
  } catch (error) {
    await cleanup();
    throw error;
  }
  const pid = child.pid!;
  return {
    url,
    origin: new URL(url).origin,
    pid,
    process: child,
    dir,
    configPath,
    stderr: cli.stderr,
    stdout: cli.stdout,
    descendants: async () => (await listDescendants(pid)).filter((child) => !isOrphanWatchdog(child)),
    connect: async (headers = {}, clientOptions = { capabilities: {} }) => {
      const client = new Client({ name: 'http-test', version: '1.0.0' }, clientOptions);
      const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
      await client.connect(transport);
      return {
        client,
        transport,
        close: async () => {
          await transport.terminateSession().catch(() => {});
          await client.close();
        },
      };
    },
    stop: async () => {
      // The workbench's own shutdown deadline is 8 s; SIGKILL only after that.
      await stopChild(child, 10_000);
      const [code] = await exited;
      await cleanup();
      return code;
    },
  };
}

/** Runs the CLI to completion (for start-up refusals); never sends any traffic. */
export async function runWorkbench(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stderr: string; stdout: string }> {
  const { dir, cleanup } = await tempDir('wb-http-');
  const { child, stderr, stdout } = spawnCli(args, dir, env);
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const [code] = (await once(child, 'exit')) as [number | null];
  clearTimeout(timer);
  await cleanup();
  return { code, stderr: stderr(), stdout: stdout() };
}

/** `node dist/cli/main.js …args` in `dir`, with its state file there too (never the real home); output collected. */
function spawnCli(args: string[], dir: string, env: Record<string, string>): { child: ChildProcess; stderr: () => string; stdout: () => string } {
  const child = spawn(node, [paths.cli, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? dir, WORKBENCH_STATE_FILE: join(dir, 'tool-state.json'), MCP_WORKBENCH_CACHE_DIR: join(dir, 'catalog-cache'), ...env },
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  return { child, stderr: () => stderr, stdout: () => stdout };
}
