import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport, type ClientCapabilities } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { startHttpWorkbench, type HttpWorkbench } from './http-workbench.js';
import { node, paths, tempDir } from './workbench-process.js';

export const ERAS = ['legacy', 'modern'] as const;
export type EraName = (typeof ERAS)[number];
export type Over = 'stdio' | 'http';

/** The built workbench with SDK v2 clients pinned to a protocol era, over stdio or HTTP. */
export interface EraWorkbench {
  /** The first client, connected at start. */
  client: Client;
  /** Another client of the same era (over HTTP a session of its own; over stdio, unsupported: it throws). */
  another(capabilities?: ClientCapabilities): Promise<Client>;
  dir: string;
  /** The config file it serves (in `dir`): a test edits it to reload. */
  configPath: string;
  stderr(): string;
  /** The workbench process's pid (a test signals it). */
  pid: number;
  close(): Promise<void>;
}

/** How the workbench process is started besides its config: CLI arguments after `serve --config <file>`, and env. */
export interface EraLaunch {
  args?: string[];
  /** Added to (and overriding) the defaults: PATH, HOME, a state file and catalog cache in the temp dir. */
  env?: Record<string, string>;
}

/** A v2 SDK client pinned to `era` (no probe: the legacy era is given as known). */
export function eraClient(era: EraName, capabilities: ClientCapabilities = {}): Client {
  return new Client({ name: `test-${era}`, version: '1.0.0' }, { capabilities, versionNegotiation: { mode: era === 'modern' ? { pin: '2026-07-28' } : 'legacy' } });
}

/** An `era` client of the `--http` workbench at `url`, connected with `token` as its bearer (one user of several). */
export async function tokenClient(url: string, token: string, era: EraName): Promise<Client> {
  const client = eraClient(era);
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  await client.connect(transport, era === 'legacy' ? { prior: { kind: 'legacy' } } : undefined);
  return client;
}

/**
 * Starts the built workbench with `config` (serve over stdio, or `--http 0`) and connects an `era` client to it. The
 * state file and catalog cache live in the test's temp dir unless `launch.env` names others. `setup` runs on the client
 * before it connects (handlers).
 */
export async function startEra(
  over: Over,
  era: EraName,
  config: unknown,
  setup: (client: Client) => void = () => {},
  capabilities: ClientCapabilities = {},
  launch: EraLaunch = {},
): Promise<EraWorkbench> {
  const connect = async (client: Client, transport: StdioClientTransport | StreamableHTTPClientTransport): Promise<Client> => {
    setup(client);
    await client.connect(transport, era === 'legacy' ? { prior: { kind: 'legacy' } } : undefined);
    return client;
  };
  if (over === 'http') {
    const wb: HttpWorkbench = await startHttpWorkbench(config, ['--http', '0', ...(launch.args ?? [])], launch.env);
    const clients: Client[] = [];
    const open = async (caps = capabilities): Promise<Client> => {
      const client = await connect(eraClient(era, caps), new StreamableHTTPClientTransport(new URL(wb.url)));
      clients.push(client);
      return client;
    };
    const client = await open();
    return {
      client,
      another: open,
      dir: wb.dir,
      configPath: wb.configPath,
      stderr: wb.stderr,
      pid: wb.pid,
      close: async () => {
        await Promise.allSettled(clients.map((c) => c.close()));
        await wb.stop();
      },
    };
  }
  const { dir, cleanup } = await tempDir('wb-era-');
  const configPath = join(dir, 'workbench-config.json');
  await writeFile(configPath, JSON.stringify(config, null, 2));
  const transport = new StdioClientTransport({
    command: node,
    args: [paths.cli, 'serve', '--config', configPath, ...(launch.args ?? [])],
    cwd: dir,
    stderr: 'pipe',
    env: { PATH: process.env.PATH ?? '', HOME: dir, WORKBENCH_STATE_FILE: join(dir, 'tool-state.json'), MCP_WORKBENCH_CACHE_DIR: join(dir, 'catalog-cache'), ...launch.env },
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = await connect(eraClient(era, capabilities), transport);
  return {
    client,
    another: () => Promise.reject(new Error('a stdio workbench serves one client')),
    dir,
    configPath,
    stderr: () => stderr,
    pid: transport.pid!,
    close: async () => {
      await client.close().catch(() => {});
      await cleanup();
    },
  };
}

/** Polls until `predicate` holds (or 15 s pass); returns whether it held. */
export async function until(predicate: () => boolean, ms = 15_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!predicate() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  return predicate();
}
